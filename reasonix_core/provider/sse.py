"""A small Server-Sent Events parser over an async byte stream.

Comment lines (``: keep-alive``) are swallowed, ``event:`` names are kept, and
multi-line ``data:`` fields are joined. The caller's idle watchdog therefore
only ever waits for real data events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event."""

    event: str
    data: str


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    event = ""
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield SseEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, sep, value = line.partition(":")
        if not sep:
            # A bare line that is no SSE field (proxies append text such as
            # "upstream error: ..." without a colon-free form); surface it.
            yield SseEvent("raw", line)
            continue
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
        elif field in ("id", "retry"):
            continue
        else:
            yield SseEvent("raw", line)
    if data:
        yield SseEvent(event or "message", "\n".join(data))
