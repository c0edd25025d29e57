NAME = "alpha-plugin"
