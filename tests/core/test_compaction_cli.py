"""``reasonix config compact-ratio`` and ``reasonix compact``."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from reasonix_core.agent.session import checkpoint_path, list_sessions
from reasonix_tui.cli import main
from tests.core.compaction_helpers import (
    ScriptedModel,
    is_summary_request,
    make_files,
    read,
    small_window_config,
    use_key,
)


@pytest.fixture
def in_workspace(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("REASONIX_TOKENIZER", "heuristic")
    return workspace


def test_compact_ratio_show_default(in_workspace, capsys):
    assert main(["config", "compact-ratio"]) == 0
    assert "compact_ratio = 0.80 (built-in default)" in capsys.readouterr().out


def test_compact_ratio_user_then_project_wins(in_workspace, home, capsys):
    assert main(["config", "compact-ratio", "0.7"]) == 0
    out = capsys.readouterr().out
    assert f"compact_ratio = 0.70 ({home / 'config.toml'})" in out
    assert tomllib.loads((home / "config.toml").read_text())["agent"]["compact_ratio"] == 0.7

    assert main(["config", "compact-ratio", "--local", "60%"]) == 0
    project = in_workspace / "reasonix.toml"
    assert tomllib.loads(project.read_text())["agent"]["compact_ratio"] == 0.6
    assert f"compact_ratio = 0.60 ({project})" in capsys.readouterr().out

    # Setting the user value again: the project file still decides, and says so.
    assert main(["config", "compact-ratio", "0.85"]) == 0
    out = capsys.readouterr().out
    assert f"compact_ratio = 0.60 ({project})" in out
    assert "takes precedence" in out
    assert main(["config", "compact-ratio"]) == 0
    assert "0.60" in capsys.readouterr().out


def test_compact_ratio_out_of_range_is_refused(in_workspace, home, capsys):
    (home / "config.toml").write_text("# keep me\n[agent]\ncompact_ratio = 0.8\n")
    assert main(["config", "compact-ratio", "0.9"]) == 2
    assert "between 0.30 and 0.85" in capsys.readouterr().err
    assert (home / "config.toml").read_text() == "# keep me\n[agent]\ncompact_ratio = 0.8\n"
    assert main(["config", "compact-ratio", "lots"]) == 2


def test_compact_command_folds_the_newest_session(in_workspace, home, server, monkeypatch, capsys):
    use_key(monkeypatch)
    small_window_config(home, server.base_url, window=20_000)  # never compacts on its own
    names = make_files(in_workspace, [1600] * 8)
    model = ScriptedModel([read(n) for n in names], summary="CLI DIGEST")
    server.responder = model
    assert main(["run", "read the files"]) == 0
    assert model.summary_requests == []
    capsys.readouterr()

    assert main(["compact"]) == 0
    out = capsys.readouterr().out
    assert "compacted" in out
    assert len(model.summary_requests) == 1
    session = list_sessions(home / "sessions", in_workspace)[0]
    sidecar = json.loads(checkpoint_path(session.path).read_text())
    assert sidecar["checkpoint"]["kind"] == "summary"
    assert sidecar["checkpoint"]["reason"] == "manual"

    # The next run continues from the checkpoint.
    assert main(["run", "-c", "what next?"]) == 0
    last = json.loads(server.requests[-1].body)
    assert not is_summary_request(server.requests[-1])
    assert "CLI DIGEST" in last["messages"][1]["content"]

    assert main(["compact", "-r", "no-such-session"]) == 2


async def test_tui_engine_compact_and_effective_ratio(workspace, home, server, monkeypatch):
    import anyio

    from reasonix_core import events as ev
    from reasonix_core.permission.approver import FailClosedApprover
    from reasonix_tui.engine import EngineServices

    monkeypatch.setenv("REASONIX_TOKENIZER", "heuristic")
    use_key(monkeypatch)
    small_window_config(home, server.base_url, window=20_000)
    (workspace / "reasonix.toml").write_text("[agent]\ncompact_ratio = 0.7\n")
    names = make_files(workspace, [1600] * 10)
    model = ScriptedModel([read(n) for n in names], summary="TUI DIGEST")
    server.responder = model
    services = EngineServices(workspace, home=home)
    assert services.compact_ratio == 0.7
    async with anyio.create_task_group() as tg:
        tg.start_soon(services.serve)
        runner = services.new_runner(FailClosedApprover())
        turn = [e async for e in runner.run("read")]
        assert isinstance(turn[-1], ev.TurnFinished)
        events = [e async for e in runner.compact()]
        tg.cancel_scope.cancel()
    assert [
        type(e).__name__
        for e in events
        if isinstance(e, ev.CompactionStarted | ev.CompactionFinished)
    ] == [
        "CompactionStarted",
        "CompactionFinished",
    ]
    assert [e.reason for e in events if isinstance(e, ev.PrefixChanged)] == ["compact_manual"]
    assert len(model.summary_requests) == 1


def test_compact_with_nothing_to_compact_says_so_and_sends_nothing(
    in_workspace, home, server, monkeypatch, capsys
):
    """Issue 30 item 8: a short session, or one compacted with nothing new since, is
    answered with the compaction planner's one line; no summary request, no hook."""
    use_key(monkeypatch)
    small_window_config(home, server.base_url, window=20_000)
    names = make_files(in_workspace, [1600] * 8)
    model = ScriptedModel([read(n) for n in names], summary="CLI DIGEST")
    server.responder = model
    assert main(["run", "read the files"]) == 0
    capsys.readouterr()
    assert main(["compact"]) == 0
    assert len(model.summary_requests) == 1
    capsys.readouterr()
    requests = len(server.requests)

    assert main(["compact"]) == 1  # nothing new since the summary: not compacted
    captured = capsys.readouterr()
    assert captured.err.count("Nothing to compact yet: ") == 1, captured.err
    assert "not compacted" in captured.out
    assert len(server.requests) == requests  # nothing was sent


def test_a_fresh_session_has_nothing_to_compact(in_workspace, home, server, monkeypatch, capsys):
    use_key(monkeypatch)
    small_window_config(home, server.base_url, window=20_000)
    server.responder = ScriptedModel([], summary="never")
    assert main(["run", "hi"]) == 0
    capsys.readouterr()
    requests = len(server.requests)
    assert main(["compact"]) == 1
    err = capsys.readouterr().err
    assert "Nothing to compact yet: the conversation is short enough to keep whole" in err
    assert err.count("Nothing to compact") == 1
    assert len(server.requests) == requests
