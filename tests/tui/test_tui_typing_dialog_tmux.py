"""Typed text is never cut when a dialog opens mid-typing, in a real terminal at 80×24
(issue 30, item 4): tmux runs ``python -m reasonix_tui`` against the loopback fixture,
which holds the model's request while the test types the start of ``/goal status``; the
approval then opens, and the rest of the typing (its ``a`` is the dialog's "this
session" key, Enter its choice) stays in the composer; Tab hands the keys to the dialog,
and the whole command runs after the turn. Nothing typed reaches the model."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tmux_session import fixture_provider, reasonix_in_tmux, tmux_test_marks

from reasonix_testkit.script import RecordedRequest, Reply, ToolCallSpec

pytestmark = tmux_test_marks


class HeldCheck:
    def __init__(self) -> None:
        self.release = threading.Event()

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = (request.json or {}).get("messages") or []
        if messages[-1].get("role") == "tool":
            return Reply(content="The check is done.")
        self.release.wait(60)
        call = ToolCallSpec("bash", json.dumps({"command": "echo checked-ok"}))
        return Reply(content="Let me run the check.", tool_calls=[call])


def test_keys_typed_as_an_approval_opens_stay_in_the_composer(tmp_path: Path) -> None:
    held = HeldCheck()
    with fixture_provider(tmp_path, responder=held) as provider:
        try:
            with reasonix_in_tmux(provider, name="reasonix-midtype", width=80, height=24) as pane:
                pane.wait_for("ask  ready")
                pane.send_keys("Run the check", "Enter")
                pane.wait_for("working")
                pane.send_keys("-l", "/go")
                pane.wait_for("/go")  # in the composer, the turn's request still held
                held.release.set()
                pane.wait_for("Allow bash?")
                pane.send_keys("-l", "al sta")  # the "a" must not allow for the session
                pane.send_keys("Enter")  # neither sent nor a choice
                pane.send_keys("Tab")  # now the keys are the dialog's
                pane.send_keys("1")
                screen = pane.wait_for("The check is done.")
                assert "/goal sta" in screen  # kept, whole, in the composer
                pane.send_keys("-l", "tus")
                pane.send_keys("Enter")
                pane.wait_for("No goal in this session.")
                pane.send_keys("C-d")
        finally:
            held.release.set()
    sent = [
        m.get("content") or ""
        for r in provider.server.requests
        for m in (r.json or {}).get("messages", [])
        if m.get("role") == "user"
    ]
    assert not any("goal" in text or "sta" in text.split("\n", 1)[0] for text in sent), sent
    assert len(provider.server.requests) == 2  # the turn's two requests, nothing typed
