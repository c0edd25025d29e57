"""Layout in a real terminal (issue 30, item 6): tmux runs ``python -m reasonix_tui``
against the loopback fixture. At 80 and 60 columns /help and the / menu keep their
columns (a description that wraps goes on under its own column, never back to the
left edge); the Shift+Tab toast shows above the composer and leaves the composer and
the status bar whole; the welcome box has the composer's edges."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tmux_session import TmuxPane, fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks


def settled(pane: TmuxPane, needle: str, timeout: float = 60.0) -> list[str]:
    """The screen once ``needle`` is on it and two captures in a row agree."""
    pane.wait_for(needle, timeout)
    deadline = time.monotonic() + timeout
    last = pane.screen()
    while time.monotonic() < deadline:
        time.sleep(0.3)
        screen = pane.screen()
        if screen == last and needle in screen:
            return screen.splitlines()
        last = screen
    raise AssertionError(f"the screen never settled:\n{last}")


def start(column: str, line: str) -> int:
    return line.index(column)


def row(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if text in line)


def left_edge(line: str) -> int:
    return len(line) - len(line.lstrip(" │"))


@pytest.mark.parametrize("width", [80, 60])
def test_help_and_the_slash_menu_keep_their_columns(tmp_path: Path, width: int) -> None:
    with (
        fixture_provider(tmp_path) as provider,
        reasonix_in_tmux(provider, name="reasonix-layout", width=width, height=24) as pane,
    ):
        pane.wait_for("ask  ready")
        # The / menu: every description starts in one column; /goal's long usage has
        # a line of its own and its description goes on under that column.
        pane.send_keys("/")
        lines = settled(pane, "/fork")
        column = start("Show commands and keys", lines[row(lines, "/help ")])
        for name, text in [("/new", "Start a fresh"), ("/compact", "Fold the history")]:
            assert start(text, lines[row(lines, name)]) == column, "\n".join(lines)
        after = lines[row(lines, "/compact") + 1]
        if not after.lstrip().startswith("/"):  # its description went on (at 60)
            assert left_edge(after) == column, "\n".join(lines)
        pane.send_keys("g")
        lines = settled(pane, "/goal <objective>")
        below = lines[row(lines, "/goal <objective>") + 1]
        column = start("Set or replace", lines[row(lines, "/login")])
        assert start("Start a goal", below) == column, "\n".join(lines)
        pane.send_keys("BSpace", "BSpace")
        pane.wait_for_gone("/goal <objective>")
        # /help: a description that wraps goes on under its column.
        pane.send_keys("/help", "Enter")
        lines = settled(pane, "Esc close")  # the hint stays on screen at 24 rows
        desc = start("Fold the history now", lines[row(lines, "/compact")])
        assert start("Show commands and keys", lines[row(lines, "/help ")]) == desc
        after = lines[row(lines, "/compact") + 1]
        continued = after.strip(" │")
        if continued and "/" not in continued.split()[0]:  # the description went on
            assert left_edge(after) == desc, "\n".join(lines)
        for line in lines[row(lines, "Commands") + 1 : row(lines, "Esc close")]:
            text = line.strip(" │▁▂▃▄▅▆▇█")
            if text:  # a command's name, or a description's line under its column
                assert left_edge(line) in (left_edge(lines[row(lines, "/help ")]), desc), line
        pane.send_keys("Escape")
        pane.wait_for_gone("Esc close")
        pane.send_keys("C-d")


@pytest.mark.parametrize("size", [(80, 24), (140, 40)])
def test_the_mode_toast_leaves_composer_and_status_bar_whole(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    width, height = size
    with (
        fixture_provider(tmp_path) as provider,
        reasonix_in_tmux(provider, name="reasonix-toast", width=width, height=height) as pane,
    ):
        pane.wait_for("ask  ready")
        before = pane.screen().splitlines()
        top = row(before, "Ask Reasonix") - 1  # the composer's top border
        # The welcome box has the composer's left and right edges.
        welcome = before[row(before, "Reasonix  ·")]
        composer_line = before[top + 1]
        assert welcome.index("│") == composer_line.index("│")
        assert welcome.rstrip().rindex("│") == composer_line.rstrip().rindex("│")
        pane.send_keys("BTab", "BTab")  # ask -> auto -> plan
        lines = settled(pane, "▌ Mode")
        toast = [i for i, line in enumerate(lines) if "Mode" in line and "▌" in line]
        assert len(toast) == 1, "\n".join(lines)  # one toast: the second replaced the first
        # Nothing of the toast on or under the composer: its three rows and the
        # status bar's two read as they did before the toast.
        assert all("▌" not in line for line in lines[top:]), "\n".join(lines)
        assert lines[top] == before[top] and lines[top + 2] == before[top + 2]
        assert "Ask Reasonix" in lines[top + 1] and lines[top + 1].rstrip().endswith("│")
        assert "● plan  ready" in lines[top + 3] and "deepseek-flash" in lines[top + 3]
        assert lines[top + 4].startswith(" ctx ")
        assert toast[0] < top
        pane.send_keys("C-d")
