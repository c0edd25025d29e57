"""Start and quit (issue 30 item 9): how to continue after exit; `-c` with nothing
to continue says so."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from tui_helpers import send, session, settle

from reasonix_testkit.tui import text_steps
from reasonix_tui.widgets.blocks import NoticeBlock


async def test_the_app_remembers_the_session_to_continue_after_exit(make_app) -> None:
    from reasonix_tui.app import continue_hint

    app, _ = make_app([text_steps("Hello.")])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hi")
        await settle(pilot)
        session_id = session(pilot).runner.session_id
    assert app.session_id == session_id
    hint = continue_hint(session_id)
    assert "reasonix -c" in hint and f"reasonix -r {session_id}" in hint
    assert all(len(line) <= 80 for line in hint.splitlines())
    assert "`" not in hint


def test_continue_with_no_session_says_so_and_starts_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reasonix_tui.app
    from reasonix_tui.launch import NO_SESSION_TO_CONTINUE, launch

    seen: list[object] = []

    def fake_run_app(services) -> int:  # type: ignore[no-untyped-def]
        seen.append(services)
        return 0

    monkeypatch.setattr(reasonix_tui.app, "run_app", fake_run_app)
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path / "home"))
    (tmp_path / "ws").mkdir()
    monkeypatch.chdir(tmp_path / "ws")
    args = argparse.Namespace(
        model=None, effort=None, permission_mode=None, continue_last=True, resume_id=None
    )
    assert launch(args) == 0
    services = seen[0]
    assert services.startup_notes == (NO_SESSION_TO_CONTINUE,)  # type: ignore[attr-defined]
    assert services._saved is None  # type: ignore[attr-defined]  # no session drawn


async def test_startup_notes_show_in_the_transcript(make_app) -> None:
    app, services = make_app([])
    services.startup_notes = ("No earlier session in this folder to continue (-c): new.",)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        texts = [str(n.text) for n in session(pilot).query(NoticeBlock)]
    assert any("No earlier session" in t for t in texts)


def test_the_exit_hint_offers_c_only_for_the_newest_session(tmp_path: Path) -> None:
    """Two sessions in one folder: quitting the older one must not point at ``-c``,
    which opens the newer."""
    import os

    from reasonix_core.agent.session import newest_session_id, session_dir
    from reasonix_tui.app import _is_newest, continue_hint

    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    folder = session_dir(home / "sessions", workspace)
    folder.mkdir(parents=True)
    older, newer = "20261208-010000-aaaaaa", "20261208-020000-bbbbbb"
    (folder / f"{older}.jsonl").write_text("{}\n")
    (folder / f"{newer}.jsonl").write_text("{}\n")
    os.utime(folder / f"{older}.jsonl", (1_000, 1_000))
    os.utime(folder / f"{newer}.jsonl", (2_000, 2_000))
    assert newest_session_id(home / "sessions", workspace) == newer

    class Services:
        config_home = home

    Services.workspace = workspace  # type: ignore[attr-defined]
    assert _is_newest(Services, newer)  # type: ignore[arg-type]
    assert not _is_newest(Services, older)  # type: ignore[arg-type]
    hint = continue_hint(older, newest=False)
    assert "reasonix -c" not in hint
    assert f"Continue it with: reasonix -r {older}" in hint
    assert "reasonix -c" in continue_hint(newer, newest=True)
    # The older one written last is the newest again: -c opens it.
    os.utime(folder / f"{older}.jsonl", (3_000, 3_000))
    assert _is_newest(Services, older)  # type: ignore[arg-type]
