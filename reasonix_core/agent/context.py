"""Context management: cache-first compaction at one threshold (seed 000 §3.6).

The canonical transcript (``Agent.messages``, mirrored by the session JSONL) is
append-only and never rewritten. What a provider sees is the **view**: the
installed checkpoint (a projection of the canonical messages it covers) plus
the canonical messages appended after it. Below the trigger nothing changes, so
every request is a byte-exact extension of the previous one and DeepSeek's
prefix cache keeps hitting.

At ``trigger = floor(context_window × compact_ratio)`` one single-flight
maintenance transaction runs before the step's request is built:

1. prune: tool results over 8192 code points become ``4096 head + marker +
   1024 tail`` (in the projection; the canonical text is untouched). If that
   brings the view under the trigger, no summary is requested.
2. summary: the contiguous old prefix of the view is summarised and only the
   most recent 16% of the window is kept verbatim (never splitting an
   assistant tool call from its results). The summary request is the normal
   request cut at a unit boundary - same system prompt, same message bytes,
   same tools schema - plus one final user instruction, so it hits the cache.
   A later threshold summarises a view that starts with the previous summary:
   previous summary + new history merge into one digest.
3. truncate: at the hard limit (or on a provider overflow) when no summary can
   form, a lossy projection blanks the oldest tool results, then drops the
   oldest replay units, with explicit markers; if even that cannot get under
   the trigger, :class:`CompactionRequired` is raised.

Every installed projection is a new *generation*, persisted beside the
transcript (``<session>.context.json``); a restart restores it. Failures are
recorded per generation and are not retried automatically (for pay) until the
view has grown by another 5% of the window; manual compaction always retries.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import aclosing, contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import anyio

from reasonix_core import events as ev
from reasonix_core.agent.chunked_fold import ChunkedFold, ChunkedFoldFailed
from reasonix_core.agent.compaction_reason import CompactionReason
from reasonix_core.agent.model_call import Reply
from reasonix_core.agent.prefix_change import PrefixChangeReason
from reasonix_core.agent.summary_call import (
    COMPACTION_INSTRUCTION,
    Summarize,
    compaction_instruction,
    read_summary,
    summary_request,
)
from reasonix_core.agent.tokens import TokenEstimator
from reasonix_core.errors import ProviderError, ReasonixError
from reasonix_core.messages import Message

if TYPE_CHECKING:
    from reasonix_core.agent.session import SessionStore

log = logging.getLogger(__name__)

DEFAULT_COMPACT_RATIO = 0.80
PRUNE_LIMIT = 8192
PRUNE_HEAD = 4096
PRUNE_TAIL = 1024
PRUNE_MARKER = "[... tool result middle pruned ...]"
KEEP_RATIO = 0.16
HEADROOM_RATIO = 0.05
HEADROOM_MIN = 256
SUMMARY_OUTPUT_CAP = 8192
MAX_PRESSURE_SUMMARIES = 2
REPLAN_LIMIT = 2
BOUNDED_TOOL_CHARS = 2000
RETRY_GROWTH_RATIO = 0.05
# Load the real tokenizer once the view passes this share of the trigger.
TOKENIZER_LOAD_RATIO = 0.5
# Count uncached messages in a worker thread above this many characters.
THREAD_COUNT_CHARS = 200_000
CHECKPOINT_VERSION = 1

BLANK_MARKER = (
    "[tool result removed to fit the context window; the full result is kept in the "
    "local session transcript]"
)
SUMMARY_ACK = "Understood. I will continue from this summary."
TRUNCATE_ACK = "Understood."


class CompactionRequired(ReasonixError):
    """The view cannot be brought under the compaction threshold, not even lossily."""


# --------------------------------------------------------------------------- pure helpers


def prune_text(text: str) -> str:
    """``4096 head + marker + 1024 tail`` for texts over 8192 code points."""
    if len(text) <= PRUNE_LIMIT:
        return text
    return text[:PRUNE_HEAD] + PRUNE_MARKER + text[-PRUNE_TAIL:]


def headroom_for(window: int) -> int:
    return max(HEADROOM_MIN, math.floor(window * HEADROOM_RATIO))


def trigger_tokens(window: int, ratio: float) -> int:
    return math.floor(window * ratio)


_OVERFLOW = re.compile(
    r"maximum context length|context length|context window|context_length_exceeded"
    r"|too many tokens|prompt is too long|input is too long|request too large"
    r"|(messages?|prompt|input|request)[^.]{0,40}too long|reduce the length",
    re.IGNORECASE,
)
_LIMIT = re.compile(r"maximum context length is (\d+)", re.IGNORECASE)
_REQUESTED = re.compile(r"requested (\d+) tokens(?:\s*\((\d+) in the messages)?", re.IGNORECASE)


def is_context_overflow(exc: BaseException) -> bool:
    """A provider's refusal of a request longer than the model's context."""
    if not isinstance(exc, ProviderError) or exc.retryable:
        return False
    if exc.status not in (400, 413, None):
        return False
    return bool(_OVERFLOW.search(exc.message or ""))


def parse_overflow(message: str) -> tuple[int | None, int | None]:
    """(context limit, prompt tokens) from DeepSeek-style overflow wording."""
    limit = prompt = None
    if m := _LIMIT.search(message):
        limit = int(m.group(1))
    if m := _REQUESTED.search(message):
        prompt = int(m.group(2) or m.group(1))
    return limit, prompt


def _message_digest(msg: Message) -> str:
    h = hashlib.sha256()
    for part in (msg.role, msg.content or "", msg.tool_call_id or ""):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    for call in msg.tool_calls:
        h.update(call.id.encode() + b"\0")
    return h.hexdigest()[:16]


def _with_content(msg: Message, content: str, **meta: Any) -> Message:
    return Message(
        role=msg.role,
        content=content,
        reasoning_content=msg.reasoning_content,
        tool_calls=msg.tool_calls,
        tool_call_id=msg.tool_call_id,
        name=msg.name,
        meta={**msg.meta, **meta},
    )


def transform(msg: Message, mode: str) -> Message:
    """The projected form of a canonical message (deterministic)."""
    if mode == "prune" and msg.role == "tool":
        return _with_content(msg, prune_text(msg.content or ""), projection="prune")
    if mode == "blank" and msg.role == "tool":
        return _with_content(msg, BLANK_MARKER, projection="blank")
    return msg


@dataclass(frozen=True, slots=True)
class Entry:
    """One message of the view: a canonical message (``ref``), maybe transformed,
    or a literal the projection added (summary, acknowledgement, marker)."""

    message: Message
    ref: int | None = None
    mode: str = ""

    def to_record(self) -> dict[str, Any]:
        if self.ref is not None:
            return {"ref": self.ref, **({"mode": self.mode} if self.mode else {})}
        return {"message": self.message.to_record()}


@dataclass(kw_only=True)
class Checkpoint:
    """The installed projection: what replaces canonical messages ``[0, upto)``."""

    generation: int
    kind: str  # "prune" | "summary" | "truncate"
    reason: CompactionReason
    upto: int  # canonical messages[0:upto] are replaced by ``entries``
    entries: tuple[Entry, ...]
    anchor: str  # digest of canonical[upto - 1]
    tokens_before: int = 0
    tokens_after: int = 0

    def to_record(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "kind": self.kind,
            "reason": self.reason.value,
            "upto": self.upto,
            "anchor": self.anchor,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "items": [e.to_record() for e in self.entries],
        }

    @property
    def summary(self) -> str | None:
        for entry in self.entries:
            if entry.ref is None and entry.message.meta.get("compaction") == "summary":
                return entry.message.meta.get("summary")
        return None


@dataclass(kw_only=True)
class Failure:
    """A compaction that could not form, not retried until the view grows."""

    generation: int
    status: str  # "failed" (a paid request gave no digest) | "blocked" (nothing could be planned)
    detail: str
    tokens: int  # the view's estimate at the attempt
    turn: int = 0

    def to_record(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "status": self.status,
            "detail": self.detail,
            "tokens": self.tokens,
            "turn": self.turn,
        }


@dataclass(frozen=True, slots=True)
class Sent:
    """What a normal request contained, for calibration and the anchor."""

    generation: int
    count: int
    raw: int
    backend: str


@dataclass(slots=True)
class _Anchor:
    """The last real prompt count: estimates add what was appended since."""

    generation: int
    count: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a maintenance transaction reads and may call, passed in by its
    caller: the canonical transcript, the tool schemas' canonical JSON and the
    summary request."""

    messages: Sequence[Message]
    tools: str
    summarize: Summarize
    focus: str = ""  # what a manual compaction's summary should keep (``/compact <focus>``)


