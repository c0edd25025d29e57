"""stdout, and the control requests Reasonix sends the program.

Every line goes out through :class:`LineWriter` (one JSON object per line,
flushed): the turn's messages, the answers to the program's control requests and
Reasonix's own requests share stdout without interleaving, since each write is
one synchronous call on the event loop's thread.

:class:`ControlChannel` sends a ``control_request`` and waits for the program's
``control_response`` with the same ``request_id``. A request whose waiter is
cancelled (the turn was interrupted) is withdrawn with a
``control_cancel_request``; once stdin is closed every waiting request fails.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio

from reasonix_core.jsontext import dumps_utf8

__all__ = ["ControlChannel", "ControlFailed", "LineWriter"]


class LineWriter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, line: dict[str, Any]) -> None:
        self.out.write(dumps_utf8(line, default=str) + "\n")
        self.out.flush()

    def answer(self, request_id: str, response: dict[str, Any]) -> None:
        body = {"subtype": "success", "request_id": request_id, "response": response}
        self.write({"type": "control_response", "response": body})

    def refuse(self, request_id: str, error: str) -> None:
        body = {"subtype": "error", "request_id": request_id, "error": error}
        self.write({"type": "control_response", "response": body})


class ControlFailed(Exception):
    """The program answered a control request with an error, or cannot answer."""


@dataclass
class _Waiting:
    done: anyio.Event = field(default_factory=anyio.Event)
    response: dict[str, Any] = field(default_factory=dict[str, Any])
    error: str = ""


class ControlChannel:
    def __init__(self, writer: LineWriter) -> None:
        self._writer = writer
        self._waiting: dict[str, _Waiting] = {}
        self._ids = itertools.count(1)
        # Why no answer can come any more (stdin closed), else "".
        self._closed = ""

    async def request(self, body: dict[str, Any]) -> dict[str, Any]:
        """Send ``body`` (its ``subtype`` says which request) and wait for the
        program's answer; ControlFailed when it refuses or cannot answer."""
        if self._closed:
            raise ControlFailed(self._closed)
        request_id = f"reasonix_{next(self._ids)}"
        waiting = self._waiting[request_id] = _Waiting()
        self._writer.write({"type": "control_request", "request_id": request_id, "request": body})
        try:
            await waiting.done.wait()
        except anyio.get_cancelled_exc_class():
            if not self._closed:  # withdrawn: the program stops its callback
                self._writer.write({"type": "control_cancel_request", "request_id": request_id})
            raise
        finally:
            self._waiting.pop(request_id, None)
        if waiting.error:
            raise ControlFailed(waiting.error)
        return waiting.response

    def settle(self, request_id: str, response: dict[str, Any], error: str = "") -> bool:
        """The program's answer to request ``request_id``; False when none waits."""
        waiting = self._waiting.get(request_id)
        if waiting is None:
            return False
        waiting.response, waiting.error = response, error
        waiting.done.set()
        return True

    def close(self, why: str) -> None:
        """No answer can come any more: every waiting request fails with ``why``."""
        self._closed = why
        for waiting in self._waiting.values():
            waiting.error = why
            waiting.done.set()
