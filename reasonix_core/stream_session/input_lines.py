"""What one line of stdin is, in claude-agent-sdk's stream-json input.

A line is a user message (``{"type": "user", "message": {"role": "user",
"content": ...}}``), a control request the program sends (``initialize``,
``interrupt``, ``set_permission_mode``...), a control response to a request
Reasonix sent (``can_use_tool``), or a ``keep_alive``. Anything else is an
:class:`InputProblem` naming what is wrong: the driver reports it and reads on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reasonix_core.images import ImageError, ImagePart, image_part_from_base64

__all__ = [
    "ControlReply",
    "ControlRequest",
    "InputProblem",
    "KeepAlive",
    "UserTurn",
    "read_line",
]

# The longest line read (a message may embed a large file); longer lines are skipped.
LINE_LIMIT = 50 * 1024 * 1024


class InputProblem(ValueError):
    """A line that is not one of the messages above (its words name what is wrong)."""


@dataclass(frozen=True, slots=True)
class UserTurn:
    """A user message: its text and images, or why it cannot be a turn (the turn
    then fails with that error, so a program waiting for its result gets one)."""

    text: str
    # Its image blocks, checked by the core's one entry point (images.image_part).
    images: tuple[ImagePart, ...] = ()
    # client_composed (claude-agent-sdk's verbatim_prompts): no /command or @path expansion.
    verbatim: bool = False
    problem: str = ""


@dataclass(frozen=True, slots=True)
class ControlRequest:
    request_id: str
    subtype: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ControlReply:
    """The program's answer to a control request Reasonix sent."""

    request_id: str
    response: dict[str, Any]
    # The program's error (its callback raised, or it has none), else "".
    error: str = ""


@dataclass(frozen=True, slots=True)
class KeepAlive:
    pass


Line = UserTurn | ControlRequest | ControlReply | KeepAlive


def read_line(raw: bytes) -> Line | None:
    """The message on one line (None for a blank one); InputProblem otherwise."""
    text = raw.strip()
    if not text:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise InputProblem("not JSON") from None
    if not isinstance(data, dict):
        raise InputProblem("not a JSON object")
    kind = data.get("type")
    if kind == "user":
        return _user(data)
    if kind == "control_request":
        return _request(data)
    if kind == "control_response":
        return _reply(data)
    if kind == "keep_alive":
        return KeepAlive()
    shown = json.dumps(kind)[:60] if kind is not None else "none"
    raise InputProblem(f"unknown message type {shown}")


def _user(data: dict[str, Any]) -> UserTurn:
    message = data.get("message")
    if not isinstance(message, dict):
        return UserTurn("", problem='a user message needs a "message" object')
    content = message.get("content")
    verbatim = data.get("client_composed") is True
    images: list[ImagePart] = []
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts: list[str] = []
        for number, block in enumerate(content, start=1):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind == "image":
                try:
                    images.append(_image(block, number))
                except ImageError as exc:
                    return UserTurn("", problem=str(exc))
            else:
                shown = json.dumps(kind)[:60] if kind is not None else "none"
                return UserTurn(
                    "", problem=f"a user message block of type {shown} cannot start a turn"
                )
        text = "\n\n".join(parts)
    else:
        return UserTurn("", problem="a user message's content must be text or a list of blocks")
    if not text.strip() and not images:
        return UserTurn("", problem="the user message is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return UserTurn("", problem="the user message is not valid UTF-8 (a lone surrogate)")
    return UserTurn(text, images=tuple(images), verbatim=verbatim)


def _image(block: dict[str, Any], number: int) -> ImagePart:
    """Claude's inline image block, ``{"type": "image", "source": {"type": "base64",
    "media_type": ..., "data": ...}}``, as an image part; ImageError naming the
    block (its place in the message) when it is not one."""
    label = f"image block {number}"
    source = block.get("source")
    if not isinstance(source, dict):
        raise ImageError(f'{label}: needs a "source" object')
    kind = source.get("type")
    if kind != "base64":
        shown = json.dumps(kind)[:60] if kind is not None else "none"
        raise ImageError(f'{label}: source type {shown} is not taken (only "base64", inline)')
    media_type, data = source.get("media_type"), source.get("data")
    if not isinstance(media_type, str) or not isinstance(data, str):
        raise ImageError(f'{label}: a base64 source needs "media_type" and "data" strings')
    return image_part_from_base64(media_type, data, label)


def _request(data: dict[str, Any]) -> ControlRequest:
    request_id = data.get("request_id")
    if not isinstance(request_id, str) or not request_id:
        raise InputProblem("a control_request without a request_id")
    body = data.get("request")
    if not isinstance(body, dict) or not isinstance(body.get("subtype"), str):
        # Answered with an error: the program waits for it.
        return ControlRequest(request_id, "", {})
    return ControlRequest(request_id, body["subtype"], body)


def _reply(data: dict[str, Any]) -> ControlReply:
    response = data.get("response")
    if not isinstance(response, dict):
        raise InputProblem('a control_response without a "response" object')
    request_id = response.get("request_id")
    if not isinstance(request_id, str):
        raise InputProblem("a control_response without a request_id")
    if response.get("subtype") == "error":
        error = response.get("error")
        return ControlReply(request_id, {}, str(error) if error else "the program failed")
    body = response.get("response")
    return ControlReply(request_id, body if isinstance(body, dict) else {})
