"""Plugin 19."""

NAME = "plugin-19"


def run(value):
    return value + 19
