"""Every command of the READMEs' headless examples (both languages) runs as written,
through bash, against the loopback fixture server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reasonix_testkit import Reply
from tests.conftest import TEST_KEY, TEST_KEY_ENV, write_config

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = {"README.md": "## Headless runs", "README.zh-CN.md": "## 无界面运行"}


def examples(readme: str) -> list[str]:
    text = (ROOT / readme).read_text(encoding="utf-8")
    section = text[text.index(SECTIONS[readme]) :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def project(workspace: Path) -> None:
    """A repository with an uncommitted change, the files the examples name, a command."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text('print("hi")\n')
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_api.py").write_text("def test_api():\n    assert True\n")
    (workspace / "README.md").write_text("# Demo\n")
    subprocess.run([*git, "add", "."], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=workspace, check=True)
    (workspace / "src" / "app.py").write_text('print("hi"\n')
    commands = workspace / ".reasonix" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $1 for bugs.\n")


@pytest.mark.parametrize("readme", list(SECTIONS))
def test_readme_headless_examples_run(readme, workspace, home, server):
    write_config(home, server.base_url)
    project(workspace)
    lines = examples(readme)
    assert len(lines) >= 7
    env = dict(os.environ, **{TEST_KEY_ENV: TEST_KEY})
    define = f'reasonix() {{ "{sys.executable}" -m reasonix_tui.cli "$@"; }}; '
    for line in lines:
        server.enqueue(Reply(content="ok"))
        before = len(server.requests)
        proc = subprocess.run(
            ["bash", "-c", define + line],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, (line, proc.stderr)
        assert len(server.requests) == before + 1, line
        body = json.loads(server.requests[-1].body)
        user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        if line.startswith("git diff |"):
            assert "diff --git a/src/app.py b/src/app.py" in user
        if "/review src/app.py" in line:
            assert user.startswith("Review src/app.py for bugs.")
            assert json.loads(proc.stdout)["result"] == "ok"
        if " -c " in line:
            assert len([m for m in body["messages"] if m["role"] == "user"]) > 1
    assert (workspace / "run.json").is_file()  # --metrics run.json
