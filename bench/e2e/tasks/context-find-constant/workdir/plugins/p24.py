"""Plugin 24."""

NAME = "plugin-24"


def run(value):
    return value + 24
