"""Plugin 20."""

NAME = "plugin-20"


def run(value):
    return value + 20
