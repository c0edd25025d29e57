"""The stream-json session: stdin's user messages as turns of one session, the
program's control requests answered, each turn's lines and result on stdout.

Reading and the turns run side by side in one task group: a control request
(``interrupt``, ``set_permission_mode``...) is answered while a turn runs, and
user messages that arrive meanwhile wait their turn. When stdin ends, the turns
already received still run, then the session closes. An ``interrupt`` (or
SIGTERM, which claude-agent-sdk sends a CLI that does not exit after its stdin
closed) cancels the running turn: the transcript stays valid, and the turn's
result says it was interrupted.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TextIO

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectSendStream

from reasonix_core import events as ev
from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.claude_stream import ClaudeShape, result_line, turn_outcome
from reasonix_core.errors import CommandError, ReasonixError, SkillError, UsageError
from reasonix_core.headless import session_init_line
from reasonix_core.metrics import MetricsSink
from reasonix_core.permission_modes import MODE_CHOICES, PLAN_MODE, mode_arg
from reasonix_core.session.build import build_session
from reasonix_core.session.core import Session
from reasonix_core.session.settings import RunSettings
from reasonix_core.startup_heap import resume_collection
from reasonix_core.stream_session.approver import ProgramApprover
from reasonix_core.stream_session.control import ControlChannel, LineWriter
from reasonix_core.stream_session.input_lines import (
    LINE_LIMIT,
    ControlReply,
    ControlRequest,
    InputProblem,
    KeepAlive,
    UserTurn,
    read_line,
)

log = logging.getLogger(__name__)

#: The error of a turn the program (or SIGTERM) interrupted.
INTERRUPTED = "interrupted: the turn was stopped before it finished"
#: ``TurnFailed.kind`` of such a turn.
INTERRUPTED_KIND = "interrupted"


@dataclass(kw_only=True)
class StreamOptions:
    """What ``reasonix run --input-format stream-json`` was asked to do."""

    settings: RunSettings
    # --include-partial-messages: stream_event lines as the answer streams.
    partial: bool = False
    # --permission-prompt-tool stdio: approvals go to the program (can_use_tool).
    ask_program: bool = False
    overrides: dict[str, Any] = field(default_factory=dict[str, Any])


async def run_stream_session(
    options: StreamOptions,
    *,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> bool:
    """Serve the session until stdin ends; True when the last turn succeeded (or
    none ran)."""
    writer = LineWriter(stdout or sys.stdout)
    channel = ControlChannel(writer)
    driver = _Driver(writer, stderr or sys.stderr, channel, options)
    approver = ProgramApprover(channel, ask=options.ask_program, warn=driver.warn)
    async with build_session(
        options.settings,
        approver=approver,
        overrides=options.overrides,
        plan_approver=approver.approve_plan if options.ask_program else None,
    ) as session:
        resume_collection()  # start-up is over (reasonix_core.startup_heap)
        approver.session = session
        approver.interrupt = driver.interrupt
        driver.session = session
        for text in session.skills.notices():
            driver.warn(text)
        await driver.serve(stdin if stdin is not None else sys.stdin.buffer)
    return driver.ok


class _Driver:
    def __init__(
        self, writer: LineWriter, err: TextIO, channel: ControlChannel, options: StreamOptions
    ) -> None:
        self.writer, self.err, self.channel, self.options = writer, err, channel, options
        self.session: Session | None = None
        self.ok = True
        # The running turn's scope (an interrupt cancels it), else None.
        self._turn: anyio.CancelScope | None = None

    # -- the loop --------------------------------------------------------------

    async def serve(self, stdin: BinaryIO) -> None:
        send, receive = anyio.create_memory_object_stream[UserTurn](math.inf)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read, stdin, send, tg)
            tg.start_soon(self._on_sigterm, tg)
            async with receive:
                async for turn in receive:
                    await self._run_turn(turn)
            tg.cancel_scope.cancel()

    async def _read(
        self, stdin: BinaryIO, turns: MemoryObjectSendStream[UserTurn], tg: TaskGroup
    ) -> None:
        async with turns:
            number = 0
            async for raw in _stdin_lines(stdin):
                number += 1
                if raw is None:
                    self._input_problem(number, f"longer than {LINE_LIMIT} bytes")
                    continue
                try:
                    line = read_line(raw)
                except InputProblem as exc:
                    self._input_problem(number, str(exc))
                    continue
                match line:
                    case UserTurn():
                        turns.send_nowait(line)
                    case ControlRequest():
                        tg.start_soon(self._answer, line)
                    case ControlReply(request_id=request_id, response=response, error=error):
                        if not self.channel.settle(request_id, response, error):
                            self._input_problem(
                                number, f"a control_response to no waiting request {request_id!r}"
                            )
                    case KeepAlive() | None:
                        pass
            # No answer can come any more: a call waiting for one is refused.
            self.channel.close("the program closed its input before answering")

    async def _on_sigterm(self, tg: TaskGroup) -> None:
        """SIGTERM (the SDK's disconnect when the CLI is still busy): stop the turn
        and close the session as after an interrupt, the transcript valid."""
        with contextlib.suppress(NotImplementedError, ValueError):
            with anyio.open_signal_receiver(signal.SIGTERM) as signals:
                async for _ in signals:
                    self.warn("SIGTERM: the running turn is stopped and the session closed")
                    self.ok = False
                    tg.cancel_scope.cancel()
                    return

    # -- one turn --------------------------------------------------------------

    async def _run_turn(self, turn: UserTurn) -> None:
        session = self._session()
        started = time.monotonic()
        shape = ClaudeShape(
            session_id=session.session_id, model=session.model, partial=self.options.partial
        )
        self.writer.write(self._init_line(shape, session))
        sink = MetricsSink()
        finished: ev.TurnFinished | None = None
        error: ev.TurnFailed | None = None
        text = ""
        told = False  # the error came as the turn's own TurnFailed event
        with anyio.CancelScope() as scope:
            self._turn = scope
            try:
                if turn.problem:
                    raise UsageError(turn.problem)
                prompt, images = turn.text, turn.images
                if not turn.verbatim:
                    expanded = await session.expand(turn.text)
                    for notice in expanded.notices:
                        self._emit(ev.Notice(level="warning", text=notice), shape, sink)
                    prompt, images = expanded.text, (*images, *expanded.images)
                meta = TurnMeta(images=images) if images else None
                async with aclosing(session.prompt(prompt, meta)) as events:
                    async for event in events:
                        self._emit(event, shape, sink)
                        if isinstance(event, ev.TurnFinished) and not event.agent_path:
                            finished, text = event, event.text
                        elif isinstance(event, ev.TurnFailed) and not event.agent_path:
                            error, told = event, True
            except (CommandError, SkillError, UsageError) as exc:
                error = ev.TurnFailed(error=str(exc), kind="usage")
            except ReasonixError as exc:
                error = ev.TurnFailed(error=str(exc))
            except Exception as exc:  # a bug outside any tool call: the turn still ends
                log.info("the turn raised", exc_info=exc)
                error = ev.TurnFailed(error=f"internal error: {type(exc).__name__}: {exc}")
        self._turn = None
        if scope.cancelled_caught:
            finished, error = None, ev.TurnFailed(error=INTERRUPTED, kind=INTERRUPTED_KIND)
            told = False
        if error is not None and finished is None and not told:
            # Ended outside the event stream (an interrupt, a refusal, a bug): the
            # answer so far, then the error, as a TurnFailed event would have it.
            for line in shape.lines(error):
                if line["type"] != "system":
                    self.writer.write(line)
            self._tell(error)
        ok, outcome = turn_outcome(finished, error)
        metrics = sink.finish(outcome)
        duration_ms = int((time.monotonic() - started) * 1000)
        self.writer.write(
            result_line(
                ok=ok, outcome=outcome, text=text, finished=finished, error=error,
                metrics=metrics, session_id=session.session_id, duration_ms=duration_ms,
                shape=shape,
            )
        )  # fmt: skip
        self.ok = ok

    def _emit(self, event: ev.Event, shape: ClaudeShape, sink: MetricsSink) -> None:
        sink.record(event)
        shape.observe(event)
        if not event.agent_path and isinstance(event, ev.Notice | ev.TurnFailed):
            self._tell(event)
        for line in shape.lines(event):
            self.writer.write(line)

    def interrupt(self) -> None:
        """Stop the running turn (none running: nothing to do)."""
        if self._turn is not None:
            self._turn.cancel()

    # -- control requests ------------------------------------------------------

    async def _answer(self, request: ControlRequest) -> None:
        """Answer one of the program's control requests (an error names what is
        not supported)."""
        writer, body = self.writer, request.body
        try:
            response = self._control(request.subtype, body)
        except _Unsupported as exc:
            writer.refuse(request.request_id, str(exc))
            return
        writer.answer(request.request_id, response)

    def _control(self, subtype: str, body: dict[str, Any]) -> dict[str, Any]:
        session = self._session()
        match subtype:
            case "initialize":
                return self._initialize(session, body)
            case "interrupt":
                self.interrupt()
                return {}
            case "set_permission_mode":
                mode = mode_arg(str(body.get("mode")))
                if mode not in MODE_CHOICES:
                    raise _Unsupported(
                        f"permission mode {_shown(body.get('mode'))} is not one Reasonix has "
                        "(default, acceptEdits, bypassPermissions, plan; ask, auto, yolo)"
                    )
                if mode == PLAN_MODE:
                    session.set_mode(session.policy.preset, plan=True)
                else:
                    session.set_mode(mode, plan=False)
                return {}
            case "set_model":
                self._set_model(session, body.get("model"))
                return {}
            case "mcp_status":
                mcp = session.mcp
                servers = [{"name": s.name, "status": s.phase} for s in mcp.status()] if mcp else []
                return {"mcpServers": servers}
            case "":
                raise _Unsupported("a control_request without a request subtype")
            case _:
                raise _Unsupported(
                    f"control request {_shown(subtype)} is not supported by Reasonix"
                )

    def _initialize(self, session: Session, body: dict[str, Any]) -> dict[str, Any]:
        from reasonix_core import __version__

        hooks = body.get("hooks")
        if isinstance(hooks, dict) and any(hooks.values()):
            raise _Unsupported(
                "hooks given to claude-agent-sdk (ClaudeAgentOptions.hooks) are not run by "
                f"Reasonix: {', '.join(sorted(hooks))}"
            )
        if body.get("agents"):
            raise _Unsupported(
                "agents given to claude-agent-sdk (ClaudeAgentOptions.agents) are not "
                "supported by Reasonix; its subagent profiles are skills (docs/SUBAGENTS.md)"
            )
        return {
            "commands": [],
            "models": [{"value": session.model, "displayName": session.model}],
            "pid": os.getpid(),
            "reasonix_version": __version__,
        }

    def _set_model(self, session: Session, model: object) -> None:
        from reasonix_core.config import resolve_model
        from reasonix_core.errors import ConfigError

        try:
            resolved = resolve_model(session.config, model if isinstance(model, str) else None)
            session.set_model(resolved)
        except ConfigError as exc:
            raise _Unsupported(str(exc)) from None

    # -- what the program and the person see -----------------------------------

    def _init_line(self, shape: ClaudeShape, session: Session) -> dict[str, Any]:
        mode = PLAN_MODE if session.plan_mode.active else session.policy.preset
        return session_init_line(shape, session, mode)

    def _input_problem(self, number: int, why: str) -> None:
        """A stdin line that was skipped: said on stderr and as a system line."""
        self.warn(f"stdin line {number}: {why}; skipped")
        session_id = self.session.session_id if self.session is not None else ""
        self.writer.write(
            {
                "type": "system",
                "subtype": "input_error",
                "session_id": session_id,
                "line": number,
                "error": why,
            }
        )

    def warn(self, text: str) -> None:
        self.err.write(f"warning: {text}\n")
        self.err.flush()

    def _tell(self, event: ev.Notice | ev.TurnFailed) -> None:
        if isinstance(event, ev.TurnFailed):
            self.err.write(f"reasonix: error: {event.error}\n")
        elif event.level != "info":
            self.err.write(f"{event.level}: {event.text}\n")
        self.err.flush()

    def _session(self) -> Session:
        assert self.session is not None, "the session is built before stdin is read"
        return self.session


class _Unsupported(Exception):
    """A control request Reasonix answers with an error (its words)."""


async def _stdin_lines(source: BinaryIO) -> AsyncIterator[bytes | None]:
    """stdin's lines as they arrive (None for one longer than LINE_LIMIT, which is
    skipped). A daemon thread does the blocking reads: whatever kind of file stdin
    is, and the process may exit while it still waits on a program that keeps
    stdin open."""
    send, receive = anyio.create_memory_object_stream[bytes | None](16)
    token = anyio.lowlevel.current_token()

    def pump() -> None:
        try:
            while True:
                line = source.readline(LINE_LIMIT + 1)
                if not line:
                    break
                if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
                    while line and not line.endswith(b"\n"):  # drop the rest of it
                        line = source.readline(LINE_LIMIT + 1)
                    anyio.from_thread.run(send.send, None, token=token)
                    continue
                anyio.from_thread.run(send.send, line, token=token)
        except (OSError, ValueError, RuntimeError, anyio.BrokenResourceError):
            pass  # stdin failed, or the loop is gone: the input ends here
        finally:
            with contextlib.suppress(RuntimeError):
                anyio.from_thread.run_sync(send.close, token=token)

    threading.Thread(target=pump, name="reasonix-stdin", daemon=True).start()
    async with receive:
        async for line in receive:
            yield line


def _shown(value: object) -> str:
    """A value the program sent, quoted and short (an answer never echoes a huge one)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
