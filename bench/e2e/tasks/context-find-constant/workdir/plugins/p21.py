"""Plugin 21."""

NAME = "plugin-21"


def run(value):
    return value + 21
