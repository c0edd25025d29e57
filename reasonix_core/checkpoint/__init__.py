"""Checkpoints of the workspace and rewind (docs/REWIND.md).

Kept import-free: the command line reads :data:`SCOPES` while it builds its parser.
"""

#: What ``reasonix rewind --scope`` takes: the files, the conversation, or both.
SCOPES: tuple[str, ...] = ("code", "chat", "both")
