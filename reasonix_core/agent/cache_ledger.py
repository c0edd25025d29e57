"""Per-request cache accounting: did each request extend its agent's previous one?

A provider's prompt cache hits only where the bytes of an earlier request repeat
from the start. So every billed request of an agent's conversation (its
*chain*: the executor's steps, not compaction's summary requests) is compared
with the previous billed request of the same chain, in the order the cache
reads it (:func:`render_prefix`). When the new request does not start with the
whole previous one, the cache broke at the first differing byte: the previous
request's tokens after it, which the provider had cached, are billed again at
the miss price. The break is named by the ``PrefixChanged`` reason that
announced it, or ``unexplained`` (a bug: every change to earlier bytes must
have a name).

Memory is bounded: the ledger keeps the previous request's rendering only
(one request, which the agent holds anyway) and its digests. Each billed request
appends one record to the session's ``<id>.requests.ndjson`` (``reasonix cache``
reads them); a continued session's first request is compared with the digests
its previous run recorded there.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from reasonix_core import events as ev
from reasonix_core.agent.prefix_change import PrefixChangeReason
from reasonix_core.agent.session import append_request_record, read_request_records
from reasonix_core.messages import Message
from reasonix_core.permission.summary import visible
from reasonix_core.provider.base import Request, ToolSchema
from reasonix_core.usage import Usage

__all__ = [
    "CACHE_LIFETIME",
    "Baseline",
    "CacheBreak",
    "CacheLedger",
    "Divergence",
    "Prefix",
    "PrefixRenderer",
    "RebillCost",
    "common_prefix_length",
    "escape_bytes",
    "last_settings",
    "one_line",
    "rebill_cost",
    "render_prefix",
]

# How much of the bytes around a break a record keeps, each side.
CONTEXT_BYTES = 32

# How long a provider keeps an unused prefix cached. DeepSeek says "a few hours
# to a few days" (wire-formats.md §3.1); an hour is the conservative reading, so
# a session idle longer is warned about before its first request.
CACHE_LIFETIME = timedelta(hours=1)

#: (model, tokens, when) -> (extra cost, currency) of billing cached tokens as misses.
RebillCost = Callable[[str, int, datetime], tuple[float, str]]


def rebill_cost(
    price: Callable[[str, Usage, datetime], tuple[float, str]],
    model: str,
    tokens: int,
    when: datetime,
) -> tuple[float, str]:
    """What billing ``tokens`` cached tokens as misses adds, at ``when``'s ``price``."""
    miss, currency = price(model, Usage(prompt_tokens=tokens, cache_miss_tokens=tokens), when)
    hit, _ = price(model, Usage(prompt_tokens=tokens, cache_hit_tokens=tokens), when)
    return miss - hit, currency


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def _render_message(message: Message) -> bytes:
    """What the provider sees of one message (``meta`` is never sent)."""
    return _json(
        [
            message.role,
            message.content,
            message.reasoning_content,
            [[c.id, c.name, c.arguments] for c in message.tool_calls],
            message.tool_call_id,
            message.name,
        ]
    )


@dataclass(frozen=True, slots=True)
class Prefix:
    """One request as the prompt cache reads it: a header (model and effort: a
    different one is a different cache, so the header is one unit), the tool
    schemas, then the messages in order (the system prompt first)."""

    data: bytes
    header_end: int
    tools_end: int
    # The end of the first message (the system prompt): what compaction keeps.
    system_end: int
    # The header's parts: a continued session starts from the last ones used.
    model: str = ""
    effort: str = ""


def render_prefix(request: Request) -> Prefix:
    return PrefixRenderer()(request)


class PrefixRenderer:
    """:func:`render_prefix` that renders each message once: a conversation's
    messages are the same objects from one request to the next, so only the new
    ones are encoded (the memo holds the current request's messages only)."""

    def __init__(self) -> None:
        self._messages: dict[int, tuple[Message, bytes]] = {}
        self._tools: tuple[tuple[ToolSchema, ...], bytes] | None = None

    def _tools_bytes(self, tools: tuple[ToolSchema, ...]) -> bytes:
        last = self._tools
        if last is not None and (last[0] is tools or last[0] == tools):
            return last[1]
        data = _json([t.to_openai() for t in tools])
        self._tools = (tools, data)
        return data

    def __call__(self, request: Request) -> Prefix:
        header = _json([request.model, request.effort])
        tools = self._tools_bytes(request.tools)
        memo: dict[int, tuple[Message, bytes]] = {}
        messages: list[bytes] = []
        for message in request.messages:
            known = self._messages.get(id(message))
            data = known[1] if known is not None and known[0] is message else None
            if data is None:
                data = _render_message(message)
            memo[id(message)] = (message, data)
            messages.append(data)
        self._messages = memo
        first = len(messages[0]) if messages else 0
        data = b"".join((header, tools, *messages))
        tools_end = len(header) + len(tools)
        return Prefix(
            data=data,
            header_end=len(header),
            tools_end=tools_end,
            system_end=tools_end + first,
            model=request.model,
            effort=request.effort,
        )


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def one_line(text: str, limit: int = 0) -> str:
    """Text as one terminal-safe line: what :func:`visible` escapes, and newlines
    and tabs too; cut to ``limit`` characters when given."""
    out = visible(text).replace("\n", "\\n").replace("\t", "\\t")
    return out if not limit or len(out) <= limit else out[: limit - 1] + "…"


