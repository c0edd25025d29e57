NAME = "delta-plugin"
