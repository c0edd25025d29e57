"""Plugin 04."""

NAME = "plugin-04"


def run(value):
    return value + 4
