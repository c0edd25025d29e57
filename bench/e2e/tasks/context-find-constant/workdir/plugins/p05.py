"""Plugin 05."""

NAME = "plugin-05"


def run(value):
    return value + 5
