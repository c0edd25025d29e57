"""Plugin 23."""

NAME = "plugin-23"


def run(value):
    return value + 23


SECRET_SAUCE_VERSION = "4.2.7"
