"""Built-in tools. Each module registers itself on import."""
