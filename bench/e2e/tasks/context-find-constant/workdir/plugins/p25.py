"""Plugin 25."""

NAME = "plugin-25"


def run(value):
    return value + 25
