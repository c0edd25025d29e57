"""Plugin 12."""

NAME = "plugin-12"


def run(value):
    return value + 12
