"""Plugin 28."""

NAME = "plugin-28"


def run(value):
    return value + 28
