NAME = "foxtrot-plugin"
