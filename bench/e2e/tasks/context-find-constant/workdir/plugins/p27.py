"""Plugin 27."""

NAME = "plugin-27"


def run(value):
    return value + 27
