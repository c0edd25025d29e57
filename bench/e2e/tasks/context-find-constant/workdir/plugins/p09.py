"""Plugin 09."""

NAME = "plugin-09"


def run(value):
    return value + 9
