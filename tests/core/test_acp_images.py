"""An editor's image block over ACP (issue 32 item 1): a real `reasonix acp`
subprocess, the agent-client-protocol client, the loopback fixture model."""

from __future__ import annotations

import base64
import json

from acp import image_block, text_block

from reasonix_testkit import Reply
from tests.core.test_acp import RecordingClient, agent, cfg  # noqa: F401 (fixture)
from tests.core.test_images import B64, DATA_URL, PNG


async def test_an_image_block_reaches_the_model_inline(workspace, cfg):  # noqa: F811
    cfg.enqueue(Reply(content="a red pixel"))
    client = RecordingClient()
    async with agent(client, workspace) as (conn, _, init):
        assert init.agent_capabilities.prompt_capabilities.image is True
        new = await conn.new_session(cwd=str(workspace))
        response = await conn.prompt(
            session_id=new.session_id,
            prompt=[text_block("what is this?"), image_block(B64, "image/png")],
        )
    assert response.stop_reason == "end_turn"
    user = [m for m in json.loads(cfg.requests[0].body)["messages"] if m["role"] == "user"][0]
    assert user["content"][0]["text"].startswith("what is this?")
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": DATA_URL}}


async def test_a_block_that_is_not_the_image_it_says_is_a_notice(workspace, cfg):  # noqa: F811
    cfg.enqueue(Reply(content="ok"))
    client = RecordingClient()
    fake = base64.b64encode(b"#!/bin/sh\necho not an image\n").decode()
    async with agent(client, workspace) as (conn, _, _init):
        new = await conn.new_session(cwd=str(workspace))
        await conn.prompt(
            session_id=new.session_id,
            prompt=[text_block("look"), image_block(fake, "image/png")],
        )
    assert fake not in cfg.requests[0].body.decode()
    assert "not attached" in json.dumps([str(u) for _, u in client.updates])
    assert PNG  # the real image helper stays importable
