"""Plugin 29."""

NAME = "plugin-29"


def run(value):
    return value + 29
