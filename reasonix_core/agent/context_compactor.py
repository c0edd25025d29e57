"""The async compactor: one summary of the view's old prefix, by one cached
request or a chunked fold, returned as a candidate view (nothing installed).

The summary request is the normal request cut at a unit boundary - same system
prompt, same message bytes, same tools schema - plus one final user
instruction, so it hits the prefix cache. A request the provider refuses as
too long is re-planned smaller (twice at most), then sent as a bounded
plain-text transcript; when someone asked for it (``/compact``, an overflow)
a history too large for one request is folded in chunks
(``agent/chunked_fold.py``). The context manager installs what this returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

from reasonix_core.agent.chunked_fold import ChunkedFold, ChunkedFoldFailed
from reasonix_core.agent.compaction_meta import (
    SUMMARY_KEY,
    CompactionMark,
    FailureStatus,
    mark,
)
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.context_overflow import is_context_overflow, parse_overflow
from reasonix_core.agent.context_planning import (
    Budgets,
    SummarySource,
    plan_cut,
    raw_tokens,
    unit_starts,
    with_lead,
)
from reasonix_core.agent.context_projection import SUMMARY_ACK, Entry
from reasonix_core.agent.model_call import Reply
from reasonix_core.agent.summary_call import (
    COMPACTION_INSTRUCTION,
    Summarize,
    compaction_instruction,
    read_summary,
    summary_request,
)
from reasonix_core.agent.tokens import TokenEstimator
from reasonix_core.messages import Message

REPLAN_LIMIT = 2
BOUNDED_TOOL_CHARS = 2000


class CompactorHost(Protocol):
    """What the compactor reads from (and tells) the context manager."""

    @property
    def estimator(self) -> TokenEstimator: ...

    @property
    def budgets(self) -> Budgets: ...

    @property
    def generation(self) -> int: ...

    def learn_window(self, limit: int) -> None:
        """The provider named a smaller window: use it from now on."""


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """What one summary attempt produced (``entries`` None: it failed)."""

    entries: list[Entry] | None = None
    status: FailureStatus = FailureStatus.FAILED
    detail: str = ""
    folded: tuple[int, int] | None = None  # (chunks, merges) of a chunked fold


class Compactor:
    """Writes one summary of ``entries`` for a context manager (``host``)."""

    def __init__(
        self,
        host: CompactorHost,
        *,
        summarize: Summarize,
        tools: str,
        focus: str,
        reason: CompactionReason,
    ) -> None:
        self.host = host
        self.summarize = summarize
        self.tools = tools  # the tool schemas' canonical JSON, for estimates
        self.focus = focus
        self.reason = reason

    @property
    def _estimator(self) -> TokenEstimator:
        return self.host.estimator

    def _tools_raw(self) -> int:
        return self._estimator.count_cached_text(self.tools) if self.tools else 0

    def _cut(
        self,
        entries: Sequence[Entry],
        source: SummarySource,
        *,
        below: int | None = None,
        fit: bool = True,
    ) -> tuple[int | None, str]:
        return plan_cut(
            entries,
            source,
            estimator=self._estimator,
            budgets=self.host.budgets,
            overflow=self.reason is CompactionReason.OVERFLOW,
            below=below,
            fit=fit,
        )

    async def summarise(self, entries: list[Entry], source: SummarySource) -> SummaryResult:
        """One digest of the view's old prefix, as the candidate view."""
        cut, why = self._cut(entries, source)
        if self.reason.folds_in_chunks:
            whole, _ = self._cut(entries, source, fit=False)
            if whole is not None and (cut is None or cut < whole):
                # One request cannot carry all it should summarise: fold it in chunks.
                budget = self.host.budgets.prompt_budget
                return await self._fold(entries, source.entries, whole, budget)
        if cut is None:
            return SummaryResult(status=FailureStatus.BLOCKED, detail=why)
        return await self._request(entries, source, cut)

    async def _request(
        self, entries: list[Entry], source: SummarySource, cut: int
    ) -> SummaryResult:
        """The single summary request; re-planned or bounded after an overflow."""
        estimator = self._estimator
        src = source.entries
        instruction = Message(
            role="user",
            content=compaction_instruction(self.focus),
            meta=mark(CompactionMark.REQUEST),
        )
        replans = 0
        bounded = False
        while True:
            if bounded:
                # A plain-text transcript without the tools: no cache, but it fits.
                messages = [src[0].message, self._bounded_transcript(src[1:cut])]
                raw = estimator.messages(messages)
            else:
                messages = summary_request([e.message for e in src[:cut]], instruction)
                raw = estimator.messages(messages) + self._tools_raw()
            backend = estimator.backend
            call = await self.summarize(
                messages, with_tools=not bounded, max_output_tokens=self.host.budgets.summary_cap
            )
            if call.usage is not None and backend == estimator.backend:
                estimator.calibrate(raw, call.usage.prompt_tokens)
            if call.error is None or not is_context_overflow(call.error) or bounded:
                return self._read(entries, cut, call)
            limit, prompt = parse_overflow(call.error.message)
            if prompt and backend == estimator.backend:
                estimator.calibrate(raw, prompt)
            if limit and limit < self.host.budgets.window:
                self.host.learn_window(limit)
            if self.reason.folds_in_chunks:
                # Refused although it was planned to fit: fold it in chunks sized
                # on the corrected count, at most half the refused request when
                # the provider did not say how large it was.
                refused = estimator.scale(raw)
                prompt_budget = self.host.budgets.prompt_budget
                budget = prompt_budget if refused > prompt_budget else refused // 2
                return await self._fold(entries, src, cut, budget)
            smaller = None
            if replans < REPLAN_LIMIT:
                replans += 1
                total = estimator.scale(raw_tokens(estimator, src) + self._tools_raw())
                source = SummarySource(src, total, source.sent_counts)
                smaller, _ = self._cut(entries, source, below=cut)
            if smaller is not None:
                cut = smaller
            else:
                bounded = True

    def _read(self, entries: list[Entry], cut: int, call: Reply) -> SummaryResult:
        text, detail = read_summary(call, self.host.budgets.summary_cap)
        if not text:
            return SummaryResult(detail=detail)
        return self._digest(entries, cut, text)

    async def _fold(
        self, entries: list[Entry], src: list[Entry], cut: int, budget: int
    ) -> SummaryResult:
        """Summarise ``src[1:cut]`` in chunks (``agent/chunked_fold.py``)."""
        bounds = [*unit_starts(src[:cut]), cut]
        units = [[e.message for e in src[a:b]] for a, b in pairwise(bounds)]
        fold = ChunkedFold(
            estimator=self._estimator,
            tools_raw=self._tools_raw(),
            budget=budget,
            output_cap=self.host.budgets.summary_cap,
            summarize=self.summarize,
            focus=self.focus,
        )
        try:
            report = await fold.run(src[0].message, units)
        except ChunkedFoldFailed as exc:
            return SummaryResult(detail=str(exc))
        result = self._digest(entries, cut, report.text)
        return SummaryResult(
            result.entries, result.status, result.detail, (report.chunks, report.merges)
        )

    def _digest(self, entries: list[Entry], cut: int, text: str) -> SummaryResult:
        """The view with ``text`` in place of ``entries[1:cut]``, if it is smaller."""
        summary = Message(
            role="user",
            content=(
                f'<context-summary generation="{self.host.generation + 1}">\n'
                "Earlier parts of this conversation were compacted into the summary below; "
                "the full transcript is kept in the local session.\n\n"
                f"{text}\n</context-summary>"
            ),
            meta={**mark(CompactionMark.SUMMARY), SUMMARY_KEY: text},
        )
        candidate = with_lead(entries[0], Entry(summary), SUMMARY_ACK, entries[cut:])
        estimator = self._estimator
        added = raw_tokens(estimator, candidate[1 : len(candidate) - (len(entries) - cut)])
        if added >= raw_tokens(estimator, entries[1:cut]):
            return SummaryResult(
                detail="the summary was not smaller than the history it would replace"
            )
        return SummaryResult(entries=candidate)

    def _bounded_transcript(self, entries: Sequence[Entry]) -> Message:
        """The prefix as one plain-text user message: tool results cut to 2000 chars."""
        parts: list[str] = []
        for e in entries:
            m = e.message
            if m.role == "tool":
                body = m.content or ""
                if len(body) > BOUNDED_TOOL_CHARS:
                    body = body[:BOUNDED_TOOL_CHARS] + " [... cut ...]"
                parts.append(f"[tool result {m.tool_call_id}]\n{body}")
            elif m.role == "assistant":
                text = m.content or ""
                calls = "".join(f"\n[tool call {c.name}] {c.arguments}" for c in m.tool_calls)
                parts.append(f"[assistant]\n{text}{calls}")
            else:
                parts.append(f"[{m.role}]\n{m.content or ''}")
        estimator = self._estimator
        budget = self.host.budgets.prompt_budget - estimator.scale(
            estimator.count_cached_text(COMPACTION_INSTRUCTION) + 64
        )
        kept: list[str] = []
        used = 0
        for part in reversed(parts):
            cost = estimator.scale(estimator.count_text(part) + 2)
            if used + cost > budget:
                kept.append("[... the earlier part of the transcript is omitted ...]")
                break
            kept.append(part)
            used += cost
        transcript = "\n\n".join(reversed(kept))
        return Message(
            role="user",
            content=f"<transcript>\n{transcript}\n</transcript>\n\n"
            + compaction_instruction(self.focus),
            meta=mark(CompactionMark.REQUEST),
        )
