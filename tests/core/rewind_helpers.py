"""Scripted sessions for the rewind tests: real tools, real files, the loopback fixture."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from reasonix_testkit import Reply, ToolCallSpec
from reasonix_tui.cli import main


def call(name: str, **args: object) -> ToolCallSpec:
    return ToolCallSpec(name, json.dumps(args))


def turn(server: object, prompt: str, *calls: ToolCallSpec, answer: str = "done") -> None:
    """One headless turn: each call in its own step, then ``answer``."""
    for spec in calls:
        server.enqueue(Reply(tool_calls=[spec]))  # type: ignore[attr-defined]
    server.enqueue(Reply(content=answer))  # type: ignore[attr-defined]
    home = Path(os.environ["REASONIX_HOME"])
    again = ["-c"] if any(home.glob("sessions/*/*.jsonl")) else []
    assert main(["run", "--permission-mode", "yolo", *again, prompt]) == 0


def state(root: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry under ``root`` (but .git and the tools' skipped folders):
    path -> (kind, bytes or link text, mode bits)."""
    out: dict[str, tuple[str, bytes | str, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and not os.path.islink(os.path.join(folder, d))]
        for name in files + [
            d
            for d in os.listdir(folder)
            if os.path.islink(os.path.join(folder, d)) and os.path.isdir(os.path.join(folder, d))
        ]:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = ("link", os.readlink(path), 0)
            else:
                out[rel] = ("file", Path(path).read_bytes(), stat.S_IMODE(info.st_mode))
    return out