@dataclass(frozen=True, slots=True)
class CompactionDecision:
    """Why the view must change now and what it covers: the view's entries
    (canonical messages ``[0, upto)``), their estimate, and the pruned
    projection if pruning alone changes it."""

    reason: CompactionReason
    entries: list[Entry]
    upto: int
    tokens: int
    pruned: list[Entry] | None
    force: bool


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What one compaction did; its caller turns it into events.

    ``changed``: the prefix-change reason if a new projection was installed;
    ``truncated``: (tool results blanked, messages dropped) of a lossy cut;
    ``failure_status``/``failure_detail``: why a summary could not form;
    ``unfit``: set (the error text) when not even a truncation fits: the
    caller raises :class:`CompactionRequired` with it."""

    reason: CompactionReason
    tokens_before: int
    tokens_after: int
    trigger: int
    window: int
    changed: PrefixChangeReason | None = None
    summaries: int = 0
    folded: tuple[int, int] | None = None  # (chunks, merges) when the summary was folded
    truncated: tuple[int, int] | None = None
    failure_status: str = ""
    failure_detail: str = ""
    ok: bool = False
    unfit: str = ""


@dataclass(frozen=True, slots=True)
class OverflowReading:
    """What a provider's overflow error said: a smaller window it named
    (now in use), and the prompt size it counted, if any."""

    learned_window: int | None
    prompt_tokens: int | None


@dataclass
class _SummaryResult:
    """What one summary attempt produced (``entries`` None: it failed)."""

    entries: list[Entry] | None = None
    status: str = "failed"
    detail: str = ""
    paid: bool = False
    folded: tuple[int, int] | None = None  # (chunks, merges) of a chunked fold


@dataclass
class _Source:
    """The view the summary request is cut from: the entries as last sent (so
    the provider's cache covers the prefix), their total, and the view lengths
    the provider has processed in that generation (its cached unit ends)."""

    entries: list[Entry]
    total: int
    sent_counts: list[int]


@dataclass
class _Txn:
    """What a transaction changed so far."""

    changed: PrefixChangeReason | None = None
    summaries: int = 0
    folded: tuple[int, int] | None = None


# --------------------------------------------------------------------------- the manager


class ContextManager:
    """Owns the checkpoint, the token estimate and the maintenance transaction."""

    def __init__(
        self,
        *,
        window: int,
        ratio: float = DEFAULT_COMPACT_RATIO,
        estimator: TokenEstimator | None = None,
        store: SessionStore | None = None,
    ) -> None:
        self.window = window
        self.ratio = ratio
        self.estimator = estimator or TokenEstimator()
        self.store = store
        self.checkpoint: Checkpoint | None = None
        self.generation = 0
        self.failure: Failure | None = None
        self.turn = 0
        self.turn_summaries = 0
        self._anchor: _Anchor | None = None
        self._sent_counts: list[int] = []
        self._tools = ""  # the tool schemas' canonical JSON, for estimates
        self._busy = False

    # -- thresholds ---------------------------------------------------------

    @property
    def trigger(self) -> int:
        return trigger_tokens(self.window, self.ratio)

    @property
    def headroom(self) -> int:
        return headroom_for(self.window)

    @property
    def hard_limit(self) -> int:
        return self.window - self.headroom

    @property
    def keep_budget(self) -> int:
        return math.floor(self.window * KEEP_RATIO)

    @property
    def summary_cap(self) -> int:
        return max(256, min(SUMMARY_OUTPUT_CAP, self.window // 10))

    @property
    def prompt_budget(self) -> int:
        """Largest summary prompt: the window less the output cap and the headroom."""
        return self.window - self.summary_cap - self.headroom

    # -- the view -----------------------------------------------------------

    def entries(self, canonical: Sequence[Message]) -> list[Entry]:
        cp = self.checkpoint
        if cp is None:
            return [Entry(m, i) for i, m in enumerate(canonical)]
        tail = range(cp.upto, len(canonical))
        return [*cp.entries, *(Entry(canonical[i], i) for i in tail)]

    def view(self, canonical: Sequence[Message]) -> list[Message]:
        """The messages a request sends: checkpoint projection + append-only tail."""
        return [e.message for e in self.entries(canonical)]

    # -- estimation -----------------------------------------------------------

    def _tools_raw(self, tools: str) -> int:
        return self.estimator.count_cached_text(tools) if tools else 0

    def _estimate(self, entries: Sequence[Entry], tools: str) -> int:
        a = self._anchor
        if a is not None and a.generation == self.generation and a.count <= len(entries):
            fresh = self.estimator.messages(e.message for e in entries[a.count :])
            return a.tokens + self.estimator.scale(fresh)
        raw = self.estimator.messages(e.message for e in entries) + self._tools_raw(tools)
        return self.estimator.scale(raw)

    def estimate(self, canonical: Sequence[Message], tools: str = "") -> int:
        """Estimated prompt tokens of the next request (view + tools)."""
        return self._estimate(self.entries(canonical), tools)

    def note_sent(self, view: Sequence[Message], tools: str) -> Sent:
        raw = self.estimator.messages(view) + self._tools_raw(tools)
        return Sent(self.generation, len(view), raw, self.estimator.backend)

    def observe(self, sent: Sent | None, prompt_tokens: int, *, processed: bool = True) -> None:
        """A real prompt count for a request we sent: calibrate and re-anchor.

        ``processed``: the provider ran it (so its prompt is now a cached unit);
        False for a request refused as too long, which only tells its size."""
        if sent is None or prompt_tokens <= 0:
            return
        if sent.backend == self.estimator.backend:
            self.estimator.calibrate(sent.raw, prompt_tokens)
        if sent.generation == self.generation:
            self._anchor = _Anchor(sent.generation, sent.count, prompt_tokens)
            if processed and (not self._sent_counts or self._sent_counts[-1] != sent.count):
                self._sent_counts = [*self._sent_counts[-255:], sent.count]

    def output_room(self, estimate: int) -> int:
        """Tokens left for the answer, keeping the estimate headroom free."""
        return max(self.window - estimate - headroom_for(self.window), 1)

    async def _count(self, messages: Sequence[Message]) -> None:
        """Warm the per-message cache, in a thread when there is a lot to count."""
        if self.estimator.uncounted_chars(messages) > THREAD_COUNT_CHARS:
            await anyio.to_thread.run_sync(self.estimator.messages, messages)

    async def _maybe_load_tokenizer(self, entries: Sequence[Entry], tools: str) -> None:
        if not self.estimator.wants_tokenizer:
            return
        messages = [e.message for e in entries]
        anchor = self._anchor

        def load_and_count() -> None:
            if not self.estimator.load():
                return
            self.estimator.messages(messages)  # warm the per-message cache
            # Calibrate the new scale at once against the last real count.
            if anchor is not None and anchor.generation == self.generation:
                sent = self.estimator.messages(messages[: anchor.count]) + self._tools_raw(tools)
                self.estimator.calibrate(sent, anchor.tokens)

        await anyio.to_thread.run_sync(load_and_count)

    # -- turns and status -----------------------------------------------------

    def begin_turn(self) -> None:
        self.turn += 1
        self.turn_summaries = 0

    def _gate_open(self, estimate: int) -> bool:
        """May an automatic (paid) summary be attempted now?"""
        f = self.failure
        if f is None or f.generation != self.generation:
            return True
        return estimate >= f.tokens + math.floor(self.window * RETRY_GROWTH_RATIO)

    def status(self, canonical: Sequence[Message], tools: str = "") -> dict[str, Any]:
        est = self.estimate(canonical, tools)
        return {
            "window": self.window,
            "compact_ratio": self.ratio,
            "trigger": self.trigger,
            "estimate": est,
            "generation": self.generation,
            "checkpoint": self.checkpoint.kind if self.checkpoint else None,
            "failure": self.failure.to_record() if self.failure else None,
            "estimator": self.estimator.describe(),
        }

    # -- persistence ------------------------------------------------------------

    def to_record(self) -> dict[str, Any]:
        return {
            "version": CHECKPOINT_VERSION,
            "window": self.window,
            "checkpoint": self.checkpoint.to_record() if self.checkpoint else None,
            "failure": self.failure.to_record() if self.failure else None,
        }

    def _persist(self) -> None:
        if self.store is None:
            return
        try:
            self.store.write_checkpoint(self.to_record())
        except ReasonixError as exc:
            log.warning("%s", exc)

    def restore(self, data: dict[str, Any] | None, canonical: Sequence[Message]) -> bool:
        """Install a persisted checkpoint; False (and ignored) when it does not fit."""
        if not data or data.get("version") != CHECKPOINT_VERSION:
            return False
        raw = data.get("checkpoint")
        failure = data.get("failure")
        try:
            if raw:
                self.checkpoint = self._load_checkpoint(raw, canonical)
                self.generation = self.checkpoint.generation
            if isinstance(failure, dict) and int(failure.get("generation", -1)) == self.generation:
                self.failure = Failure(
                    generation=int(failure["generation"]),
                    status=str(failure.get("status", "failed")),
                    detail=str(failure.get("detail", "")),
                    tokens=int(failure.get("tokens", 0)),
                )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            log.warning("ignoring a context checkpoint that does not match the transcript: %s", exc)
            self.checkpoint = None
            self.generation = 0
            self.failure = None
            return False
        self._anchor = None
        self._sent_counts = []
        return self.checkpoint is not None

    @staticmethod
    def _load_checkpoint(raw: dict[str, Any], canonical: Sequence[Message]) -> Checkpoint:
        upto = int(raw["upto"])
        if not 0 < upto <= len(canonical):
            raise ValueError(f"checkpoint covers {upto} messages, transcript has {len(canonical)}")
        if _message_digest(canonical[upto - 1]) != raw["anchor"]:
            raise ValueError("checkpoint anchor does not match the transcript")
        entries: list[Entry] = []
        for item in raw["items"]:
            if "ref" in item:
                ref = int(item["ref"])
                if not 0 <= ref < upto:
                    raise ValueError(f"checkpoint refers to message {ref}")
                mode = str(item.get("mode", ""))
                entries.append(Entry(transform(canonical[ref], mode), ref, mode))
            else:
                entries.append(Entry(Message.from_record(item["message"])))
        if not entries or entries[0].message.role != "system":
            raise ValueError("checkpoint does not start with the system message")
        return Checkpoint(
            generation=int(raw["generation"]),
            kind=str(raw["kind"]),
            reason=CompactionReason(raw.get("reason", "auto")),
            upto=upto,
            entries=tuple(entries),
            anchor=str(raw["anchor"]),
            tokens_before=int(raw.get("tokens_before", 0)),
            tokens_after=int(raw.get("tokens_after", 0)),
        )

    def _install(
        self,
        kind: str,
        reason: CompactionReason,
        entries: Sequence[Entry],
        canonical: Sequence[Message],
        before: int,
    ) -> int:
        self.generation += 1
        self.checkpoint = Checkpoint(
            generation=self.generation,
            kind=kind,
            reason=reason,
            upto=len(canonical),
            entries=tuple(entries),
            anchor=_message_digest(canonical[-1]),
            tokens_before=before,
        )
        self._anchor = None
        self._sent_counts = []
        self.failure = None
        self.estimator.forget(e.message for e in entries)
        after = self._estimate(entries, self._tools)
        self.checkpoint.tokens_after = after
        self._persist()
        if self.store is not None:
            try:
                self.store.append_event(
                    "checkpoint",
                    generation=self.generation,
                    projection=kind,
                    reason=reason.value,
                    upto=len(canonical),
                    tokens_before=before,
                    tokens_after=after,
                )
            except (OSError, ReasonixError) as exc:
                log.warning("could not record the checkpoint in the transcript: %s", exc)
        return after

    def _record_failure(self, status: str, detail: str, tokens: int) -> None:
        self.failure = Failure(
            generation=self.generation, status=status, detail=detail, tokens=tokens, turn=self.turn
        )
        self._persist()

    # -- planning -------------------------------------------------------------

    @staticmethod
    def _unit_starts(entries: Sequence[Entry]) -> list[int]:
        """Start index of every replay unit after the system message: a user
        message, or an assistant message together with its tool results."""
        return [i for i in range(1, len(entries)) if entries[i].message.role != "tool"]

    def _raw(self, entries: Iterable[Entry]) -> int:
        return self.estimator.messages(e.message for e in entries)

    def _plan_cut(
        self,
        entries: Sequence[Entry],
        source: _Source,
        *,
        overflow: bool,
        below: int | None = None,
        fit: bool = True,
    ) -> tuple[int | None, str]:
        """Where the summarised prefix ends (an index into ``entries``), or None
        and why not.

        The tail is sized on ``entries`` (the current view); the summary
        request's size on ``source`` (what it will actually send). ``fit=False``:
        the cut where the tail starts, not moved back to fit one summary request
        (what a chunked fold summarises)."""
        starts = self._unit_starts(entries)
        if len(starts) < 2:
            return None, "there is only one message to keep, nothing older to summarise"
        scale = self.estimator.scale
        n_units = len(starts)
        if overflow:
            k = max(n_units - 2, 1)  # keep the latest two units verbatim
        else:
            k = n_units - 1  # the last unit is always kept
            tail = self._raw(entries[starts[k] :])
            while k > 1:
                unit = self._raw(entries[starts[k - 1] : starts[k]])
                if scale(tail + unit) > self.keep_budget:
                    break
                tail += unit
                k -= 1
            if k == 1 and scale(self._raw(entries[1:])) <= self.keep_budget:
                return None, "the whole history fits in the verbatim tail (16% of the window)"
        # Prefer a cut the provider has cached: the end of a request it processed
        # (at or after the 16% boundary, so the tail only gets smaller).
        if not overflow:
            unit_starts = set(starts)
            cached = [c for c in source.sent_counts if c >= starts[k] and c in unit_starts]
            if cached and (below is None or min(cached) < below):
                k = starts.index(min(cached))
        instruction = scale(self.estimator.count_cached_text(COMPACTION_INSTRUCTION) + 4)
        src = source.entries
        suffix = [0] * (len(src) + 1)  # raw tokens of src[i:]
        for i in range(len(src) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + self.estimator.message(src[i].message)

        def prefix_tokens(cut: int) -> int:
            return source.total - scale(suffix[cut]) + instruction

        cut = starts[k]
        while fit and (
            k >= 1
            and ((below is not None and cut >= below) or prefix_tokens(cut) > self.prompt_budget)
        ):
            k -= 1
            cut = starts[k] if k >= 1 else 0
        if k < 1:
            return None, "no older history fits in one summary request"
        if not any(e.ref is not None for e in src[1:cut]):
            return None, "only the earlier summary precedes the verbatim tail"
        return cut, ""

    def _prune(self, entries: Sequence[Entry]) -> list[Entry] | None:
        out: list[Entry] = []
        changed = False
        for e in entries:
            if (
                e.ref is not None
                and not e.mode
                and e.message.role == "tool"
                and len(e.message.content or "") > PRUNE_LIMIT
            ):
                out.append(Entry(transform(e.message, "prune"), e.ref, "prune"))
                changed = True
            else:
                out.append(e)
        return out if changed else None

    def _with_lead(
        self, system: Entry, lead: Message, ack: str, rest: Sequence[Entry]
    ) -> list[Entry]:
        """system + a user lead (summary or marker) + an ack when the rest starts with a user."""
        out = [system, Entry(lead)]
        if rest and rest[0].message.role == "user":
            out.append(Entry(Message(role="assistant", content=ack, meta={"compaction": "ack"})))
        out.extend(rest)
        return out

    def _truncate(
        self, entries: Sequence[Entry], total: int, target: int
    ) -> tuple[list[Entry], int, int] | None:
        """Lossy projection under ``target``: (entries, blanked, dropped) or None."""
        scale = self.estimator.scale
        work = list(entries)
        current = total
        blanked = 0
        starts = self._unit_starts(work)
        last_unit = starts[-1] if starts else len(work)

        def blank(index: int) -> None:
            nonlocal current, blanked
            e = work[index]
            new = Entry(transform(e.message, "blank"), e.ref, "blank")
            current -= scale(self.estimator.message(e.message)) - scale(
                self.estimator.message(new.message)
            )
            work[index] = new
            blanked += 1

        def blankable(i: int) -> bool:
            e = work[i]
            return e.ref is not None and e.message.role == "tool" and e.mode != "blank"

        for i in range(1, last_unit):
            if current < target:
                break
            if blankable(i):
                blank(i)
        dropped = 0
        if current >= target and len(starts) > 1:
            k = 0
            removed = 0
            lead = scale(self.estimator.count_text(BLANK_MARKER) * 2 + 16)  # marker + ack
            while k < len(starts) - 1 and current - scale(removed) + lead >= target:
                removed += self._raw(work[starts[k] : starts[k + 1]])
                k += 1
            if k:
                dropped = starts[k] - 1
                marker = Message(
                    role="user",
                    content=(
                        f"[context truncated: {dropped} earlier messages were dropped"
                        + (f" and {blanked} tool results blanked" if blanked else "")
                        + " to fit the context window. The full transcript is kept in the "
                        "local session; ask the user or search the history if you need it.]"
                    ),
                    meta={"compaction": "truncate"},
                )
                rest = work[starts[k] :]
                work = self._with_lead(work[0], marker, TRUNCATE_ACK, rest)
                current = (
                    current - scale(removed) + scale(self._raw(work[1 : len(work) - len(rest)]))
                )
        if current >= target:
            for i in range(1, len(work)):
                if current < target:
                    break
                if blankable(i):
                    blank(i)
        if current >= target:
            return None
        return work, blanked, dropped

    # -- the transaction ------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """A compaction is running (single-flight: a second one is not started)."""
        return self._busy

    async def decide(
        self,
        conversation: Conversation,
        reason: CompactionReason = CompactionReason.AUTO,
        *,
        force: bool = False,
    ) -> CompactionDecision | None:
        """Whether the view must change before a step's request is built
        (``AUTO``), after a provider overflow (``OVERFLOW``), or on request
        (``MANUAL``); ``None`` when nothing is to be done (or one is running)."""
        canonical = conversation.messages
        tools = conversation.tools
        self._tools = tools
        entries = self.entries(canonical)
        est = self._estimate(entries, tools)
        if reason is CompactionReason.AUTO:
            if est < self.trigger:
                if est >= TOKENIZER_LOAD_RATIO * self.trigger and self.estimator.wants_tokenizer:
                    await self._maybe_load_tokenizer(entries, tools)
                return None
        if self.estimator.wants_tokenizer:
            await self._maybe_load_tokenizer(entries, tools)
        else:
            await self._count([e.message for e in entries])
        est = self._estimate(entries, tools)
        if self._busy:
            return None
        pruned = self._prune(entries)
        if reason is CompactionReason.AUTO:
            if est < self.trigger:
                return None
            can_summarise = self.turn_summaries < MAX_PRESSURE_SUMMARIES and self._gate_open(est)
            if pruned is None and not can_summarise and est < self.hard_limit:
                return None  # nothing allowed to do below the hard limit: keep the current view
        elif (
            reason is CompactionReason.OVERFLOW
            and not force
            and est < self.trigger
            and pruned is None
        ):
            return None  # the completion budget overflowed, not the view: the retry re-plans it
        return CompactionDecision(reason, entries, len(canonical), est, pruned, force)

    @contextmanager
    def running(self) -> Iterator[None]:
        """Hold the single flight from the caller's ``CompactionStarted`` to the
        end of its outcome's events: ``decide`` returns ``None`` meanwhile."""
        self._busy = True
        try:
            yield
        finally:
            self._busy = False

    async def compact(
        self, decision: CompactionDecision, conversation: Conversation
    ) -> AsyncIterator[ev.Event | CompactionOutcome]:
        """Carry out ``decision`` (inside :meth:`running`): install the new
        projections (prune, summaries, truncation). Yields the summary requests'
        own events as they stream, then, last, the :class:`CompactionOutcome`."""
        canonical = conversation.messages
        reason, entries, est = decision.reason, decision.entries, decision.tokens
        pruned, force = decision.pruned, decision.force
        before = est
        txn = _Txn()
        prefix_reason = reason.prefix_reason

        source = _Source(entries, est, list(self._sent_counts))
        if pruned is not None:
            est = self._install("prune", reason, pruned, canonical, est)
            entries = pruned
            txn.changed = prefix_reason

        if reason.one_summary:
            allowed = 1
        else:
            allowed = MAX_PRESSURE_SUMMARIES - self.turn_summaries
        failed_detail = ""
        failed_status = ""
        while allowed > 0:
            if reason is CompactionReason.AUTO and (est < self.trigger or not self._gate_open(est)):
                break
            if reason is CompactionReason.OVERFLOW and est < self.trigger and not force:
                break
            result = _SummaryResult()
            async with aclosing(
                self._summarise(conversation, entries, source, reason, result)
            ) as calls:
                async for event in calls:
                    yield event
            if result.entries is None:
                failed_detail, failed_status = result.detail, result.status
                if reason.unattended:
                    self._record_failure(result.status, result.detail, est)
                break
            entries = result.entries
            est = self._install("summary", reason, entries, canonical, est)
            source = _Source(entries, est, [])
            txn.changed = prefix_reason
            txn.summaries += 1
            txn.folded = result.folded or txn.folded
            allowed -= 1
            if reason.unattended:
                self.turn_summaries += 1
            if reason.one_summary:
                break

        def outcome(**fields: Any) -> CompactionOutcome:
            return CompactionOutcome(
                reason=reason,
                tokens_before=before,
                tokens_after=est,
                trigger=self.trigger,
                window=self.window,
                changed=txn.changed,
                summaries=txn.summaries,
                folded=txn.folded,
                failure_status=failed_status,
                failure_detail=failed_detail,
                **fields,
            )

        truncate = False
        if reason is CompactionReason.AUTO:
            truncate = est >= self.hard_limit
        elif reason is CompactionReason.OVERFLOW:
            truncate = est >= self.hard_limit or (txn.summaries == 0 and est >= self.trigger)
        truncated: tuple[int, int] | None = None
        if truncate:
            cut = self._truncate(entries, est, self.trigger)
            if cut is None:
                yield outcome(
                    unfit=(
                        f"the conversation no longer fits the context window: about {est:,} "
                        f"tokens against a window of {self.window:,} (compaction threshold "
                        f"{self.trigger:,}), and no summary or lossy truncation can bring it "
                        "under the threshold. Start a new session, or use a model with a larger "
                        "context_window."
                    )
                )
                return
            entries, blanked, dropped = cut
            est = self._install("truncate", reason, entries, canonical, est)
            txn.changed = PrefixChangeReason.TRUNCATE
            truncated = (blanked, dropped)

        if reason is CompactionReason.MANUAL:
            ok = txn.summaries > 0 or (txn.changed is not None and not failed_detail)
        else:
            ok = est < self.trigger
        yield outcome(truncated=truncated, ok=ok)

    # -- the summary ------------------------------------------------------------

    async def _summarise(
        self,
        conversation: Conversation,
        entries: list[Entry],
        source: _Source,
        reason: CompactionReason,
        out: _SummaryResult,
    ) -> AsyncIterator[ev.Event]:
        tools = self._tools
        overflow = reason is CompactionReason.OVERFLOW
        src = source.entries
        cut, why = self._plan_cut(entries, source, overflow=overflow)
        if reason.folds_in_chunks:
            whole, _ = self._plan_cut(entries, source, overflow=overflow, fit=False)
            if whole is not None and (cut is None or cut < whole):
                # One request cannot carry all it should summarise: fold it in chunks.
                fold = self._fold(conversation, entries, src, whole, self.prompt_budget, out)
                async with aclosing(fold) as events:
                    async for event in events:
                        yield event
                return
        if cut is None:
            out.status, out.detail = "blocked", why
            return
        instruction = Message(
            role="user",
            content=compaction_instruction(conversation.focus),
            meta={"compaction": "request"},
        )
        replans = 0
        bounded = False
        call = Reply()
        while True:
            if bounded:
                # A plain-text transcript without the tools: no cache, but it fits.
                messages = [
                    src[0].message,
                    self._bounded_transcript(src[1:cut], conversation.focus),
                ]
                raw = self.estimator.messages(messages)
            else:
                messages = summary_request([e.message for e in src[:cut]], instruction)
                raw = self.estimator.messages(messages) + self._tools_raw(tools)
            backend = self.estimator.backend
            call = Reply()
            summary = conversation.summarize(
                messages, with_tools=not bounded, max_output_tokens=self.summary_cap, reply=call
            )
            async with aclosing(summary) as stream:
                async for event in stream:
                    yield event
            if call.usage is not None:
                out.paid = True
                if backend == self.estimator.backend:
                    self.estimator.calibrate(raw, call.usage.prompt_tokens)
            if call.error is not None and is_context_overflow(call.error) and not bounded:
                limit, prompt = parse_overflow(call.error.message)
                if prompt and backend == self.estimator.backend:
                    self.estimator.calibrate(raw, prompt)
                if limit and limit < self.window:
                    self._learn_window(limit)
                if reason.folds_in_chunks:
                    # Refused although it was planned to fit: fold it in chunks sized
                    # on the corrected count, at most half the refused request when
                    # the provider did not say how large it was.
                    refused = self.estimator.scale(raw)
                    budget = self.prompt_budget if refused > self.prompt_budget else refused // 2
                    fold = self._fold(conversation, entries, src, cut, budget, out)
                    async with aclosing(fold) as events:
                        async for event in events:
                            yield event
                    return
                if replans < REPLAN_LIMIT:
                    replans += 1
                    total = self.estimator.scale(self._raw(src) + self._tools_raw(tools))
                    source = _Source(src, total, source.sent_counts)
                    smaller, _ = self._plan_cut(entries, source, overflow=overflow, below=cut)
                    if smaller is not None:
                        cut = smaller
                        continue
                bounded = True
                continue
            break
        text, out.detail = read_summary(call, self.summary_cap)
        if text:
            self._digest(entries, cut, text, out)

    async def _fold(
        self,
        conversation: Conversation,
        entries: list[Entry],
        src: list[Entry],
        cut: int,
        budget: int,
        out: _SummaryResult,
    ) -> AsyncIterator[ev.Event]:
        """Summarise ``src[1:cut]`` in chunks (``agent/chunked_fold.py``)."""
        bounds = [*self._unit_starts(src[:cut]), cut]
        units = [[e.message for e in src[a:b]] for a, b in pairwise(bounds)]
        fold = ChunkedFold(
            estimator=self.estimator,
            tools_raw=self._tools_raw(self._tools),
            budget=budget,
            output_cap=self.summary_cap,
            summarize=conversation.summarize,
            focus=conversation.focus,
        )
        try:
            async with aclosing(fold.run(src[0].message, units)) as events:
                async for event in events:
                    yield event
        except ChunkedFoldFailed as exc:
            out.detail = str(exc)
            return
        finally:
            out.paid = out.paid or fold.paid
        report = fold.report
        assert report is not None
        out.folded = (report.chunks, report.merges)
        self._digest(entries, cut, report.text, out)

    def _digest(self, entries: list[Entry], cut: int, text: str, out: _SummaryResult) -> None:
        """The view with ``text`` in place of ``entries[1:cut]``, if it is smaller."""
        summary = Message(
            role="user",
            content=(
                f'<context-summary generation="{self.generation + 1}">\n'
                "Earlier parts of this conversation were compacted into the summary below; "
                "the full transcript is kept in the local session.\n\n"
                f"{text}\n</context-summary>"
            ),
            meta={"compaction": "summary", "summary": text},
        )
        candidate = self._with_lead(entries[0], summary, SUMMARY_ACK, entries[cut:])
        added = self.estimator.messages(
            e.message for e in candidate[1 : len(candidate) - (len(entries) - cut)]
        )
        replaced = self._raw(entries[1:cut])
        if added >= replaced:
            out.detail = "the summary was not smaller than the history it would replace"
            return
        out.entries = candidate
        out.status = "ok"

    def _bounded_transcript(self, entries: Sequence[Entry], focus: str = "") -> Message:
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
        budget = self.prompt_budget - self.estimator.scale(
            self.estimator.count_cached_text(COMPACTION_INSTRUCTION) + 64
        )
        kept: list[str] = []
        used = 0
        for part in reversed(parts):
            cost = self.estimator.scale(self.estimator.count_text(part) + 2)
            if used + cost > budget:
                kept.append("[... the earlier part of the transcript is omitted ...]")
                break
            kept.append(part)
            used += cost
        transcript = "\n\n".join(reversed(kept))
        return Message(
            role="user",
            content=f"<transcript>\n{transcript}\n</transcript>\n\n"
            + compaction_instruction(focus),
            meta={"compaction": "request"},
        )

    def set_window(self, window: int) -> None:
        """Another model with another window (``/model``): thresholds follow it."""
        self._learn_window(window)

    def _learn_window(self, limit: int) -> None:
        self.window = limit
        self._persist()

    # -- overflow -------------------------------------------------------------

    def read_overflow(self, exc: ProviderError, sent: Sent | None) -> OverflowReading:
        """The provider refused a request as too long: learn the window it
        named and re-anchor the estimate on the prompt size it counted."""
        limit, prompt = parse_overflow(exc.message or "")
        learned = None
        if limit and limit < self.window:
            self._learn_window(limit)
            learned = limit
        if prompt:
            self.observe(sent, prompt, processed=False)
        return OverflowReading(learned, prompt)
