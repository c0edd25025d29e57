NAME = "bravo-plugin"
