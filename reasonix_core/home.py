"""Where Reasonix keeps its user files (stdlib only: the TUI needs it before its first frame)."""

from __future__ import annotations

import os
from pathlib import Path

from reasonix_core.fsutil import PRIVATE_DIR, open_private, private_tree

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


#: Written in the home once every folder and file in it was made private: later
#: starts check the home folder alone, never walk a large session store again.
PRIVATE_MARK = ".private"


def secure_home(home: Path | None = None) -> None:
    """Make Reasonix's home private to its user (issue 29 item 4): the folder
    0700 on every start (one stat), and, once, everything already in it (an
    older version made sessions 0644 in 0755 folders): folders 0700, files
    without group and other bits (an owner's executable stays executable).
    New files are made private where they are created (``fsutil``). Best
    effort: a home this user cannot change is left as it is."""
    if os.name == "nt":
        return
    home = home or reasonix_home()
    try:
        st = os.stat(home)
    except OSError:
        return  # not made yet: whoever makes it makes it private
    try:
        if st.st_mode & 0o077:
            os.chmod(home, PRIVATE_DIR)
        if os.path.exists(home / PRIVATE_MARK):
            return
        private_tree(home)
        open_private(home / PRIVATE_MARK, "w").close()
    except OSError:
        return
