"""Issue 29 item 4: ``~/.reasonix`` is 0700 and nothing in it is readable by
other local users (sessions, their sidecars and lock, checkpoints and the shadow
store, memory, logs); an existing home is fixed on start."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config


def loose(home: Path) -> list[str]:
    """Everything under ``home`` (itself included) that group or others may use."""
    out = []
    for path in [home, *home.rglob("*")]:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            continue
        if st.st_mode & 0o077:
            out.append(f"{oct(st.st_mode & 0o777)} {path.relative_to(home.parent)}")
    return out


def test_a_run_leaves_nothing_readable_by_others(workspace, home, server):
    os.chmod(home, 0o755)  # what `mkdir` and the old `reasonix setup` made
    write_config(home, server.base_url)
    server.enqueue(
        Reply(tool_calls=[ToolCallSpec("write_file", '{"path":"a.txt","content":"hi\\n"}')]),
        Reply(content="written"),
    )
    proc = reasonix(workspace, "run", "write a.txt", "--permission-mode", "yolo")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "a.txt").read_text() == "hi\n"
    sessions = list((home / "sessions").rglob("*.jsonl"))
    assert sessions and list((home / "sessions").rglob("*.requests.ndjson"))
    assert list((home / "sessions").rglob("*.rewind"))  # the shadow store was used
    assert loose(home) == [], "\n".join(loose(home))
    # The workspace's own files keep the user's usual modes.
    assert (workspace / "a.txt").stat().st_mode & 0o044 == 0o044


def test_an_existing_home_is_fixed_on_start(workspace, home, server):
    write_config(home, server.base_url)
    old = home / "sessions" / "ws-key"
    old.mkdir(parents=True, mode=0o755)
    os.chmod(home / "sessions", 0o755)
    (old / "20250101-000000-abcdef.jsonl").write_text("{}\n")
    (home / "memory").mkdir(mode=0o755)
    (home / "memory" / "fact.md").write_text("a fact\n")
    hook = home / "bin-hook.sh"
    hook.write_text("#!/bin/sh\n")
    for path in (old / "20250101-000000-abcdef.jsonl", home / "memory" / "fact.md"):
        os.chmod(path, 0o644)
    os.chmod(hook, 0o755)
    os.chmod(home / "config.toml", 0o644)
    os.chmod(home, 0o755)
    assert loose(home)
    server.enqueue(Reply(content="ok"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert loose(home) == [], "\n".join(loose(home))
    assert hook.stat().st_mode & 0o777 == 0o700  # its owner may still run it
    # Once fixed, a start checks the top folder only (no walk of a large store):
    # the home itself is fixed again if something loosened it.
    os.chmod(home, 0o755)
    server.enqueue(Reply(content="ok"))
    assert reasonix(workspace, "run", "hi").returncode == 0
    assert home.stat().st_mode & 0o777 == 0o700


def test_setup_makes_a_private_home(workspace, home, tmp_path):
    fresh = tmp_path / "fresh-home"
    proc = reasonix(workspace, "setup", "moonshot", env={"REASONIX_HOME": str(fresh)})
    assert proc.returncode == 0, proc.stderr
    assert (fresh / "config.toml").is_file()
    assert loose(fresh) == [], "\n".join(loose(fresh))
