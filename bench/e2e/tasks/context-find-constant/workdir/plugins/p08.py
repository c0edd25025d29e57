"""Plugin 08."""

NAME = "plugin-08"


def run(value):
    return value + 8
