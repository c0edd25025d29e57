NAME = "charlie-plugin"
