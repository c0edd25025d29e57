"""``reasonix run``: drive one turn without a UI and render it as text or JSON.

Returns a :class:`HeadlessOutcome`; the CLI maps it to an exit code and is the
only place that does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from reasonix_core import events as ev
from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.claude_stream import ClaudeShape, result_line, turn_outcome
from reasonix_core.errors import (
    DISK_FULL_KIND,
    CommandError,
    DiskFull,
    ReasonixError,
    SkillError,
    UsageError,
)
from reasonix_core.hooks.display import hook_line
from reasonix_core.jsontext import dumps_utf8
from reasonix_core.metrics import MetricsSink, RunMetrics
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.core import Session
from reasonix_core.session.settings import RunSettings, arm_name
from reasonix_core.startup_heap import resume_collection

if TYPE_CHECKING:
    from reasonix_core.goal.driver import GoalDriver

log = logging.getLogger(__name__)

OUTPUT_FORMATS = ("text", "json", "stream-json")


@dataclass(kw_only=True)
class HeadlessOptions:
    """What ``reasonix run`` was asked to do."""

    prompt: str
    settings: RunSettings
    output_format: str = "text"
    metrics_path: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    # --approve-plan: execute the continued session's pending plan (docs/MODES.md).
    approve_plan: bool = False
    # --goal: drive this objective unattended (docs/MODES.md#goal-mode); the prompt
    # is the objective. None bounds: [agent] max_goal_rounds / goal_token_budget.
    goal: bool = False
    max_goal_rounds: int | None = None
    goal_token_budget: int | None = None
    # --include-partial-messages: stream_event lines as each answer streams.
    partial_messages: bool = False


@dataclass(kw_only=True)
class HeadlessOutcome:
    """How the run ended: the result object and its metrics."""

    ok: bool
    result: dict[str, Any]
    metrics: RunMetrics


class _TextRenderer:
    """Answer text to stdout as it streams; activity and notices to stderr."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        self._wrote_text = False

    def __call__(self, event: ev.Event) -> None:
        if event.agent_path and not isinstance(event, ev.SubagentStarted | ev.SubagentFinished):
            return  # a subagent's own events: its answer reaches the parent as a tool result
        match event:
            case ev.TextDelta(text=text):
                self.out.write(_printable(text))
                self.out.flush()
                self._wrote_text = True
            case ev.ToolCallStarted(name=name, arguments=arguments):
                self._break_line()
                self.err.write(f"● {name} {_short(arguments)}\n")
            case ev.ToolCallFinished(name=name, outcome=outcome, is_error=is_error, result=result):
                if is_error:
                    self.err.write(f"  ✗ {name} {outcome}: {_short(result, 160)}\n")
            case ev.WebSearched():
                self._break_line()
                self.err.write(f"● {_printable(_short(event.title))} ({event.outcome})\n")
            case ev.Retrying(attempt=attempt, delay=delay, reason=reason):
                self._break_line()
                self.err.write(f"retrying ({attempt}) in {delay:.1f}s: {reason}\n")
            case ev.Notice(level=level, text=text):
                self._break_line()
                self.err.write(f"{level}: {text}\n")
            case ev.HookRan():
                self._break_line()
                self.err.write(hook_line(event) + "\n")
            case ev.TurnFailed(error=error):
                self._break_line()
                self.err.write(f"reasonix: error: {error}\n")
            case ev.TurnFinished():
                self._break_line()
            case ev.SubagentStarted(child_path=path, read_only=read_only):
                self._break_line()
                kind = "read-only subagent" if read_only else "subagent"
                self.err.write(f"◆ {kind} {'/'.join(path)} started\n")
            case ev.SubagentFinished(child_path=path, status=status):
                self._break_line()
                self.err.write(f"◆ subagent {'/'.join(path)}: {status}\n")
            case _:
                pass
        self.err.flush()

    def _break_line(self) -> None:
        if self._wrote_text:
            self.out.write("\n")
            self.out.flush()
            self._wrote_text = False


