"""A session file as a faulty disk or a hostile hand leaves it: a record nested
100,000 deep, a torn last line that ends in a newline. Through the real CLI
against the loopback fixture server."""

from __future__ import annotations

import json

import pytest

from reasonix_testkit import Reply
from tests.conftest import reasonix, write_config

DEEP = 100_000


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def _session(home):
    (path,) = (home / "sessions").glob("*/*.jsonl")
    return path


def _contents(path) -> list[str]:
    out = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "message":
            out.append(record["message"].get("content"))
    return out


def test_a_deeply_nested_record_is_skipped_with_an_error_naming_its_line(workspace, cfg, home):
    cfg.enqueue(Reply(content="one"))
    assert reasonix(workspace, "run", "first").returncode == 0
    path = _session(home)
    deep_line = len(path.read_text().splitlines()) + 1
    with path.open("a") as fh:
        fh.write('{"type":"message","message":' + "[" * DEEP + "]" * DEEP + "}\n")
        fh.write('{"type":"note","text":"after the deep record"}\n')
    for argv in (("rewind", "--list"), ("cache", "-c")):
        proc = reasonix(workspace, *argv)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
        assert f"{path}:{deep_line}: " in proc.stderr, proc.stderr
        assert "nested deeper than" in proc.stderr
    cfg.enqueue(Reply(content="two"))
    proc = reasonix(workspace, "run", "-c", "again")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "two"
    assert f"{path}:{deep_line}: " in proc.stderr
    # The rest of the session is there: the model saw the first exchange.
    sent = [m.get("content") for m in json.loads(cfg.requests[-1].body)["messages"]]
    assert "one" in sent


def test_a_torn_last_line_with_its_newline_is_moved_aside_before_appending(
    workspace, cfg, home
):
    cfg.enqueue(Reply(content="one"))
    assert reasonix(workspace, "run", "first").returncode == 0
    path = _session(home)
    torn = '{"type":"message","message":{"role":"user","cont'
    with path.open("a") as fh:
        fh.write(torn + "\n")
    cfg.enqueue(Reply(content="two"))
    proc = reasonix(workspace, "run", "-c", "again")
    assert proc.returncode == 0, proc.stderr
    # Every line of the transcript is a record again, and the torn bytes are kept.
    assert all(isinstance(json.loads(line), dict) for line in path.read_text().splitlines())
    sidecar = path.with_name(path.name + ".torn")
    assert sidecar.read_text() == torn + "\n"
    assert "moved" in proc.stderr and str(sidecar) in proc.stderr, proc.stderr
    # And the session keeps working: -c, rewind and -r ID.
    cfg.enqueue(Reply(content="three"))
    proc = reasonix(workspace, "run", "-c", "third")
    assert proc.returncode == 0, proc.stderr
    assert reasonix(workspace, "rewind", "--list").returncode == 0
    cfg.enqueue(Reply(content="four"))
    proc = reasonix(workspace, "run", "-r", path.stem, "fourth")
    assert proc.returncode == 0, proc.stderr
    assert _contents(path)[-1] == "four"
    assert "one" in _contents(path) and "three" in _contents(path)


def test_an_unterminated_torn_tail_is_kept_in_the_sidecar_too(workspace, cfg, home):
    cfg.enqueue(Reply(content="one"))
    assert reasonix(workspace, "run", "first").returncode == 0
    path = _session(home)
    with path.open("a") as fh:
        fh.write('{"type":"message","message":{"role":"assistant","content":"half')
    cfg.enqueue(Reply(content="two"))
    assert reasonix(workspace, "run", "-c", "again").returncode == 0
    assert path.with_name(path.name + ".torn").read_text() == (
        '{"type":"message","message":{"role":"assistant","content":"half\n'
    )
    assert all(isinstance(json.loads(line), dict) for line in path.read_text().splitlines())