def escape_bytes(data: bytes) -> str:
    """Bytes of a rendered prompt as one safe line (an invalid UTF-8 byte as ``\\xff``)."""
    return one_line(data.decode("utf-8", "backslashreplace"))


@dataclass(frozen=True, slots=True)
class Baseline:
    """What the previous request of a chain left in the provider's cache."""

    size: int
    digest: str
    header: tuple[int, str]
    tools: tuple[int, str]
    system_end: int
    prompt_tokens: int
    at: str = ""
    model: str = ""
    effort: str = ""
    # The bytes themselves in the run that sent them; None when read back from
    # the records of an earlier run (only the digests are kept there).
    data: bytes | None = field(default=None, compare=False)

    @classmethod
    def of(cls, prefix: Prefix, prompt_tokens: int, at: str) -> Baseline:
        data = prefix.data
        return cls(
            size=len(data),
            digest=_digest(data),
            header=(prefix.header_end, _digest(data[: prefix.header_end])),
            tools=(prefix.tools_end, _digest(data[: prefix.tools_end])),
            system_end=prefix.system_end,
            prompt_tokens=prompt_tokens,
            at=at,
            model=prefix.model,
            effort=prefix.effort,
            data=data,
        )

    def to_record(self) -> dict[str, Any]:
        return {
            "bytes": self.size,
            "digest": self.digest,
            "header": list(self.header),
            "tools": list(self.tools),
            "system_end": self.system_end,
            "model": self.model,
            "effort": self.effort,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Baseline | None:
        """The baseline a record left, or None when it is not one (hostile or old)."""
        prefix = record.get("prefix")
        if not isinstance(prefix, dict):
            return None
        try:
            header, tools = prefix["header"], prefix["tools"]
            return cls(
                size=int(prefix["bytes"]),
                digest=str(prefix["digest"]),
                header=(int(header[0]), str(header[1])),
                tools=(int(tools[0]), str(tools[1])),
                system_end=int(prefix.get("system_end", 0)),
                prompt_tokens=int(record.get("prompt_tokens", 0)),
                at=str(record.get("at", "")),
                model=str(prefix.get("model", "")),
                effort=str(prefix.get("effort", "")),
            )
        except (KeyError, TypeError, ValueError, IndexError):
            return None

    def tokens_after(self, byte: int) -> int:
        """The cached tokens after ``byte``: the prompt's share of the bytes after it."""
        if self.size <= 0:
            return 0
        return round(self.prompt_tokens * (self.size - min(byte, self.size)) / self.size)


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where a request stopped repeating the previous one."""

    # None: somewhere in the messages of a request recorded by an earlier run.
    first_diff_byte: int | None
    rebilled_tokens: int
    context: tuple[str, str, str] = ("", "", "")


def common_prefix_length(a: bytes, b: bytes) -> int:
    """Longest common prefix by binary search over C-speed slice comparisons."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def diverge(baseline: Baseline, prefix: Prefix) -> Divergence | None:
    """None when ``prefix`` extends the baseline (append-only); else where it broke."""
    new = prefix.data
    if baseline.data is not None:
        old = baseline.data
        if new.startswith(old):  # the usual case, without copying a byte
            return None
        at = common_prefix_length(old, new)
        if at < max(baseline.header[0], prefix.header_end):
            at = 0  # another model or effort: another cache, nothing of it is reused
        return Divergence(
            first_diff_byte=at,
            rebilled_tokens=baseline.tokens_after(at),
            context=(
                escape_bytes(old[max(0, at - CONTEXT_BYTES) : at]),
                escape_bytes(old[at : at + CONTEXT_BYTES]),
                escape_bytes(new[at : at + CONTEXT_BYTES]),
            ),
        )
    if len(new) >= baseline.size and _digest(new[: baseline.size]) == baseline.digest:
        return None
    for end, digest, at in (
        (*baseline.header, 0),
        (*baseline.tools, baseline.header[0]),
    ):
        if _digest(new[:end]) != digest:
            # Only the new side is known: the old bytes were not kept across runs.
            return Divergence(
                first_diff_byte=at,
                rebilled_tokens=baseline.tokens_after(at),
                context=("", "", escape_bytes(new[at : at + CONTEXT_BYTES])),
            )
    return Divergence(first_diff_byte=None, rebilled_tokens=baseline.prompt_tokens)


@dataclass(frozen=True, slots=True)
class CacheBreak:
    """A billed request that broke its chain: why, where, and what it re-billed."""

    reason: str
    divergence: Divergence
    rebilled_cost: float


def last_settings(records: Sequence[dict[str, Any]]) -> tuple[str, str] | None:
    """(model, effort) of the main agent's last recorded request: what a continued
    session keeps (not the header's, which a /model or /effort since has changed),
    so that its first request extends the cache instead of silently breaking it."""
    for record in reversed(records):
        if record.get("agent_path", []) != []:
            continue
        base = Baseline.from_record(record)
        if base is not None and base.model and base.effort:
            return base.model, base.effort
    return None


class CacheLedger:
    """One agent's chain of requests: the previous request, the reasons announced
    since, and the session's request records."""

    def __init__(
        self,
        session_path: Path | None = None,
        *,
        records: Sequence[dict[str, Any]] = (),
        agent_path: tuple[str, ...] = (),
    ) -> None:
        self.session_path = session_path
        self.agent_path = agent_path
        self.requests = len(records)
        self.baseline: Baseline | None = None
        mine = list(agent_path)
        for record in reversed(records):
            if record.get("agent_path", []) == mine:
                self.baseline = Baseline.from_record(record)
                if self.baseline is not None:
                    break
        self._pending: list[PrefixChangeReason | str] = []
        # The chain's requests as the cache reads them (the loop renders each step's).
        self.render = PrefixRenderer()

    @classmethod
    def for_session(cls, session_path: Path, agent_path: tuple[str, ...] = ()) -> CacheLedger:
        return cls(session_path, records=read_request_records(session_path), agent_path=agent_path)

    def observe(self, event: ev.Event) -> None:
        """Every event the agent makes passes here: a PrefixChanged names the next break."""
        if isinstance(event, ev.PrefixChanged):
            self._pending.append(event.reason)

    def settle(
        self,
        *,
        prefix: Prefix | None,
        usage: Usage,
        source: str,
        model: str,
        cost: float,
        currency: str,
        when: datetime,
        ttft_ms: int | None,
        rebill_cost: RebillCost,
    ) -> tuple[int, CacheBreak | None]:
        """Account one billed request: its number in the session and its break;
        its record is appended to the session's request records."""
        self.requests += 1
        number = self.requests
        broken: CacheBreak | None = None
        record: dict[str, Any] = {
            "request": number,
            "at": when.isoformat(),
            "source": source,
            "model": model,
            "prompt_tokens": usage.prompt_tokens,
            "cache_hit_tokens": usage.cache_hit_tokens,
            "cache_miss_tokens": usage.cache_miss_tokens,
            "completion_tokens": usage.completion_tokens,
            "cost": round(cost, 10),
            "currency": currency,
            "ttft_ms": ttft_ms,
        }
        if self.agent_path:
            record["agent_path"] = list(self.agent_path)
        if usage.estimated:
            record["estimated"] = True
        if prefix is not None:
            divergence = diverge(self.baseline, prefix) if self.baseline else None
            if divergence is not None:
                reason = self._pending[0] if self._pending else PrefixChangeReason.UNEXPLAINED
                extra, _ = rebill_cost(model, divergence.rebilled_tokens, when)
                broken = CacheBreak(reason=str(reason), divergence=divergence, rebilled_cost=extra)
                record["break"] = {
                    "reason": broken.reason,
                    "first_diff_byte": divergence.first_diff_byte,
                    "rebilled_tokens": divergence.rebilled_tokens,
                    "rebilled_cost": round(extra, 10),
                    "context": list(divergence.context),
                }
            self._pending.clear()
            self.baseline = Baseline.of(prefix, usage.prompt_tokens, record["at"])
            record["prefix"] = self.baseline.to_record()
        if self.session_path is not None:
            append_request_record(self.session_path, record)
        return number, broken
