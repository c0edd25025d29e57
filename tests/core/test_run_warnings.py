"""`reasonix run`'s warnings reach a script in every output format (issue 29 item 8):
the real CLI against the loopback fixture server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_testkit import Reply
from tests.conftest import reasonix, write_config


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def broken_skill(workspace: Path) -> str:
    """A project skill that discovery skips; the folder part of its warning."""
    folder = workspace / ".reasonix" / "skills" / "broken"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00junk")
    return "/broken/SKILL.md"


def skipped(lines: list[str], marker: str) -> list[str]:
    return [line for line in lines if marker in line and "skipped" in line]


def test_json_result_lists_the_skipped_skill_warnings_and_stderr_says_them(workspace, cfg):
    marker = broken_skill(workspace)
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "hi", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["subtype"] == "success"
    assert len(skipped(result["warnings"], marker)) == 1, result.get("warnings")
    # The same words on stderr as text mode prints them.
    assert len(skipped(proc.stderr.splitlines(), marker)) == 1, proc.stderr
    assert any(line.startswith("warning: skill file") for line in proc.stderr.splitlines())


def test_stream_json_result_line_lists_the_warnings(workspace, cfg):
    marker = broken_skill(workspace)
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "hi", "--output-format", "stream-json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    notices = [line for line in lines if line.get("subtype") == "notice"]
    assert len(skipped([n["text"] for n in notices], marker)) == 1
    result = lines[-1]
    assert result["type"] == "result"
    assert len(skipped(result["warnings"], marker)) == 1
    # stdout stays JSON lines only; stderr carries the human line.
    assert len(skipped(proc.stderr.splitlines(), marker)) == 1, proc.stderr


def test_text_output_still_warns_once_on_stderr(workspace, cfg):
    marker = broken_skill(workspace)
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    assert len(skipped(proc.stderr.splitlines(), marker)) == 1, proc.stderr


def test_a_clean_run_has_an_empty_warnings_list(workspace, cfg):
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "hi", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["warnings"] == []
    assert "warning" not in proc.stderr


def test_a_refused_mention_is_a_result_warning(workspace, cfg, home):
    # The Reasonix home is never attached: the refusal is a warning, not a failure.
    secret = home / "config.toml"
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", f"look at @{secret}", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [w for w in result["warnings"] if "config.toml" in w], result["warnings"]
    assert "config.toml" in proc.stderr
