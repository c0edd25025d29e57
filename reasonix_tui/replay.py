"""A saved session's messages as the blocks the transcript draws (resume, ``/resume``).

The same blocks a live turn shows: the user's text (as typed: without the
context and ``@`` blocks the agent appended), reasoning (folded), the answer,
one card per tool call with its saved result, outcome and diff, and notices for
what the transcript says about itself (an interrupted answer, a compaction).
Nothing here imports Textual.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from reasonix_core.agent.child_usage import SUBAGENT_USAGE
from reasonix_core.agent.transcript import FAILED_MARK, FAILURE, INTERRUPTED_MARK, for_people
from reasonix_core.command.mentions import without_attachments
from reasonix_core.coordinator.plans import APPROVED_REQUEST
from reasonix_core.memory.history import clean_user_text
from reasonix_core.messages import HOST_TURN, PASTED, Message
from reasonix_core.pasted import collapse, spans_from_meta
from reasonix_core.provider.searches import past_searches
from reasonix_core.tool.base import FOR_MODEL, SUMMARY

# Messages compaction adds to the working context; the summary is the one a user sees.
COMPACTION_SUMMARY = "summary"


@dataclass(frozen=True, slots=True)
class UserEntry:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningEntry:
    text: str


@dataclass(frozen=True, slots=True)
class AnswerEntry:
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildEntry:
    """A subagent's card under its tool card, as far as the saved call and result tell:
    which agent (the fleet item, the profile or kind of task), after what, how it ended."""

    label: str
    profile: str = ""
    depends_on: tuple[str, ...] = ()
    state: str = "done"
    status: str = ""
    reason: str = ""
    # What the child's own requests spent, as its live card added them up (saved
    # beside the call's result; None in sessions saved before it was).
    usage: ChildSpend | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildSpend:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hit_tokens: int = 0
    cost: float = 0.0
    currency: str = "USD"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEntry:
    call_id: str
    name: str
    arguments: str
    result: str = ""
    outcome: str = "unknown"
    is_error: bool = False
    diff: str = ""
    # The core's account for people (ToolCallFinished.summary / for_model).
    summary: str = ""
    for_model: bool = False
    children: tuple[ChildEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class NoticeEntry:
    text: str
    level: str = "info"


Entry = UserEntry | ReasoningEntry | AnswerEntry | ToolEntry | NoticeEntry


def replay_entries(messages: Sequence[Message]) -> list[Entry]:
    """The blocks of a saved conversation, oldest first."""
    results: dict[str | None, Message] = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    entries: list[Entry] = []
    thought: int | None = None  # where the turn's one "thought" line is
    for message in messages:
        compaction = message.meta.get("compaction")
        if compaction is not None:
            if compaction == COMPACTION_SUMMARY:
                entries.append(NoticeEntry("Conversation compacted."))
            continue
        if message.role == "user":
            thought = None  # a new turn, as live (the controller's drive)
        if message.role == "user" and message.meta.get(HOST_TURN):
            if (message.content or "").startswith(APPROVED_REQUEST):  # a plan-mode approval
                entries.append(NoticeEntry("Plan approved; the executor carries it out."))
            else:
                entries.append(NoticeEntry("Goal round: Reasonix continued the goal."))
        elif message.role == "user":
            text = without_attachments(clean_user_text(_collapsed(message)))
            entries.append(UserEntry(text))
        elif message.role == "assistant":
            for entry in _assistant(message, results):
                if isinstance(entry, ReasoningEntry):
                    if thought is not None:
                        # One thought line per turn, as live: later reasoning joins
                        # the turn's first (ReasoningBlock.absorb's text).
                        first = entries[thought]
                        assert isinstance(first, ReasoningEntry)
                        joined = f"{first.text.strip()}\n\n{entry.text.strip()}"
                        entries[thought] = ReasoningEntry(joined)
                        continue
                    thought = len(entries)
                entries.append(entry)
    return entries


def _collapsed(message: Message) -> str:
    """A user turn with its large pastes as the chips the user saw when typing it."""
    text = message.content or ""
    spans = spans_from_meta(message.meta.get(PASTED))
    return collapse(text, spans) if spans else text


def _assistant(message: Message, results: dict[str | None, Message]) -> list[Entry]:
    out: list[Entry] = []
    if (message.reasoning_content or "").strip():
        out.append(ReasoningEntry(message.reasoning_content or ""))
    text = message.content or ""
    if text == FAILED_MARK:
        error = message.meta.get(FAILURE)
        said = f"Turn failed: {error}" if isinstance(error, str) and error else (
            "The request failed; there was no answer."
        )
        return [*out, NoticeEntry(said, "error")]
    interrupted = text.endswith(INTERRUPTED_MARK)
    if interrupted:
        text = text[: -len(INTERRUPTED_MARK)].rstrip()
    if text.strip():
        out.append(AnswerEntry(text))
    if interrupted:
        out.append(NoticeEntry("Turn cancelled.", "warning"))
    for search in past_searches(message):
        out.append(
            ToolEntry(
                call_id=search.call_id,
                name="Searched the web",
                arguments=json.dumps({"query": search.query}),
                result=search.outcome,
                outcome="ok",
                is_error=bool(search.error),
            )
        )
    for call in message.tool_calls:
        result = results.get(call.id)
        if result is None:
            out.append(ToolEntry(call_id=call.id, name=call.name, arguments=call.arguments))
            continue
        meta = result.meta
        text = for_people(result, call.name)
        outcome = str(meta.get("outcome", "ok"))
        is_error = bool(meta.get("is_error")) or outcome == "error"
        out.append(
            ToolEntry(
                call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                result=text,
                outcome=outcome,
                is_error=bool(meta.get("is_error")),
                diff=str(meta.get("diff") or ""),
                summary=str(meta.get(SUMMARY) or ""),
                for_model=bool(meta.get(FOR_MODEL)),
                children=with_spend(
                    saved_children(call.name, call.arguments, text, outcome, is_error),
                    meta.get(SUBAGENT_USAGE),
                    fleet=call.name == "fleet",
                ),
            )
        )
    return out


# What a subagent's result says of how it ended (reasonix_core.subagent.result / fleet).
_STATUS = re.compile(r"^\[subagent status: ([\w-]+)", re.MULTILINE)
_FAILED = re.compile(r"^\[subagent failed: ", re.MULTILINE)
_ITEM = re.compile(
    r'^<item id="([^"]*)" state="(\w+)"(?: status="([^"]*)")?>\n(.*?)\n</item>$',
    re.MULTILINE | re.DOTALL,
)
SUBAGENT_TOOLS = ("task", "read_only_task")


def saved_children(
    name: str, arguments: str, result: str, outcome: str, is_error: bool
) -> tuple[ChildEntry, ...]:
    """The subagent cards a saved ``task`` / ``read_only_task`` / ``fleet`` call had live,
    rebuilt from its arguments and its result (the same label, profile and end state)."""
    if name not in (*SUBAGENT_TOOLS, "fleet") or not result:
        return ()
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return ()
    if not isinstance(args, dict):
        return ()
    if name == "fleet":
        return _fleet_children(args, result)
    if "[subagent session: " not in result and not _FAILED.search(result):
        return ()  # refused before any child ran (bad arguments, no runner)
    profile = args.get("profile")
    label = profile if isinstance(profile, str) and profile.strip() else name
    if outcome == "cancelled":
        return (ChildEntry(label=label, state="cancelled"),)
    found = _STATUS.search(result)
    if _FAILED.search(result):
        status = "failed"
    elif found is not None:
        status = found.group(1)
    else:
        status = "done"
    return (ChildEntry(label=label, state="failed" if is_error else "done", status=status),)


def _fleet_children(args: dict[str, object], result: str) -> tuple[ChildEntry, ...]:
    items = args.get("items")
    if not isinstance(items, list):
        return ()
    planned: dict[str, tuple[str, tuple[str, ...]]] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        profile = item.get("profile")
        kind = "read_only_task" if item.get("read_only") else "task"
        depends = item.get("depends_on")
        planned[item["id"]] = (
            profile if isinstance(profile, str) and profile.strip() else kind,
            tuple(d for d in depends if isinstance(d, str)) if isinstance(depends, list) else (),
        )
    children: list[ChildEntry] = []
    for item_id, state, status, body in _ITEM.findall(result):
        profile, depends = planned.get(item_id, ("", ()))
        ran = "[subagent session: " in body or bool(_FAILED.search(body))
        reason = "" if ran else body.split("\n", 1)[0]
        children.append(
            ChildEntry(
                label=item_id,
                profile=profile if ran else "",
                depends_on=depends,
                state=state,
                status=status if ran else "",
                reason=reason,
            )
        )
    return tuple(children)


def with_spend(
    children: tuple[ChildEntry, ...], saved: object, *, fleet: bool
) -> tuple[ChildEntry, ...]:
    """The cards with what each child spent, from the result's ``subagent_usage``
    (by fleet item id; "" for a task's one child). The session file is read as
    untrusted: a value that is not a count is no figure."""
    if not isinstance(saved, dict) or not children:
        return children
    out: list[ChildEntry] = []
    for child in children:
        spend = _spend(saved.get(child.label if fleet else ""))
        out.append(replace(child, usage=spend) if spend is not None else child)
    return tuple(out)


def _spend(raw: object) -> ChildSpend | None:
    if not isinstance(raw, dict):
        return None

    def count(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    cost = raw.get("cost")
    spent = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0
    currency = raw.get("currency")
    return ChildSpend(
        prompt_tokens=count("prompt_tokens"),
        completion_tokens=count("completion_tokens"),
        cache_hit_tokens=count("cache_hit_tokens"),
        cost=spent if 0 <= spent < 1e9 else 0.0,  # not NaN, not negative
        currency=currency if isinstance(currency, str) and len(currency) <= 8 else "USD",
    )
