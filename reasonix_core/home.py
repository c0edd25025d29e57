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


# Storage layout shared by the session store (agent/session.py), the fact store and
# the history search (memory/): here, below both, so memory/ does not import agent/.
def workspace_key(workspace: Path) -> str:
    """A readable, collision-safe folder name for a workspace path."""
    import hashlib
    import re

    text = str(workspace.resolve())
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[-48:] or "root"
    # A folder name that is not UTF-8 decodes to surrogates: hash its real bytes.
    digest = hashlib.sha256(os.fsencode(text)).hexdigest()[:8]
    return f"{slug}-{digest}"


def session_dir(sessions_root: Path, workspace: Path) -> Path:
    """The folder of one workspace's saved sessions."""
    return sessions_root / workspace_key(workspace)
