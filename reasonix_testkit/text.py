"""JSON and text helpers every dialect's payloads and rendered prompts share."""

from __future__ import annotations

import json
from typing import Any


def dumps_compact(value: Any) -> str:
    """Compact JSON, non-ASCII kept (how the fixtures write bodies and render prompts)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def split_text(text: str, size: int) -> list[str]:
    """``text`` in pieces of ``size`` characters (one piece for ``size <= 0``, none if empty)."""
    if not text:
        return []
    if size <= 0:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def content_text(value: Any) -> str:
    """A message's content as the fixture "model" reads it.

    A string as is; a list of parts joined, ``text`` parts by their text and any
    other part as compact JSON; anything else as compact JSON; None as "".
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            str(part.get("text") or "")
            if isinstance(part, dict) and part.get("type") == "text"
            else dumps_compact(part)
            for part in value
        )
    return dumps_compact(value)


def tagged(tag: str, *fields: str) -> str:
    """``<|tag|>`` then the fields joined by ``<|sep|>`` (rendered tool calls and results)."""
    return f"<|{tag}|>" + "<|sep|>".join(fields)


def tools_text(tools: Any) -> str:
    """A request's tools as the rendered prompt's first segment, received key order kept.

    "" when there are none (every dialect's prompt starts this way).
    """
    if not isinstance(tools, list) or not tools:
        return ""
    return "<|tools|>" + "\n".join(dumps_compact(tool) for tool in tools) + "<|/tools|>"
