"""Images in the app (issue 32 item 1), over the real engine against the loopback
fixture: ``@shot.png`` typed, and an image file's path pasted (dropped) into the
prompt, reach the model inline."""

from __future__ import annotations

import json
from pathlib import Path

from textual import events

from reasonix_testkit import Reply
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.widgets.composer import Composer
from tests.core.test_images import DATA_URL, PNG
from tests.tui.tui_helpers import send, session, until

SIZE = (100, 32)


def image_parts(body: bytes) -> list[dict]:
    user = [m for m in json.loads(body)["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    return [p for p in content if p.get("type") == "image_url"] if isinstance(content, list) else []


async def test_at_image_and_a_pasted_image_path_reach_the_model(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    (workspace / "shot.png").write_bytes(PNG)
    dropped = workspace.parent / "dropped.png"
    dropped.write_bytes(PNG)
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = session(pilot)
        configured.enqueue(Reply(content="red"), Reply(content="also red"))
        await send(pilot, "what is @shot.png please")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
        composer = screen.query_one(Composer)
        composer.post_message(events.Paste(f"'{dropped}'"))
        await until(pilot, lambda: composer.text == f"@{dropped} ", 30)
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 2 and not screen.busy, 30)
        drawn = [b.text for b in screen.transcript.query("UserBlock")]  # type: ignore[attr-defined]
    first, second = (r.body for r in configured.requests)
    assert image_parts(first) == [{"type": "image_url", "image_url": {"url": DATA_URL}}]
    assert image_parts(second) == [{"type": "image_url", "image_url": {"url": DATA_URL}}]
    assert drawn and "base64" not in " ".join(str(t) for t in drawn)
