"""Newline-delimited JSON-RPC on stdio that answers bad input.

The SDK's ``NdjsonTransport`` logs and skips a line that is not JSON; JSON-RPC
2.0 says the peer gets a Parse error (-32700) or Invalid Request (-32600) with
a null id, so a client that sent garbage learns it instead of waiting forever.
"""

from __future__ import annotations

import logging
from typing import Any

from acp._transport import NdjsonTransport  # the SDK's own framing; only receive differs

from reasonix_core.jsontext import loads_bounded

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class AnsweringTransport(NdjsonTransport):
    async def receive(self) -> dict[str, Any] | None:
        while True:
            raw = await self._read_line()
            line = raw.strip()
            if not raw:
                return None  # end of input
            if not line:
                continue
            try:
                # Bounded: a line of 100,000 nested brackets killed the agent with a
                # RecursionError; invalid UTF-8 is a ValueError too.
                message = loads_bounded(line.decode("utf-8"))
            except ValueError:
                log.info("not JSON: %.200r", line)
                await self._answer(None, PARSE_ERROR, "Parse error")
                continue
            if _valid(message):
                return message
            log.info("not a JSON-RPC message: %.200r", line)
            ident = message.get("id") if isinstance(message, dict) else None
            if not isinstance(ident, str | int):
                ident = None
            await self._answer(ident, INVALID_REQUEST, "Invalid Request")

    async def _answer(self, ident: str | int | None, code: int, message: str) -> None:
        await self.send(
            {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
        )


def _valid(message: Any) -> bool:
    """A request or notification (a string method), or a response (an id)."""
    if not isinstance(message, dict):
        return False
    if "method" in message:
        return isinstance(message["method"], str)
    return "id" in message and ("result" in message or "error" in message)
