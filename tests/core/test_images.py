"""Images in a user turn (issue 32 item 1): ``@shot.png`` reaches the model inline, in
each provider kind's own shape, only for a model that takes images; the transcript
round-trips them and later requests extend the first byte for byte."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from reasonix_core import events as ev
from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.command.mentions import expand_mentions, pasted_image_mention
from reasonix_core.images import (
    MAX_IMAGE_BYTES,
    ImageError,
    ImagePart,
    image_part,
    image_part_from_base64,
)
from reasonix_core.messages import Message
from reasonix_core.session.core import Session
from reasonix_testkit import AnthropicDialect, FixtureServer, Reply, ResponsesDialect
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix, write_config
from tests.core.agent_helpers import runtime


def png(width: int = 2, height: int = 1) -> bytes:
    """A real (tiny) PNG file."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = png()
B64 = base64.b64encode(PNG).decode()
DATA_URL = f"data:image/png;base64,{B64}"


async def turn(rt: Session, prompt: str) -> list[ev.Event]:
    expanded = await rt.expand(prompt)
    meta = TurnMeta(images=expanded.images) if expanded.images else None
    out: list[ev.Event] = []
    async with aclosing(rt.prompt(expanded.text, meta)) as events:
        async for event in events:
            out.append(event)
    return out


# -- the one entry point -------------------------------------------------------


def test_image_part_checks_type_signature_and_size():
    part = image_part("image/png", PNG, "shot.png")
    assert part.data == B64 and part.size == len(PNG) and part.data_url == DATA_URL
    assert image_part("", PNG).media_type == "image/png"  # from the signature
    assert image_part_from_base64("image/png", B64) == image_part("image/png", PNG)
    with pytest.raises(ImageError, match="said to be image/jpeg, but the bytes are image/png"):
        image_part("image/jpeg", PNG)
    with pytest.raises(ImageError, match="not a PNG"):
        image_part("image/png", b"#!/bin/sh\nrm -rf /\n")  # a script renamed .png
    with pytest.raises(ImageError, match="at most"):
        image_part("image/png", PNG + b"\0" * MAX_IMAGE_BYTES)
    with pytest.raises(ImageError, match="not valid base64"):
        image_part_from_base64("image/png", "%%%")


def test_message_with_images_round_trips_to_the_same_record():
    msg = Message(role="user", content="see", images=(image_part("image/png", PNG, "a.png"),))
    record = msg.to_record()
    again = Message.from_record(json.loads(json.dumps(record)))
    assert again == msg and json.dumps(again.to_record()) == json.dumps(record)
    assert Message(role="user", content="x").to_record() == {"role": "user", "content": "x"}


def test_mention_of_a_fake_image_is_a_notice_not_an_attachment(tmp_path: Path):
    (tmp_path / "evil.png").write_bytes(b"not an image at all")
    (tmp_path / "shot.png").write_bytes(PNG)
    found = expand_mentions("look @evil.png and @shot.png", tmp_path)
    assert [i.label for i in found.images] == ["shot.png"]
    assert any("evil.png" in n and "not attached" in n for n in found.notices)
    assert '<image path="shot.png" media_type="image/png"' in found.apply("x")


def test_pasted_image_path_becomes_a_mention(tmp_path: Path):
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    assert pasted_image_mention(f"'{shot}'") == f"@{shot}"
    assert pasted_image_mention(f"file://{shot}\n") == f"@{shot}"
    assert pasted_image_mention(str(tmp_path / "missing.png")) is None
    assert pasted_image_mention("some text") is None
    assert pasted_image_mention(f"{shot} and more") is None


# -- each kind's wire shape, only for a model that takes images -----------------


def test_at_image_headless_goes_inline_as_openai_image_url(workspace, home, server):
    write_config(home, server.base_url)  # deepseek-flash: a DeepSeek vision model
    (workspace / "shot.png").write_bytes(PNG)
    server.enqueue(Reply(content="a red pixel"))
    proc = reasonix(workspace, "run", "what is in @shot.png?")
    assert proc.returncode == 0, proc.stderr
    user = [m for m in json.loads(server.requests[0].body)["messages"] if m["role"] == "user"][0]
    assert isinstance(user["content"], list)
    assert user["content"][0]["type"] == "text"
    assert user["content"][0]["text"].startswith("what is in @shot.png?")
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": DATA_URL}}


async def test_a_model_without_images_gets_a_note_not_the_bytes(workspace, configured):
    server = configured
    (workspace / "shot.png").write_bytes(PNG)
    server.enqueue(Reply(content="no eyes"))
    async with runtime(workspace, model="fixture/deepseek-v4-pro") as rt:
        events = await turn(rt, "what is in @shot.png?")
    body = server.requests[0].body.decode()
    assert B64 not in body and "image_url" not in body
    assert "not shown to this model" in body
    assert any(isinstance(e, ev.Notice) and "vision_model" in e.text for e in events)


