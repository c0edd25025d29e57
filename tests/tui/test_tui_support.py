"""Import hygiene, key storage, logging and transcript bounds."""

from __future__ import annotations

import logging
import stat
import subprocess
import sys
from pathlib import Path

from tui_helpers import session

from reasonix_core.config.secrets import save_api_key
from reasonix_core.home import reasonix_home
from reasonix_tui.logs import setup_file_logging
from reasonix_tui.widgets.blocks import NoticeBlock


def test_package_import_does_not_load_textual() -> None:
    code = (
        "import sys, reasonix_tui, reasonix_tui.services, reasonix_tui.commands, "
        "reasonix_core.home, reasonix_tui.format, reasonix_core.command; "
        "assert 'textual' not in sys.modules, 'textual imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_save_api_key_is_private_and_keeps_other_lines(tmp_path: Path) -> None:
    # reasonix_tui/paths.py, a weaker copy of these two, is gone: the core owns them.
    home = tmp_path / "h"
    home.mkdir()
    (home / ".env").write_text("OTHER=1\nDEEPSEEK_API_KEY=old\n")
    path = save_api_key("DEEPSEEK_API_KEY", "sk-new", home)
    assert path.read_text() == "OTHER=1\nDEEPSEEK_API_KEY=sk-new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_reasonix_home_override(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path / "rh"))
    assert reasonix_home() == tmp_path / "rh"


def test_file_logging_never_streams(tmp_path: Path) -> None:
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    try:
        root.addHandler(logging.StreamHandler())
        path = setup_file_logging(tmp_path)
        logging.getLogger("reasonix_tui.test").warning("hello log")
        assert path == tmp_path / "logs" / "reasonix.log"
        assert "hello log" in path.read_text()
        assert not any(type(h) is logging.StreamHandler for h in root.handlers)
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])


async def test_transcript_keeps_a_bounded_number_of_blocks(make_app) -> None:
    app, _ = make_app()
    async with app.run_test(size=(100, 32)) as pilot:
        transcript = session(pilot).transcript
        transcript.max_blocks = 20
        for i in range(50):
            await transcript.add(NoticeBlock(f"n{i}"))
        assert len(transcript.blocks) == 20
        assert transcript.trimmed == 31  # 50 notices + the welcome block - 20
        assert "31 earlier blocks hidden" in str(transcript.children[0].render())
