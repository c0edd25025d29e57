"""``[agent] vision_model`` (issue 32 item 2, seed 000 §3.5): an executor that takes no
images gets the vision model's versioned description, kept in the user turn, never
the image; one that takes images gets it directly; a bad setting stops the start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasonix_core import events as ev
from reasonix_core.agent.vision import DESCRIPTION_VERSION
from reasonix_core.command.mentions import without_attachments
from reasonix_testkit import Reply
from tests.conftest import TEST_KEY_ENV, provider_toml, reasonix
from tests.core.agent_helpers import runtime
from tests.core.test_images import B64, PNG, turn


def configure(home: Path, base_url: str, vision_model: str, **kwargs: object) -> None:
    text = (
        provider_toml(base_url, **kwargs)
        + f"""
[agent]
retry_base_delay = 0.01
retry_max_delay = 0.05
vision_model = "{vision_model}"

[sandbox]
bash = "off"
"""
    )
    (home / "config.toml").write_text(text)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import TEST_KEY

    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)


async def test_auto_describes_for_a_blind_executor_then_sends_text_only(workspace, home, server):
    configure(home, server.base_url, "auto")
    (workspace / "shot.png").write_bytes(PNG)
    server.enqueue(
        Reply(content="A red square; the text reads ERROR 42."),
        Reply(content="The screenshot shows error 42."),
        Reply(content="still 42"),
    )
    async with runtime(workspace, model="fixture/deepseek-v4-pro") as rt:
        events = await turn(rt, "what does @shot.png say?")
        await turn(rt, "and again?")
    vision, executor, _later = (json.loads(r.body) for r in server.requests)
    # 1: the vision model (auto: the provider's model that takes images), with the bytes.
    assert vision["model"] == "deepseek-flash"
    assert B64 in json.dumps(vision) and "tools" not in vision
    # 2: the executor, with the description and no image bytes.
    assert executor["model"] == "deepseek-v4-pro"
    raw = server.requests[1].body.decode()
    assert B64 not in raw and "image_url" not in raw
    user = next(m for m in executor["messages"] if m["role"] == "user")["content"]
    assert "A red square; the text reads ERROR 42." in user
    assert (
        f'<image-description path="shot.png" version="{DESCRIPTION_VERSION}" '
        'model="fixture/deepseek-flash"' in user
    )
    # Persisted in the user turn (hidden from the redraw), so the next request extends
    # the executor's bytes.
    head = server.requests[1].body[: server.requests[1].body.index(b'],"tools"')]
    assert server.requests[2].body.startswith(head)
    assert without_attachments(user).startswith("what does @shot.png say?")
    assert "image-description" not in without_attachments(user)
    assert any(isinstance(e, ev.Notice) and "described by" in e.text for e in events)
    # Sent through the agent's call machinery: its usage in its own bucket, events in order.
    assert any(isinstance(e, ev.UsageReported) and e.source == "vision" for e in events)
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs)


async def test_an_executor_that_takes_images_gets_them_directly(workspace, home, server):
    configure(home, server.base_url, "auto")
    (workspace / "shot.png").write_bytes(PNG)
    server.enqueue(Reply(content="red"))
    async with runtime(workspace, model="fixture/deepseek-flash") as rt:
        await turn(rt, "what is @shot.png?")
    assert len(server.requests) == 1  # no extra request
    assert "image_url" in server.requests[0].body.decode()


async def test_explicit_vision_model_reference(workspace, home, server):
    configure(home, server.base_url, "fixture/deepseek-flash")
    (workspace / "shot.png").write_bytes(PNG)
    server.enqueue(Reply(content="a cat"), Reply(content="ok"))
    async with runtime(workspace, model="fixture/deepseek-v4-pro") as rt:
        await turn(rt, "@shot.png")
    assert [json.loads(r.body)["model"] for r in server.requests] == [
        "deepseek-flash",
        "deepseek-v4-pro",
    ]


async def test_a_failed_description_is_a_notice_and_the_turn_goes_on(workspace, home, server):
    from reasonix_testkit import HttpError

    configure(home, server.base_url, "auto")
    (workspace / "shot.png").write_bytes(PNG)
    server.enqueue(HttpError(400, "bad image"), Reply(content="I cannot see it"))
    async with runtime(workspace, model="fixture/deepseek-v4-pro") as rt:
        events = await turn(rt, "@shot.png")
    assert isinstance(events[-1], ev.TurnFinished)
    assert any(isinstance(e, ev.Notice) and "not described" in e.text for e in events)
    assert B64 not in server.requests[-1].body.decode()


@pytest.mark.parametrize(
    ("setting", "models", "wording"),
    [
        ("nosuch/model", ("deepseek-flash",), "vision_model = 'nosuch/model'"),
        ("fixture/deepseek-v4-pro", ("deepseek-flash", "deepseek-v4-pro"), "does not take images"),
        ("auto", ("deepseek-v4-pro",), "serves no model that takes images"),
    ],
)
def test_misconfigured_vision_model_is_a_config_error_at_start(
    workspace, home, server, setting, models, wording
):
    configure(home, server.base_url, setting, models=models)
    proc = reasonix(workspace, "run", "hi", "--model", f"fixture/{models[-1]}")
    assert proc.returncode == 2, proc.stderr
    assert wording in proc.stderr and "Traceback" not in proc.stderr
    assert server.requests == []


async def test_a_planned_turn_hands_the_images_to_the_executor(
    workspace, home, server, monkeypatch
):
    from tests.core.coordinator_helpers import (
        EXECUTOR_MODEL,
        PLANNER_MODEL,
        configure,
        requests_for,
        submit,
    )

    script = configure(home, server, monkeypatch)
    script.planner(submit("1. look at the image"), Reply(content="planned"))
    script.executor(Reply(content="it is red"))
    (workspace / "shot.png").write_bytes(PNG)
    async with runtime(workspace) as rt:
        events = await turn(rt, "plan first, then say what @shot.png shows")
    assert isinstance(events[-1], ev.TurnFinished)
    assert not any(B64 in json.dumps(r) for r in requests_for(server, PLANNER_MODEL))
    (executor,) = requests_for(server, EXECUTOR_MODEL)
    user = [m for m in executor["messages"] if m["role"] == "user"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}} in user
