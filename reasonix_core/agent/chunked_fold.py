"""The chunked fold: a history too large for one summary request, summarised
in parts and tree-reduced into one digest (seed 000 §3.6; seed 003, decision 3).

Only a manual compaction (``/compact``, ``reasonix compact``) and the overflow
recovery path fold in chunks (``CompactionReason.folds_in_chunks``); pressure
compaction keeps its single summary request and never comes here.

1. **Chunks.** The history's replay units (split by the context manager, so a
   tool call never leaves its results) are packed, oldest first, into chunk
   requests that each fit the summary prompt budget. Chunk 1 is the
   conversation's true prefix plus the instruction, byte for byte the shape of
   the single summary request, so the provider serves it from its prefix
   cache. Later chunks share the system prompt and the tool schemas (sent with
   every request) and open with a one-line note that earlier parts are
   summarised separately.
2. **Reduce.** The chunk summaries are merged, consecutive ones grouped so
   each merge request fits the budget, level after level until one summary
   remains: that summary replaces the history exactly as a single summary does.

Nothing is installed here: the caller installs the final summary, so a
failure or a cancellation mid-fold leaves the view as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reasonix_core.agent.compaction_meta import CompactionMark, mark
from reasonix_core.agent.summary_call import (
    SUMMARY_CONTENTS,
    Summarize,
    history_ack,
    read_summary,
    summary_request,
    with_focus,
)
from reasonix_core.agent.tokens import TokenEstimator
from reasonix_core.errors import ReasonixError
from reasonix_core.messages import Message

PART_LEAD = (
    "[This is a later part of a long conversation; the parts before it are summarised separately.]"
)
PART_ACK = "Understood."
# Sized with the largest part numbers a fold could print, so a chunk packed
# against it still fits once the real numbers are written in.
_WIDEST_PART = 9999


def part_instruction(part: int, parts: int) -> str:
    """The instruction closing chunk ``part`` of ``parts``."""
    return (
        "<compaction-request>\n"
        f"This conversation is too long for one summary request, so it is summarised in "
        f"parts. The messages above are part {part} of {parts}. Summarise this part only; "
        "the summaries of all parts are then merged into one, which replaces the "
        "conversation. If this part starts with an earlier context summary, carry it "
        "into yours.\n\nWrite the summary so that the work can continue from the merged "
        "summaries alone:\n" + SUMMARY_CONTENTS
    )


MERGE_INSTRUCTION = (
    "<compaction-request>\n"
    "The partial summaries above cover consecutive parts of one conversation, oldest "
    "first. Merge them into one summary that replaces them; where a later part "
    "changes an earlier one, keep the later state.\n\nWrite the summary so that you "
    "can continue the work from it alone:\n" + SUMMARY_CONTENTS
)


class ChunkedFoldFailed(ReasonixError):
    """A chunk or merge request of the fold gave no digest (nothing was installed)."""


@dataclass(frozen=True, slots=True)
class FoldReport:
    """What a finished fold produced: the summary and how many requests of each kind."""

    text: str
    chunks: int
    merges: int


@dataclass
class _Request:
    """One request of the fold, and its raw token count for calibration."""

    what: str  # "part 2 of 4", "merge 1 of 2 (level 1)": named in a failure
    messages: list[Message]
    raw: int  # its messages and tools, unscaled


class ChunkedFold:
    """Fold ``units`` (the history after the system message, in replay units)
    into one summary with :meth:`run`; the requests' own events go wherever
    ``summarize`` sends them."""

    def __init__(
        self,
        *,
        estimator: TokenEstimator,
        tools_raw: int,
        budget: int,
        output_cap: int,
        summarize: Summarize,
        focus: str = "",
    ) -> None:
        self.estimator = estimator
        self.tools_raw = tools_raw  # every request carries the tool schemas
        self.budget = budget  # the largest prompt of one request, in tokens
        self.output_cap = output_cap
        self.summarize = summarize
        self.focus = focus
        self.paid = False  # at least one request was billed
        self.report: FoldReport | None = None

    # -- sizes --------------------------------------------------------------

    def _fits(self, raw: int) -> bool:
        """Whether messages of ``raw`` tokens (unscaled) fit one request with the tools."""
        return self.estimator.scale(raw + self.tools_raw) <= self.budget

    def _raw(self, messages: Sequence[Message]) -> int:
        """A request's raw count, tools included (what its real count calibrates)."""
        return self.estimator.messages(messages) + self.tools_raw

    def _instruction(self, text: str) -> Message:
        return Message(
            role="user", content=with_focus(text, self.focus), meta=mark(CompactionMark.REQUEST)
        )

    # -- the plan -------------------------------------------------------------

    @staticmethod
    def _part_messages(
        system: Message, chunk: list[Message], instruction: Message
    ) -> list[Message]:
        """A later chunk's request: the lead note (then an acknowledgement when
        the chunk opens with a user message, so the roles alternate)."""
        lead = [_lead()] if chunk[0].role == "assistant" else [_lead(), _part_ack()]
        return summary_request([system, *lead, *chunk], instruction)

    def plan(self, system: Message, units: Sequence[Sequence[Message]]) -> list[list[Message]]:
        """The chunks, oldest first: consecutive units, each chunk's request
        under the budget. Raises :class:`ChunkedFoldFailed` for a unit that
        does not fit a request on its own."""
        message = self.estimator.message
        widest = self._instruction(part_instruction(_WIDEST_PART, _WIDEST_PART))
        # The fixed part of a chunk request: the system prompt, the lead (chunks
        # after the first), an acknowledgement either side, the instruction.
        first_base = message(system) + message(widest) + message(history_ack())
        later_base = first_base + message(_lead()) + message(_part_ack())
        chunks: list[list[Message]] = []
        current: list[Message] = []
        used = first_base
        for number, unit in enumerate(units, start=1):
            cost = sum(message(m) for m in unit)
            if current and self._fits(used + cost):
                current.extend(unit)
                used += cost
                continue
            if current:
                chunks.append(current)
            base = later_base if chunks else first_base
            if not self._fits(base + cost):
                size = self.estimator.scale(base + cost + self.tools_raw)
                raise ChunkedFoldFailed(
                    f"replay unit {number} of the history (about {size:,} tokens with its "
                    f"request) does not fit one summary request ({self.budget:,} tokens)"
                )
            current = list(unit)
            used = base + cost
        if current:
            chunks.append(current)
        return chunks

    # -- the fold -------------------------------------------------------------

    async def run(self, system: Message, units: Sequence[Sequence[Message]]) -> FoldReport:
        """Summarise every chunk, then merge the summaries; returns (and keeps in
        :attr:`report`) the result. Raises :class:`ChunkedFoldFailed` when a
        request gives no digest."""
        chunks = self.plan(system, units)
        total = len(chunks)
        summaries: list[str] = []
        for part, chunk in enumerate(chunks, start=1):
            instruction = self._instruction(part_instruction(part, total))
            if part == 1:
                # The conversation's own prefix, as sent: served from the cache.
                messages = summary_request([system, *chunk], instruction)
            else:
                messages = self._part_messages(system, chunk, instruction)
            request = _Request(f"part {part} of {total}", messages, self._raw(messages))
            summaries.append(await self._ask(request))
        merges = 0
        level = 0
        while len(summaries) > 1:
            level += 1
            groups = self._groups(system, summaries)
            if all(len(g) == 1 for g in groups):
                raise ChunkedFoldFailed(
                    f"no two partial summaries fit one merge request ({self.budget:,} tokens)"
                )
            merged: list[str] = []
            for index, group in enumerate(groups, start=1):
                if len(group) == 1:
                    merged.append(group[0])  # carried to the next level as it is
                    continue
                messages = self._merge_messages(system, group)
                request = _Request(
                    f"merge {index} of {len(groups)} (level {level})",
                    messages,
                    self._raw(messages),
                )
                merged.append(await self._ask(request))
                merges += 1
            summaries = merged
        self.report = FoldReport(summaries[0], total, merges)
        return self.report

    def _merge_messages(self, system: Message, group: Sequence[str]) -> list[Message]:
        parts = "\n".join(
            f'<partial-summary part="{i}">\n{text}\n</partial-summary>'
            for i, text in enumerate(group, start=1)
        )
        body = f"{parts}\n\n{with_focus(MERGE_INSTRUCTION, self.focus)}"
        return [system, Message(role="user", content=body, meta=mark(CompactionMark.REQUEST))]

    def _groups(self, system: Message, summaries: list[str]) -> list[list[str]]:
        """Consecutive summaries, as many per merge request as fit the budget."""
        groups: list[list[str]] = []
        current: list[str] = []
        for text in summaries:
            trial = [*current, text]
            if current and not self._fits(
                self.estimator.messages(self._merge_messages(system, trial))
            ):
                groups.append(current)
                current = [text]
            else:
                current = trial
        if current:
            groups.append(current)
        return groups

    async def _ask(self, request: _Request) -> str:
        """Send one request; returns its summary."""
        backend = self.estimator.backend
        call = await self.summarize(
            request.messages, with_tools=True, max_output_tokens=self.output_cap
        )
        if call.usage is not None:
            self.paid = True
            if backend == self.estimator.backend:
                self.estimator.calibrate(request.raw, call.usage.prompt_tokens)
        text, problem = read_summary(call, self.output_cap)
        if problem:
            raise ChunkedFoldFailed(f"the chunked summary failed at {request.what}: {problem}")
        return text


def _lead() -> Message:
    return Message(role="user", content=PART_LEAD, meta=mark(CompactionMark.PART))


def _part_ack() -> Message:
    return Message(role="assistant", content=PART_ACK, meta=mark(CompactionMark.ACK))
