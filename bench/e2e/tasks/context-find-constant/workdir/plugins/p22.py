"""Plugin 22."""

NAME = "plugin-22"


def run(value):
    return value + 22
