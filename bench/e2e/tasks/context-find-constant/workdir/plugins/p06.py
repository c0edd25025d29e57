"""Plugin 06."""

NAME = "plugin-06"


def run(value):
    return value + 6
