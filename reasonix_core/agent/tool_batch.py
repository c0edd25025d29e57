"""One step's tool calls: authorised, run in batches, answered exactly once.

Consecutive read-only calls run concurrently as one batch; a writer runs
alone. Every call gets exactly one result message, also when the turn is
cancelled (finished results are kept, the rest marked), so the next request is
valid. Events go to the turn's sink (``agent/event_sink.py``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from reasonix_core import events as ev
from reasonix_core.agent.child_usage import SUBAGENT_USAGE, ChildUsage
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.event_sink import EventSink
from reasonix_core.agent.transcript import (
    NOT_STARTED,
    NOT_STARTED_SHOWN,
    REPEAT,
    UNKNOWN_OUTCOME,
    UNKNOWN_SHOWN,
    for_people,
    reminder,
)
from reasonix_core.errors import ToolArgumentError
from reasonix_core.hooks.names import capability_target, hook_tool, our_tool_input
from reasonix_core.messages import Message, ToolCall
from reasonix_core.permission.gate import Gate
from reasonix_core.permission.summary import summarize_call
from reasonix_core.tool.base import (
    FOR_MODEL,
    SUMMARY,
    ToolContext,
    ToolFamily,
    ToolResult,
    current_call_id,
    current_transcript,
)
from reasonix_core.tool.call_gate import target_hook
from reasonix_core.tool.kept_results import KeptBudget
from reasonix_core.tool.preview import precondition_failure, preview_diff
from reasonix_core.tool.registry import ToolRegistry, internal_error

if TYPE_CHECKING:
    from reasonix_core.agent.snapshots import TurnSnapshots
    from reasonix_core.hooks.engine import Hooks

# Tool progress waiting for the event stream's consumer; more are dropped.
PROGRESS_BUFFER = 256


class ToolHost(Protocol):
    """What running tools reads from (and appends to) its agent, live."""

    tools: ToolRegistry
    tool_context: ToolContext
    gate: Gate | None
    checkpoints: TurnSnapshots | None
    messages: list[Message]

    def append_message(self, msg: Message) -> None: ...

    def turn_number(self) -> int: ...


@dataclass(kw_only=True)
class _CallState:
    """One tool call of a batch: whether it started and its result message."""

    call: ToolCall
    started: bool = False
    message: Message | None = None


class ToolBatchRunner:
    """Runs the tool calls of an agent's steps."""

    def __init__(self, host: ToolHost, events: EventSequence) -> None:
        self.host = host
        self._events = events
        # What the full copies of bounded results may still add to the session.
        self._kept = KeptBudget(host.messages)
        self._repeat_key: tuple[str, str] | None = None
        self._repeat_count = 0
        # What the subagents each call spawns spend, kept with its result for resume.
        self._child_usage = ChildUsage(events.agent_path)

    def batches(self, calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
        """Consecutive read-only calls form one concurrent batch; writers run alone."""
        batches: list[list[ToolCall]] = []
        previous_read_only = False
        for call in calls:
            tool = self.host.tools.get(call.name)
            read_only = bool(tool is not None and tool.read_only)
            if read_only and previous_read_only:
                batches[-1].append(call)
            else:
                batches.append([call])
            previous_read_only = read_only
        return batches

    async def run(self, calls: Sequence[ToolCall], emit: EventSink) -> None:
        """Run every call and append its result, batch after batch."""
        states = [_CallState(call=c) for c in calls]
        by_id = {id(s.call): s for s in states}
        try:
            for batch in self.batches(calls):
                batch_states = [by_id[id(c)] for c in batch]
                for state in batch_states:
                    await emit(
                        self._events(
                            ev.ToolCallStarted,
                            call_id=state.call.id,
                            name=state.call.name,
                            arguments=state.call.arguments,
                        )
                    )
                await self._run_batch(batch_states, emit)
                await self._hook_reports(emit)
                for state in batch_states:
                    await emit(self._finish(state))
        except BaseException:
            self._close_unanswered(states)
            raise

    @property
    def _hooks(self) -> Hooks | None:
        return self.host.tool_context.env.hooks

    async def _hook_reports(self, emit: EventSink) -> None:
        """The hooks the batch ran (PreToolUse, PermissionRequest, PostToolUse...)."""
        hooks = self._hooks
        if hooks is not None:
            for report in hooks.take_reports():
                await emit(self._events(ev.HookRan, **report.fields()))

    def _finish(self, state: _CallState) -> ev.ToolCallFinished:
        assert state.message is not None
        self.host.append_message(state.message)
        meta = state.message.meta
        shown = for_people(state.message, state.call.name)
        return self._events(
            ev.ToolCallFinished,
            call_id=state.call.id,
            name=state.call.name,
            result=state.message.content or "",
            is_error=bool(meta.get("is_error")),
            outcome=str(meta.get("outcome", "ok")),
            diff=str(meta.get("diff") or ""),
            summary=str(meta.get(SUMMARY) or ""),
            for_model=bool(meta.get(FOR_MODEL)),
            full_result="" if shown == state.message.content else shown,
        )

    def _close_unanswered(self, states: Sequence[_CallState]) -> None:
        """Cancelled: every call gets exactly one result so the next request
        is valid. Finished results are kept; the rest are marked."""
        messages = self.host.messages
        for state in states:
            if any(m.tool_call_id == state.call.id for m in messages if m.role == "tool"):
                continue
            if state.message is not None:
                self.host.append_message(state.message)
            elif state.started:
                self.host.append_message(
                    Message(
                        role="tool",
                        tool_call_id=state.call.id,
                        content=UNKNOWN_OUTCOME,
                        meta={"outcome": "unknown", "is_error": True, **UNKNOWN_SHOWN},
                    )
                )
            else:
                self.host.append_message(
                    Message(
                        role="tool",
                        tool_call_id=state.call.id,
                        content=NOT_STARTED,
                        meta={"outcome": "cancelled", "is_error": True, **NOT_STARTED_SHOWN},
                    )
                )

    async def _run_batch(self, batch: list[_CallState], emit: EventSink) -> None:
        """Run one batch, sending tool progress live while it runs.

        Tools report progress through ``ToolContext.tool_progress`` (MCP
        ``notifications/progress``); the reports reach the sink through a
        bounded memory stream. A full stream drops reports rather than slowing
        a tool down. Delegation tools forward their children's events through
        ``ToolContext.child_events`` into the same stream.
        """
        send, receive = anyio.create_memory_object_stream[ev.Event](PROGRESS_BUFFER)

        def report(progress: ev.ToolProgress) -> None:
            try:
                send.send_nowait(progress)
            except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

        async def forward(event: ev.Event) -> None:
            # A subagent's events: never dropped (the metrics count them), so
            # a full stream waits for this stream's consumer.
            self._child_usage.observe(event)
            try:
                await send.send(event)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

        context = self.host.tool_context
        context.tool_progress = report
        context.child_events = forward

        async def work() -> None:
            async with send:
                if len(batch) == 1:
                    await self._execute(batch[0])
                else:
                    async with anyio.create_task_group() as inner:
                        for state in batch:
                            inner.start_soon(self._execute, state)

        async with anyio.create_task_group() as tg:
            tg.start_soon(work)
            async with receive:
                async for progress in receive:
                    await emit(self._renumber(progress))

    def _renumber(self, progress: ev.Event) -> ev.Event:
        if not isinstance(progress, ev.ToolProgress):
            return self._events.adopt(progress)
        return self._events(
            ev.ToolProgress,
            call_id=progress.call_id,
            name=progress.name,
            progress=progress.progress,
            total=progress.total,
            message=progress.message,
            output=progress.output,  # a running command's last lines (bash)
        )

    def _repeat(self, call: ToolCall) -> int:
        try:
            canonical = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
        except (ValueError, TypeError, RecursionError):
            # Not JSON, or nested too deep to parse: the raw text is the key (the
            # call itself then gets an argument error result).
            canonical = call.arguments
        key = (call.name, canonical)
        if key == self._repeat_key:
            self._repeat_count += 1
        else:
            self._repeat_key, self._repeat_count = key, 1
        return self._repeat_count

    async def _execute(self, state: _CallState) -> None:
        call = state.call
        current_call_id.set(call.id)  # this task's context only
        # This agent's own results for session:tool_result (a child's calls set theirs).
        current_transcript.set(self.host.messages)
        count = self._repeat(call)
        try:
            result = await self._authorize_and_call(state)
        except Exception as exc:
            # Whatever a hostile call trips over (the policy on a NUL byte, a bug
            # in a tool), the model reads it as this call's error and the run goes on.
            result = internal_error(call.name, exc)
        text, kept = self._kept.bound(result.text, call.id)
        note = reminder(count, call.name)
        text += note
        meta: dict[str, Any] = {"outcome": result.outcome}
        if note:
            meta[REPEAT] = count
        if result.is_error:
            meta["is_error"] = True
        meta.update(kept)
        for key in ("diff", SUMMARY, FOR_MODEL):  # for people; never sent
            if result.meta.get(key):
                meta[key] = result.meta[key]
        spent = self._child_usage.take(call.id)
        if spent:
            meta[SUBAGENT_USAGE] = spent
        state.message = Message(role="tool", tool_call_id=call.id, content=text, meta=meta)

    async def _authorize_and_call(self, state: _CallState) -> ToolResult:
        call = state.call
        host = self.host
        tool = host.tools.get(call.name)
        if tool is None:
            from reasonix_core.tool.retired import retired_result

            retired = retired_result(call.name)
            if retired is not None:
                return retired
            return ToolResult.error(
                f"unknown tool {call.name!r}; available tools: {', '.join(host.tools.names)}",
                **{SUMMARY: "No such tool.", FOR_MODEL: True},
            )
        try:
            args = ToolRegistry.parse_arguments(call.arguments)
        except ToolArgumentError as exc:
            return ToolResult.error(f"{call.name}: {exc}")
        hooks = self._hooks
        hook, raw = None, call.arguments
        if hooks is not None and hooks.has("PreToolUse"):
            pre = await self._pre_tool_use(hooks, call, args)
            if isinstance(pre, ToolResult):  # a hook blocked it
                return pre
            hook, updated = pre
            if updated is not None:  # checked and validated below as the model's own
                args, raw = updated, json.dumps(updated, ensure_ascii=False)
        # A hook's answer about an MCP tool behind use_capability is about that
        # tool: its own permission check gets it, not the wrapper's.
        inner_hook: tuple[str, str] | None = None
        if hook is not None and capability_target(call.name, args) is not None:
            inner_hook, hook = hook, None
        if host.gate is not None:
            refused = await self._refusal(host.gate, call, tool.read_only, args, hook)
            if refused is not None:
                return refused
        if host.checkpoints is not None and tool.family != ToolFamily.READ:
            # Anything but a file read may change files (an MCP tool too, whatever
            # it declares): the workspace as it was before the call.
            await host.checkpoints.before_tool(host.turn_number(), call.name, args)
        state.started = True
        told = target_hook.set(inner_hook)
        try:
            result = await host.tools.call(call.name, raw, host.tool_context)
        finally:
            target_hook.reset(told)
        if hooks is not None and hooks.has("PostToolUse") and not result.is_error:
            result = await self._post_tool_use(hooks, call, args, result)
        return result

    async def _refusal(
        self,
        gate: Gate,
        call: ToolCall,
        read_only: bool,
        args: dict[str, Any],
        hook: tuple[str, str] | None,
    ) -> ToolResult | None:
        """Ask the permission gate; the result of a refused call, or None to run it."""
        context = self.host.tool_context
        sure_to_fail: ToolResult | None = None

        def precheck() -> str:
            nonlocal sure_to_fail
            sure_to_fail = precondition_failure(call.name, args, context)
            return "" if sure_to_fail is None else sure_to_fail.text

        auth = await gate.authorize(
            tool=call.name,
            read_only=read_only,
            args=args,
            call_id=call.id,
            summary=summarize_call(call.name, args),
            # Built only when the gate will show it to someone.
            preview=lambda: preview_diff(call.name, args, context),
            # A write sure to fail (a file never read) fails before anyone is asked
            # to approve its diff.
            precheck=precheck,
            hook=hook,
        )
        if auth.allowed:
            return None
        if auth.precondition_failed:  # the tool's own error, as it would give it
            return sure_to_fail or ToolResult.error(auth.message)
        return ToolResult.denied(auth.message, auth.summary)

    async def _pre_tool_use(
        self, hooks: Hooks, call: ToolCall, args: Mapping[str, Any]
    ) -> ToolResult | tuple[tuple[str, str] | None, dict[str, Any] | None]:
        """The PreToolUse hooks: the refusal when they block, else their
        ``(permissionDecision, reason)`` for the permission check (allow / ask) or None,
        and the arguments their ``updatedInput`` asks for (our keys) or None."""
        pre = await hooks.fire(
            "PreToolUse",
            hooks.tool_fields(call.name, args, call.id),
            subject=hook_tool(call.name, args)[2],
            session_id=self.host.tool_context.env.session_id,
        )
        if pre.blocked or pre.stop:
            why = pre.reason or pre.stop_reason or "no reason given"
            return ToolResult.denied(
                f"A PreToolUse hook blocked this {call.name} call: {why}",
                f"Blocked by a PreToolUse hook: {why}",
            )
        hook = (
            (pre.permission, pre.permission_reason) if pre.permission in ("allow", "ask") else None
        )
        updated = pre.updated_input
        return hook, (None if updated is None else our_tool_input(call.name, args, updated))

    async def _post_tool_use(
        self, hooks: Hooks, call: ToolCall, args: Mapping[str, Any], result: ToolResult
    ) -> ToolResult:
        """The PostToolUse hooks: what they tell the model (exit 2's stderr, a block's
        reason, additionalContext) follows the tool's own result."""
        fields = hooks.tool_fields(call.name, args, call.id)
        fields["tool_response"] = {"output": result.text, "success": True}
        if "file_path" in fields["tool_input"]:
            fields["tool_response"]["filePath"] = fields["tool_input"]["file_path"]
        post = await hooks.fire(
            "PostToolUse",
            fields,
            subject=hook_tool(call.name, args)[2],
            session_id=self.host.tool_context.env.session_id,
        )
        notes = [n for n in (post.reason if post.blocked else "", post.context) if n]
        if not notes:
            return result
        feedback = "\n".join(notes)
        return dataclasses.replace(
            result, text=f"{result.text}\n\n[PostToolUse hook feedback]\n{feedback}"
        )
