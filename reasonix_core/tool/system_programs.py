"""Programs Reasonix itself runs on the host, looked up in system directories only.

``PATH`` may hold folders a sandboxed command can write (an activated
``.venv/bin`` in the workspace), so a program found there could have been
planted by the model. Root-owned system directories cannot be written from
the sandbox.
"""

from __future__ import annotations

import os

#: Searched in this order.
SYSTEM_BIN_DIRS: tuple[str, ...] = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin")


def find_system_program(name: str, dirs: tuple[str, ...] = SYSTEM_BIN_DIRS) -> str | None:
    """The first executable ``name`` in ``dirs``, else None. PATH is never searched."""
    for directory in dirs:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None
