"""Plugin 17."""

NAME = "plugin-17"


def run(value):
    return value + 17
