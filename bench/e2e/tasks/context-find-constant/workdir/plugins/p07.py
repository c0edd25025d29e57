"""Plugin 07."""

NAME = "plugin-07"


def run(value):
    return value + 7
