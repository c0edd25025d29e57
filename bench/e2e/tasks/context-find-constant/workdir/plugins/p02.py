"""Plugin 02."""

NAME = "plugin-02"


def run(value):
    return value + 2
