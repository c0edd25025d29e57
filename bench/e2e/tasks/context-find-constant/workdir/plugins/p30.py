"""Plugin 30."""

NAME = "plugin-30"


def run(value):
    return value + 30
