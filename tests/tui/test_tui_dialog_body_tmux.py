"""A long diff in an approval scrolls from the keyboard in a real terminal (issue 30,
item 1, audit N2): at 80×24 the dialog says how many lines are out of view, PageDown
scrolls the diff (not the choices' highlight) and the answers stay on screen."""

from __future__ import annotations

from pathlib import Path

from test_tui_docked_dialogs_tmux import CONTENT, report_responder
from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

pytestmark = tmux_test_marks


def test_page_down_scrolls_the_diff_at_80x24(tmp_path: Path) -> None:
    with (
        fixture_provider(tmp_path, responder=report_responder) as provider,
        reasonix_in_tmux(provider, name="reasonix-dialog-body", width=80, height=24) as pane,
    ):
        pane.wait_for("Ask Reasonix")
        pane.wait_for("ask  ready")
        pane.send_keys("Write the report", "Enter")
        screen = pane.wait_for("more lines")
        assert "PgUp/PgDn scroll" in screen
        assert "line 1 of the report" in screen
        pane.send_keys("PageDown")
        screen = pane.wait_for("lines above")
        for answer in ("1  Allow once", "2  Allow for this session", "3  Deny"):
            assert answer in screen
        pane.wait_for_gone("line 1 of the report")
        pane.send_keys("Enter")  # the highlight stayed on "Allow once"
        pane.wait_for("The report is written.")
        assert (provider.workspace / "REPORT.md").read_text() == CONTENT
        pane.send_keys("C-d")
