"""Plugin 01."""

NAME = "plugin-01"


def run(value):
    return value + 1