def _provider_toml(kind: str, base_url: str, vision: bool) -> str:
    listed = '["seer"]' if vision else "[]"
    return f"""
[[providers]]
name = "p"
kind = "{kind}"
base_url = "{base_url}/v1"
models = ["seer"]
api_key_env = "{TEST_KEY_ENV}"
reasoning_protocol = "openai"
vision_models = {listed}

[agent]
retry_base_delay = 0.01
retry_max_delay = 0.05

[sandbox]
bash = "off"
"""


@pytest.mark.parametrize("kind", ["anthropic", "responses"])
async def test_each_kind_writes_its_own_image_part(workspace, home, monkeypatch, kind):
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    dialect = AnthropicDialect("anthropic") if kind == "anthropic" else ResponsesDialect("openai")
    (workspace / "shot.png").write_bytes(PNG)
    with FixtureServer(dialect, api_key=TEST_KEY) as srv:
        srv.models = None
        (home / "config.toml").write_text(_provider_toml(kind, srv.base_url, True))
        srv.enqueue(Reply(content="red"))
        async with runtime(workspace) as rt:
            await turn(rt, "what is in @shot.png?")
        body: dict[str, Any] = json.loads(srv.requests[0].body)
    if kind == "anthropic":
        content = body["messages"][0]["content"]
        assert content[0] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": B64},
        }
        assert content[1]["type"] == "text"
    else:
        item = next(i for i in body["input"] if i.get("role") == "user")
        assert item["content"][0]["type"] == "input_text"
        assert item["content"][1] == {"type": "input_image", "image_url": DATA_URL}


@pytest.mark.parametrize("kind", ["anthropic", "responses"])
async def test_each_kind_notes_the_image_for_a_model_without_vision(
    workspace, home, monkeypatch, kind
):
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    dialect = AnthropicDialect("anthropic") if kind == "anthropic" else ResponsesDialect("openai")
    (workspace / "shot.png").write_bytes(PNG)
    with FixtureServer(dialect, api_key=TEST_KEY) as srv:
        srv.models = None
        (home / "config.toml").write_text(_provider_toml(kind, srv.base_url, False))
        srv.enqueue(Reply(content="?"))
        async with runtime(workspace) as rt:
            await turn(rt, "what is in @shot.png?")
        raw = srv.requests[0].body.decode()
    assert B64 not in raw and "not shown to this model" in raw


# -- cache-first: persisted, resumed, and every later request extends the first ---


async def test_second_request_extends_the_first_byte_for_byte_across_a_resume(
    workspace, configured
):
    server = configured
    (workspace / "shot.png").write_bytes(PNG)
    server.enqueue(Reply(content="a red pixel"), Reply(content="still red"), Reply(content="yes"))
    async with runtime(workspace) as rt:
        await turn(rt, "what is in @shot.png?")
        await turn(rt, "and now?")
    async with runtime(workspace, continue_last=True) as rt:
        await turn(rt, "sure?")
        saved = [m for m in rt.agent.messages if m.role == "user"][0]
    assert saved.images and saved.images[0] == ImagePart(
        media_type="image/png", data=B64, label="shot.png"
    )
    first, second, third = (json.loads(r.body)["messages"] for r in server.requests)
    dump = lambda ms: json.dumps(ms, ensure_ascii=False)  # noqa: E731
    # The first request's user turn, and everything before it, is resent unchanged.
    assert dump(second[: len(first)]) == dump(first)
    assert dump(third[: len(second)]) == dump(second)
    # On the wire: each request's bytes start with the previous one's, up to the end
    # of its last message (model, then messages; tools and the rest follow).
    raw = [r.body for r in server.requests]
    for earlier, later in zip(raw, raw[1:], strict=False):
        head = earlier[: earlier.index(b'],"tools"')]
        assert B64.encode() in head and later.startswith(head)


async def test_discovered_metadata_says_which_models_take_images():
    import httpx

    from reasonix_core.config.schema import ProviderConfig
    from reasonix_core.images import model_takes_images
    from reasonix_core.provider.discovery import discover_models

    listing = {
        "data": [
            {"id": "eyes", "input_modalities": ["text", "image"]},
            {"id": "blind", "input_modalities": ["text"]},
            {"id": "odd", "input_modalities": "image"},
        ]
    }
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=listing))
    provider = ProviderConfig(name="disc", base_url="http://127.0.0.1:9/v1")
    assert not model_takes_images(provider, "eyes")
    await discover_models(provider, None, transport=transport)
    assert model_takes_images(provider, "eyes")
    assert not model_takes_images(provider, "blind") and not model_takes_images(provider, "odd")
    # The user's own list wins over what a listing says.
    declared = ProviderConfig(name="disc", base_url="http://127.0.0.1:9/v1", vision_models=[])
    assert not model_takes_images(declared, "eyes")


def test_an_image_link_out_of_the_workspace_or_into_the_home_is_not_attached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("REASONIX_HOME", str(home))
    (home / "secret.png").write_bytes(PNG)
    outside = tmp_path / "outside.png"
    outside.write_bytes(PNG)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "leak.png").symlink_to(outside)
    (ws / "key.png").symlink_to(home / "secret.png")
    found = expand_mentions(f"@leak.png @key.png @{home}/secret.png", ws)
    assert found.images == []
    assert any("leads out of the workspace" in n for n in found.notices)
    assert any("protected path" in n for n in found.notices)