async def _with_mcp_notices(mcp: Any, events: AsyncIterator[ev.Event]) -> AsyncIterator[ev.Event]:
    """Say which declared MCP servers are unavailable as soon as the run knows (they
    start beside the first request, which never waits for them), so a script knows
    why their tools are missing."""
    told: set[str] = set()

    def news() -> list[ev.Notice]:
        out = []
        for status in mcp.status() if mcp is not None else ():
            if status.phase in ("failed", "invalid") and status.name not in told:
                told.add(status.name)
                why = status.reason or status.error_class or status.phase
                out.append(
                    ev.Notice(
                        level="warning",
                        text=f"MCP server {status.name!r} is unavailable ({why}); "
                        "its tools are not offered",
                    )
                )
        return out

    for notice in news():
        yield notice
    async for event in events:
        for notice in news():
            yield notice
        yield event


def _printable(text: str) -> str:
    """Model text as a UTF-8 stream can take it: a lone surrogate is shown as
    ``\\ud800`` instead of failing the write."""
    if text.isascii():
        return text
    # backslashreplace touches only what UTF-8 cannot encode: other text is unchanged.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _short(text: str, limit: int = 100) -> str:
    # A tool's result or a call's arguments (a hook's stderr, a hostile file's
    # bytes): no control character reaches the terminal to move its cursor.
    flat = "".join(ch if ch.isprintable() else "?" for ch in " ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def run_headless(
    options: HeadlessOptions,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> HeadlessOutcome:
    started = time.monotonic()
    sink = MetricsSink(options.metrics_path)
    sink.metrics.arm = arm_name(options.settings.ablate)
    output = _Output(options.output_format, stdout or sys.stdout, stderr or sys.stderr, sink)
    out, emit = output.out, output.emit
    ending = _Ending()
    session_id = ""
    refused: ReasonixError | None = None
    goal_driver: GoalDriver | None = None
    # MCP servers start at their first use (a use_capability call, an MCP prompt or
    # resource: McpHost.start_now), never before: a run that does not use them neither
    # spawns them nor imports the MCP SDK, so it does not wait for them at exit (issue
    # 31: 1-3 s for servers still starting, which the SDK shuts down gracefully), and
    # they never compete with the first request for the CPU.
    settings = dataclasses.replace(options.settings, mcp_deferred=True)
    saved_plan = None
    try:
        async with build_session(
            settings, approver=FailClosedApprover(), overrides=options.overrides
        ) as session:
            resume_collection()  # start-up is over (reasonix_core.startup_heap)
            session_id = session.session_id
            output.shape = ClaudeShape(
                session_id=session_id, model=session.model, partial=options.partial_messages
            )
            if options.output_format == "stream-json":
                output.write(_init_line(output.shape, session, options))
                out.flush()
            for text in (*session.notices, *session.skills.notices()):
                emit(ev.Notice(level="warning", text=text))
            try:
                turn, goal_driver, notices = await _start(session, options)
            except (CommandError, SkillError, UsageError) as exc:
                # A usage error before anything is sent, raised once the session is
                # closed (its task groups would wrap it in an exception group).
                refused = exc
            else:
                for text in notices:
                    emit(ev.Notice(level="warning", text=text))
                await _consume(session, turn, emit, sink, ending)
            saved_plan = session.plan_mode.saved
    except Exception as exc:
        # The disk filled up while the session was created, locked or closed:
        # the run failed, and still ends with its result (issue 29).
        disk_full = DiskFull.find(exc)
        if disk_full is None:
            raise
        ending.fail(_disk_full_failure(disk_full), emit)
    if saved_plan is not None and ending.finished is not None:
        # Plan mode, headless: the plan waiting for --approve-plan is the result.
        ending.finished = dataclasses.replace(ending.finished, stop_reason="plan_pending")
        ending.text = saved_plan.plan
    if refused is not None:
        raise refused
    ok, outcome = _settle(ending, goal_driver)
    try:
        metrics = sink.finish(outcome)
    except DiskFull as exc:
        ending.fail(_disk_full_failure(exc), emit)
        ok, outcome = False, "error"
        metrics = sink.metrics
        metrics.outcome = outcome
    result = _result(ok, outcome, ending, metrics, session_id, started, output.shape)
    if options.output_format in ("json", "stream-json"):
        out.write(dumps_utf8(result) + "\n")
        out.flush()
    return HeadlessOutcome(ok=ok, result=result, metrics=metrics)


class _Output:
    """Where the run's events go: the metrics, the Claude-shaped account, and the
    text renderer or the stream-json lines."""

    def __init__(self, output_format: str, out: TextIO, err: TextIO, sink: MetricsSink) -> None:
        self.output_format, self.out, self.err, self.sink = output_format, out, err, sink
        self.render = _TextRenderer(out, err) if output_format == "text" else None
        # Known once the session is built.
        self.shape: ClaudeShape | None = None

    def write(self, line: dict[str, Any]) -> None:
        self.out.write(dumps_utf8(line, default=_json_default) + "\n")

    def emit(self, event: ev.Event) -> None:
        self.sink.record(event)
        if self.shape is not None:
            self.shape.observe(event)
        if self.render is not None:
            self.render(event)
            return
        if isinstance(event, ev.HookRan) and event.outcome in ("error", "timeout"):
            self.err.write(hook_line(event) + "\n")  # a failing hook is a warning
            self.err.flush()
        if not event.agent_path and isinstance(event, ev.Notice | ev.TurnFailed):
            # stdout is the JSON alone: a person (or a CI log) reads warnings and
            # errors on stderr, worded as text mode words them; the result has them too.
            if isinstance(event, ev.TurnFailed):
                self.err.write(f"reasonix: error: {event.error}\n")
            elif event.level != "info":
                self.err.write(f"{event.level}: {event.text}\n")
            self.err.flush()
        if self.output_format == "stream-json" and self.shape is not None:
            for line in self.shape.lines(event):
                self.write(line)
            self.out.flush()


async def _start(
    session: Session, options: HeadlessOptions
) -> tuple[AsyncGenerator[ev.Event, None], GoalDriver | None, tuple[str, ...]]:
    """The run's turn (with the goal driver of a --goal run, and the expansion's
    notices); UsageError (before anything is sent) when it cannot start."""
    if options.approve_plan:
        return _approved_plan_turn(session), None, ()
    if options.goal:
        driver = _goal_driver(session, options)
        return session.drive_goal(driver, options.prompt), driver, ()
    # `/command args` (a custom command, a skill, an MCP prompt), @path and
    # @server:uri exactly as the TUI expands them.
    expanded = await session.expand(options.prompt)
    meta = TurnMeta(images=expanded.images) if expanded.images else None
    return session.prompt(expanded.text, meta), None, tuple(expanded.notices)


@dataclass
class _Ending:
    """How the run's turn ended, as its events say."""

    finished: ev.TurnFinished | None = None
    error: ev.TurnFailed | None = None
    text: str = ""

    def fail(self, error: ev.TurnFailed, emit: Callable[[ev.Event], None]) -> None:
        """The run failed after (or outside) its turn: ``error`` is its ending."""
        self.error = error
        emit(error)


def _disk_full_failure(exc: DiskFull) -> ev.TurnFailed:
    return ev.TurnFailed(error=str(exc), kind=DISK_FULL_KIND)


async def _consume(
    session: Session,
    turn: AsyncGenerator[ev.Event, None],
    emit: Callable[[ev.Event], None],
    sink: MetricsSink,
    ending: _Ending,
) -> None:
    """Emit the turn's events."""
    try:
        async with aclosing(turn) as agent_events:
            async for event in _with_mcp_notices(session.mcp, agent_events):
                emit(event)
                if isinstance(event, ev.TurnFinished):
                    ending.finished = event
                    ending.text = event.text
                elif isinstance(event, ev.TurnFailed):
                    ending.error = event
    except Exception as exc:
        # A full disk under the session (an append) or the metrics; else a bug
        # outside any tool call (a tool's own failure is already a result): the
        # run still ends with its result and metrics.
        log.info("the run raised", exc_info=exc)
        ending.finished = None
        disk_full = DiskFull.find(exc)
        if disk_full is not None:
            ending.error = _disk_full_failure(disk_full)
        else:
            ending.error = ev.TurnFailed(error=f"internal error: {type(exc).__name__}: {exc}")
        emit(ending.error)
    except BaseException:
        with contextlib.suppress(DiskFull):  # the cancellation is what to report
            sink.finish("cancelled")
        raise


def _settle(ending: _Ending, goal_driver: GoalDriver | None) -> tuple[bool, str]:
    """Whether the run succeeded, and its outcome for the metrics."""
    finished, error = ending.finished, ending.error
    ok, outcome = turn_outcome(finished, error)
    if goal_driver is None:
        return ok, outcome
    if finished is not None:
        # Only a completed goal is a success (blocked, a bound or a stop is not).
        stop = goal_driver.stop.value if goal_driver.stop is not None else "stopped"
        ok = ok and stop == "complete"
        ending.finished = finished = dataclasses.replace(finished, stop_reason=f"goal_{stop}")
        if not ok and error is None:
            ending.error = ev.TurnFailed(error=f"the goal ended {stop}, not complete", kind="goal")
    if ok:
        return ok, "success"
    if finished is not None and finished.stop_reason == "max_steps":
        return ok, "max_steps"
    return ok, "error" if ending.error is not None else "incomplete"


def _result(
    ok: bool,
    outcome: str,
    ending: _Ending,
    metrics: RunMetrics,
    session_id: str,
    started: float,
    shape: ClaudeShape | None,
) -> dict[str, Any]:
    return result_line(
        ok=ok,
        outcome=outcome,
        text=ending.text,
        finished=ending.finished,
        error=ending.error,
        metrics=metrics,
        session_id=session_id,
        duration_ms=int((time.monotonic() - started) * 1000),
        shape=shape,
    )


def _goal_driver(session: Session, options: HeadlessOptions) -> GoalDriver:
    """Create and arm the goal; UsageError (before anything is sent) when it cannot."""
    from reasonix_core.goal.state import GoalError

    try:
        session.change_goal("start", options.prompt)
    except GoalError as exc:
        raise UsageError(f"--goal: {exc}") from None
    return session.goal_driver(options.max_goal_rounds, options.goal_token_budget)


def _approved_plan_turn(session: Session) -> AsyncGenerator[ev.Event, None]:
    """The executor's turn over the session's pending plan; UsageError (before
    anything is sent) when no plan waits."""
    from reasonix_core.session.plans import NoPlanWaiting

    try:
        return session.approve_plan()
    except NoPlanWaiting as exc:
        raise UsageError(f"--approve-plan: {exc}") from None


def _init_line(shape: ClaudeShape, session: Session, options: HeadlessOptions) -> dict[str, Any]:
    preset = options.settings.permission_mode or session.config.permissions.preset
    if options.settings.plan_mode:
        preset = "plan"
    return session_init_line(shape, session, preset)


def session_init_line(shape: ClaudeShape, session: Session, preset: str) -> dict[str, Any]:
    """The stream-json ``system/init`` line for ``session`` (headless runs and
    stream sessions); ``preset``: the permission mode the surface reports."""
    from reasonix_core import __version__

    mcp = session.mcp
    servers = [{"name": s.name, "status": s.phase} for s in mcp.status()] if mcp else []
    return shape.init_line(
        cwd=str(session.workspace),
        tools=session.agent.tools.names,
        permission_preset=preset,
        mcp_servers=servers,
        version=__version__,
    )


def _json_default(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    return str(value)
