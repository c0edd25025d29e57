"""Plugin 15."""

NAME = "plugin-15"


def run(value):
    return value + 15
