"""Plugin 26."""

NAME = "plugin-26"


def run(value):
    return value + 26
