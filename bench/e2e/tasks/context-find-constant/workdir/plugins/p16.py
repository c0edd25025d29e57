"""Plugin 16."""

NAME = "plugin-16"


def run(value):
    return value + 16
