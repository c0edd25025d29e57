"""Where Reasonix keeps its user files (stdlib only: the TUI needs it before its first frame)."""

from __future__ import annotations

import os
from pathlib import Path

#: The folder under the home that holds every saved fact (both scopes).
MEMORY_DIR = "memory"


def reasonix_home() -> Path:
    """Reasonix's home: ``$REASONIX_HOME``, else ``~/.reasonix`` (``%APPDATA%\\reasonix``)."""
    env = os.environ.get("REASONIX_HOME")
    if env:
        return Path(env).expanduser()
    if os.name == "nt":
        appdata = os.environ.get("APPDATA")
        if appdata:
            return Path(appdata) / "reasonix"
    return Path.home() / ".reasonix"
