"""Plugin 03."""

NAME = "plugin-03"


def run(value):
    return value + 3
