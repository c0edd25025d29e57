"""Plugin 18."""

NAME = "plugin-18"


def run(value):
    return value + 18
