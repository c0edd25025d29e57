"""Where Reasonix keeps user files, and the first-run key writer (no Textual)."""

from __future__ import annotations

import os
from pathlib import Path

API_KEY_NAME = "DEEPSEEK_API_KEY"


def reasonix_home() -> Path:
    """``$REASONIX_HOME`` if set, else ``~/.reasonix``."""
    override = os.environ.get("REASONIX_HOME")
    return Path(override).expanduser() if override else Path.home() / ".reasonix"


def write_api_key(home: Path, key: str, name: str = API_KEY_NAME) -> Path:
    """Set ``name=key`` in ``<home>/.env`` (other lines kept), mode 0600."""
    key = key.strip()
    if not key or any(c.isspace() for c in key):
        raise ValueError("the key must be one word without spaces")
    home.mkdir(parents=True, exist_ok=True)
    env = home / ".env"
    lines: list[str] = []
    if env.exists():
        lines = [
            line
            for line in env.read_text(encoding="utf-8").splitlines()
            if not line.strip().startswith(f"{name}=")
        ]
    lines.append(f"{name}={key}")
    fd = os.open(env, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(env, 0o600)
    return env
