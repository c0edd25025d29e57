"""Plugin 10."""

NAME = "plugin-10"


def run(value):
    return value + 10
