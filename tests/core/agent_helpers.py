"""Helpers for driving a real Agent against the fixture server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

from reasonix_core import events as ev
from reasonix_core.agent.retry import RetryPolicy
from reasonix_core.agent.session import SessionHeader
from reasonix_core.permission.approver import Approver, FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.core import Session
from reasonix_core.session.settings import RunSettings


@asynccontextmanager
async def runtime(
    workspace: Path,
    *,
    approver: Approver | None = None,
    record_sleeps: list[float] | None = None,
    **settings: Any,
) -> AsyncIterator[Session]:
    async with build_session(
        RunSettings(workspace=workspace, **settings), approver=approver or FailClosedApprover()
    ) as rt:
        if record_sleeps is not None:
            policy: RetryPolicy = rt.agent.retry

            async def fake_sleep(delay: float) -> None:
                record_sleeps.append(delay)

            policy.sleep = fake_sleep
        yield rt


async def run_turn(rt: Session, prompt: str) -> list[ev.Event]:
    out: list[ev.Event] = []
    async with aclosing(rt.agent.run(prompt)) as events:
        async for event in events:
            out.append(event)
    return out


def bodies(server: Any) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in server.requests]


def session_records(rt: Session) -> list[dict[str, Any]]:
    lines = rt.agent.session.path.read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def session_messages(rt: Session) -> list[dict[str, Any]]:
    return [r["message"] for r in session_records(rt) if r["type"] == "message"]


def session_header(session_id: str) -> SessionHeader:
    """A session header for store tests (every field but the id a placeholder)."""
    return SessionHeader(
        id=session_id,
        workspace="/w",
        created="t",
        model="p/m",
        effort="auto",
        system_prompt="sys",
        tools_fingerprint="abc",
    )
