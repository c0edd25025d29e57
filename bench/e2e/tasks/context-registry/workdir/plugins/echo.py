NAME = "echo-plugin"
