"""A provider-side web search shows as a finished tool-like card."""

from __future__ import annotations

from tui_helpers import send, session, settle

from reasonix_core.events import TurnFinished, WebSearched
from reasonix_tui.widgets.tool_block import ToolBlock


async def test_web_search_is_a_finished_card(make_app) -> None:
    searched = WebSearched(call_id="srvtoolu_1", query="python 3.13 release", results=2)
    failed = WebSearched(call_id="srvtoolu_2", query="x", results=0, error="max_uses_exceeded")
    app, _ = make_app([[searched, failed, TurnFinished(stop_reason="stop", text="")]])
    async with app.run_test(size=(100, 32)) as pilot:
        await send(pilot, "hi")
        await settle(pilot)
        cards = {c.call_id: c for c in session(pilot).query(ToolBlock)}
        ok, bad = cards["srvtoolu_1"], cards["srvtoolu_2"]
        assert ok.tool_name == "Searched the web" and ok.status == "ok"
        assert ok.result == "2 results" and "python 3.13 release" in ok.arguments
        assert bad.status == "error" and bad.result == "search failed: max_uses_exceeded"
