"""TurnController: maps the core's event stream onto transcript widgets.

The session screen owns one controller and runs :meth:`drive` inside its
exclusive ``turn`` worker; every widget update is a method call on the UI
loop. Cancelling the worker raises ``CancelledError`` here: open blocks are
closed, running tool cards marked cancelled, and the error re-raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from reasonix_core.agent.prefix_change import PrefixChangeReason
from reasonix_core.events import (
    CacheBroken,
    CompactionFinished,
    CompactionStarted,
    Event,
    GoalRound,
    HookRan,
    Notice,
    PlanReady,
    PrefixChanged,
    ReasoningDelta,
    Retrying,
    RouteDecided,
    StepStarted,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    UsageReported,
    WebSearched,
)
from reasonix_tui.subagent_router import SubagentRouter
from reasonix_tui.widgets.blocks import NoticeBlock, NoticeLevel
from reasonix_tui.widgets.reasoning_block import ReasoningBlock
from reasonix_tui.widgets.status_bar import StatusBar
from reasonix_tui.widgets.tool_block import ToolBlock
from reasonix_tui.widgets.transcript import Transcript

#: A prefix change the user did not choose, in people's words. The ones they chose
#: (/model, /effort, a rewind, /compact) or were told about (compaction) say nothing.
PREFIX_NOTICES: dict[str, str] = {
    PrefixChangeReason.SYSTEM: "The system prompt changed: the next request starts a new cache.",
    PrefixChangeReason.TOOLS: "The tool list changed: the next request starts a new cache.",
    PrefixChangeReason.TRUNCATE: "The oldest history was cut to fit: the next request starts a new cache.",
    PrefixChangeReason.REASONING_REPLAY: "The provider asked for earlier reasoning: this request starts a new cache.",
}

if TYPE_CHECKING:
    # Markdown (markdown-it, syntax highlighting) is not needed for the first frame:
    # imported on the first answer, or earlier off the event loop (see launch.py).
    from reasonix_tui.widgets.assistant_block import AssistantBlock

log = logging.getLogger(__name__)

# The core says why an answer was cut (output limit, content filter) in a Notice of
# its own; only the stops it does not explain get one here.
STOP_NOTICES = {
    "max_steps": ("Stopped: the turn reached its step limit.", "warning"),
    "cancelled": ("Turn cancelled.", "warning"),
    "plan_saved": ("Plan saved; nothing was executed (plan only).", "info"),
    "plan_pending": ("The plan is waiting; nothing was executed. /plan shows it again.", "info"),
    "plan_rejected": ("Plan rejected; nothing was executed.", "info"),
}

# What a PlanReady tells the user (docs/MODES.md); "await_approval" opens the dialog.
PLAN_NOTICES = {
    "execute": "Plan submitted; the executor carries it out.",
    "approved": "Plan approved; the executor carries it out.",
}


class TurnController:
    def __init__(
        self,
        transcript: Transcript,
        status: StatusBar,
        clock: Callable[[], datetime],
        priced: Callable[[str], bool] = lambda model: True,
    ) -> None:
        self.transcript = transcript
        self.status = status
        self.clock = clock
        # Whether a model's requests have a price (AppServices.priced).
        self.priced = priced
        self.assistant: AssistantBlock | None = None
        self.reasoning: ReasoningBlock | None = None
        # The turn's one "thought" line: later reasoning in the turn folds into it.
        self.thought: ReasoningBlock | None = None
        self.tools: dict[str, ToolBlock] = {}
        self.last_text = ""
        # Blocks streamed by the current request attempt: a retry replays the
        # request, so what the failed attempt showed is taken back.
        self.attempt_blocks: list[AssistantBlock | ReasoningBlock] = []
        # A compaction's own notice already said why it did nothing (no second "failed").
        self.compaction_explained = False
        # What to add under a failed turn with this HTTP status ("" for nothing).
        self.failure_hint: Callable[[int | None], str] = lambda status: ""
        # Children's events and fleet plans go to their cards, never to the transcript.
        self.subagents = SubagentRouter(self.tools.get, transcript.add, status)

    async def drive(self, events: AsyncIterator[Event]) -> None:
        """Consume one stream to its end (or until cancelled)."""
        self.last_text = ""
        self.thought = None
        try:
            async with aclosing(events) as stream:  # type: ignore[type-var]
                async for event in stream:
                    await self.dispatch(event)
        except asyncio.CancelledError:
            await self._close_blocks()
            for block in self.tools.values():
                if block.status == "running":
                    await block.finish("", "cancelled")
            self.subagents.cancel_running()
            await self.notice("Turn cancelled.", "warning")
            raise
        except Exception as exc:  # the stream broke: show it, keep the session usable
            log.exception("turn stream failed")
            await self.notice(f"{type(exc).__name__}: {exc}", "error")
        finally:
            await self._close_blocks()
            self.tools.clear()
            self.subagents.forget()

    async def notice(self, text: str, level: NoticeLevel = "info") -> None:
        await self._close_blocks()
        await self.transcript.add(NoticeBlock(text, level))

    async def dispatch(self, event: Event) -> None:
        if self.subagents.owns(event):
            await self.subagents.dispatch(event)
            return
        for handle in (self._on_stream, self._on_progress, self._on_outcome):
            if await handle(event):
                return
        log.debug("unhandled event %r", event)

    async def _on_stream(self, event: Event) -> bool:
        """What the model streams: text, reasoning and tool calls (True if handled)."""
        match event:
            case TurnStarted() | StepStarted():
                await self._close_blocks()
                self.attempt_blocks.clear()
                compact = getattr(self.transcript.app, "compact_if_due", None)
                if compact is not None:
                    compact()
            case TextDelta(text=text):
                await self._close_reasoning()
                if self.assistant is None:
                    from reasonix_tui.widgets.assistant_block import AssistantBlock

                    self.assistant = AssistantBlock()
                    self.attempt_blocks.append(self.assistant)
                    await self.transcript.add(self.assistant)
                self.last_text += text
                await self.assistant.write(text)
            case ReasoningDelta(text=text):
                if self.reasoning is None and not text.strip():
                    return True  # blank reasoning makes no "thought" line
                await self._close_text()
                if self.reasoning is None:
                    self.reasoning = ReasoningBlock(self.clock())
                    self.attempt_blocks.append(self.reasoning)
                    await self.transcript.add(self.reasoning)
                self.reasoning.append(text)
            case ToolCallDelta(name=name):
                if name:
                    self.status.update_state(hint=f"preparing {name}…")
            case ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
                await self._close_blocks()
                self.status.update_state(hint="")
                started = ToolBlock(call_id, name, arguments)
                self.tools[call_id] = started
                await self.transcript.add(started)
            case ToolCallFinished(call_id=call_id, name=name):
                block = self.tools.get(call_id)
                if block is None:
                    block = ToolBlock(call_id, name, "")
                    await self.transcript.add(block)
                await block.finish_with(event)
            case WebSearched(call_id=call_id, query=query, error=error):
                # The provider's own search, already done: a finished tool-like card.
                await self._close_blocks()
                searched = ToolBlock(call_id, "Searched the web", json.dumps({"query": query}))
                await self.transcript.add(searched)
                await searched.finish(event.outcome, "error" if error else "ok")
            case ToolProgress(call_id=call_id, progress=progress, total=total, message=message):
                block = self.tools.get(call_id)
                if block is not None:
                    block.set_progress(progress, total, message, event.output)
            case _:
                return False
        return True

    async def _on_progress(self, event: Event) -> bool:
        """Usage, retries, cache and compaction news (True if handled)."""
        match event:
            case UsageReported(usage=usage, cost=cost, currency=currency, model=model):
                self.status.add_usage(
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    usage.cache_hit_tokens,
                    cost,
                    currency,
                    priced=self.priced(model),
                    estimated=usage.estimated,
                )
            case Retrying(attempt=attempt, delay=delay, reason=reason):
                await self._close_blocks()
                for block in self.attempt_blocks:
                    await block.remove()
                self.attempt_blocks.clear()
                self.last_text = ""
                await self.notice(f"Retrying in {delay:.0f}s (attempt {attempt}): {reason}")
            case PrefixChanged(reason=reason):
                # Only a change the user did not just choose (and was told the cost of).
                if said := PREFIX_NOTICES.get(reason):
                    await self.notice(said)
            case CacheBroken(reason="unexplained", rebilled_tokens=tokens):
                # A change nothing named (a bug): say so; named ones were announced above.
                await self.notice(
                    f"The prompt cache broke for no named reason: {tokens:,} cached "
                    "tokens billed again (/cache shows where).",
                    "warning",
                )
            case HookRan(outcome=outcome):
                from reasonix_core.hooks.display import hook_line

                await self.notice(
                    hook_line(event), "warning" if outcome in ("error", "timeout") else "info"
                )
            case Notice(level=level, text=text):
                self.compaction_explained = level != "info" or text.startswith("nothing to")
                await self.notice(text, level)
            case CompactionStarted(reason=reason):
                self.compaction_explained = False
                await self.notice(f"Compacting the conversation ({reason})…")
            case CompactionFinished(ok=ok, reason=reason, tokens_after=after):
                if after is not None:  # the gauge shows the new size before the next request
                    self.status.update_state(context_tokens=after)
                if ok:
                    await self.notice("Conversation compacted.")
                elif not self.compaction_explained:
                    await self.notice(f"Compaction failed ({reason}).", "warning")
            case _:
                return False
        return True

    async def _on_outcome(self, event: Event) -> bool:
        """Routes, plans, goal rounds and how the turn ended (True if handled)."""
        match event:
            case RouteDecided(route=route) if route != "executor":
                await self.notice(f"Planner first ({route.replace('_', ' ')}).")
            case PlanReady(plan=plan, disposition=disposition):
                await self._close_blocks()
                if disposition in ("saved", "await_approval"):
                    from reasonix_tui.widgets.assistant_block import AssistantBlock

                    block = AssistantBlock()
                    await self.transcript.add(block)
                    await block.write(plan)
                    await block.finish()
                elif disposition in PLAN_NOTICES:
                    await self.notice(PLAN_NOTICES[disposition])
            case GoalRound(round=number, status=state, rounds=rounds, tokens=spent, cost=cost):
                goal = self.status.state.goal
                if goal is not None:
                    goal = replace(goal, status=state, rounds=rounds, tokens=spent, cost=cost)
                    self.status.update_state(goal=goal)
                await self.notice(f"Goal round {number} done ({state}).")
            case TurnFinished(stop_reason=reason):
                await self._close_blocks()
                if reason in STOP_NOTICES:
                    text, level = STOP_NOTICES[reason]
                    await self.notice(text, level)  # type: ignore[arg-type]
            case TurnFailed(error=error, status=status):
                # A provider error already reads "HTTP 400: …"; do not say it twice.
                code = f" (HTTP {status})" if status and f"HTTP {status}" not in error else ""
                await self.notice(f"Turn failed{code}: {error}", "error")
                hint = self.failure_hint(status)
                if hint:
                    await self.notice(hint, "warning")
            case _:
                return False
        return True

    async def _close_text(self) -> None:
        if self.assistant is not None:
            block, self.assistant = self.assistant, None
            await block.finish()

    async def _close_reasoning(self) -> None:
        if self.reasoning is not None:
            block, self.reasoning = self.reasoning, None
            block.finish(self.clock())
            earlier = self.thought
            if earlier is None or not earlier.is_attached:
                if block.trivial:  # "Ask.": no "thought for 0s" line
                    if block in self.attempt_blocks:
                        self.attempt_blocks.remove(block)
                    await block.remove()
                    return
                self.thought = block
                return
            # One thought line per turn: this reasoning joins the turn's first.
            earlier.absorb(block)
            if block in self.attempt_blocks:
                self.attempt_blocks.remove(block)
            await block.remove()

    async def _close_blocks(self) -> None:
        await self._close_reasoning()
        await self._close_text()
