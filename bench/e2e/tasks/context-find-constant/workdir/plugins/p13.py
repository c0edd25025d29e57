"""Plugin 13."""

NAME = "plugin-13"


def run(value):
    return value + 13
