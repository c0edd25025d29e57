"""Plugin 11."""

NAME = "plugin-11"


def run(value):
    return value + 11
