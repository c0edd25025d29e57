"""Plugin 14."""

NAME = "plugin-14"


def run(value):
    return value + 14
