"""``reasonix run``: drive one turn without a UI and render it as text or JSON.

Returns a :class:`HeadlessOutcome`; the CLI maps it to an exit code and is the
only place that does.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from reasonix_core import events as ev
from reasonix_core.agent.builder import RunSettings, open_runtime
from reasonix_core.errors import SkillError
from reasonix_core.jsontext import dumps_utf8
from reasonix_core.metrics import MetricsSink, RunMetrics
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.skills import expand_skill_command
from reasonix_core.startup_heap import resume_collection

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
            case ev.Retrying(attempt=attempt, delay=delay, reason=reason):
                self._break_line()
                self.err.write(f"retrying ({attempt}) in {delay:.1f}s: {reason}\n")
            case ev.Notice(level=level, text=text):
                self._break_line()
                self.err.write(f"{level}: {text}\n")
            case ev.TurnFailed(error=error):
                self._break_line()
                self.err.write(f"error: {error}\n")
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
    """Say which declared MCP servers are unavailable before the run's own events,
    so a script knows why their tools are missing."""
    for status in mcp.status() if mcp is not None else ():
        if status.phase in ("failed", "invalid"):
            why = status.reason or status.error_class or status.phase
            yield ev.Notice(
                level="warning",
                text=f"MCP server {status.name!r} is unavailable ({why}); its tools are not offered",
            )
    async for event in events:
        yield event


def _printable(text: str) -> str:
    """Model text as a UTF-8 stream can take it: a lone surrogate is shown as
    ``\\ud800`` instead of failing the write."""
    if text.isascii():
        return text
    # backslashreplace touches only what UTF-8 cannot encode: other text is unchanged.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _short(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def run_headless(
    options: HeadlessOptions,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> HeadlessOutcome:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    started = time.monotonic()
    sink = MetricsSink(options.metrics_path)
    render = _TextRenderer(out, err) if options.output_format == "text" else None
    final_text = ""
    error: ev.TurnFailed | None = None
    session_id = ""
    finished: ev.TurnFinished | None = None

    def emit(event: ev.Event) -> None:
        sink.record(event)
        if render is not None:
            render(event)
        elif options.output_format == "stream-json":
            out.write(dumps_utf8(event.to_json(), default=_json_default) + "\n")
            out.flush()

    refused: SkillError | None = None
    async with open_runtime(
        options.settings, approver=FailClosedApprover(), overrides=options.overrides
    ) as runtime:
        resume_collection()  # start-up is over (reasonix_core.startup_heap)
        agent = runtime.agent
        session_id = agent.session_id
        for text in runtime.skills.notices():
            emit(ev.Notice(level="warning", text=text))
        try:
            # ``/<skill> args`` runs the skill: its body becomes the prompt.
            prompt = expand_skill_command(options.prompt, runtime.skills) or options.prompt
        except SkillError as exc:
            # A usage error before anything is sent, raised once the runtime is
            # closed (its task groups would wrap it in an exception group).
            refused = exc
        else:
            try:
                async with aclosing(agent.run(prompt)) as agent_events:
                    async for event in _with_mcp_notices(runtime.mcp, agent_events):
                        emit(event)
                        if isinstance(event, ev.TurnFinished):
                            finished = event
                            final_text = event.text
                        elif isinstance(event, ev.TurnFailed):
                            error = event
            except Exception as exc:
                # Last resort for a bug outside any tool call (a tool's own failure is
                # already a result): the run still ends with its result and metrics.
                log.info("the run raised", exc_info=exc)
                finished = None
                error = ev.TurnFailed(error=f"internal error: {type(exc).__name__}: {exc}")
                emit(error)
            except BaseException:
                sink.finish("cancelled")
                raise
    if refused is not None:
        raise refused
    # A run stopped by --max-steps did not finish its task: scripts must see that.
    ok = error is None and finished is not None and finished.stop_reason != "max_steps"
    if ok:
        outcome = "success"
    elif finished is not None and finished.stop_reason == "max_steps":
        outcome = "max_steps"
    else:
        outcome = "error" if error is not None else "incomplete"
    metrics = sink.finish(outcome)
    result = {
        "type": "result",
        "subtype": "success" if ok else ("error_max_steps" if outcome == "max_steps" else "error"),
        "is_error": not ok,
        "result": final_text
        if ok
        else (error.error if error else f"the run did not finish ({outcome})"),
        "session_id": session_id,
        "num_turns": metrics.steps,
        "stop_reason": finished.stop_reason if finished else None,
        "duration_ms": int((time.monotonic() - started) * 1000),
        "usage": {
            "input_tokens": metrics.prompt_tokens,
            "output_tokens": metrics.completion_tokens,
            "cache_read_input_tokens": metrics.cache_hit_tokens,
            "cache_miss_input_tokens": metrics.cache_miss_tokens,
        },
        "total_cost": round(metrics.cost, 10),
        "currency": metrics.currency,
        "metrics": metrics.to_json(),
    }
    if options.output_format in ("json", "stream-json"):
        out.write(dumps_utf8(result) + "\n")
        out.flush()
    return HeadlessOutcome(ok=ok, result=result, metrics=metrics)


def _json_default(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    return str(value)
