"""A context checkpoint as older versions wrote it loads unchanged and is written
back byte for byte: the enums (``compaction_meta.py``) are the persisted strings."""

from __future__ import annotations

import json

from reasonix_core.agent.compaction_meta import (
    CompactionMark,
    EntryMode,
    FailureStatus,
    ProjectionKind,
)
from reasonix_core.agent.context import ContextManager
from reasonix_core.agent.context_projection import BLANK_MARKER, PRUNE_MARKER, message_digest
from reasonix_core.messages import Message, ToolCall


def canonical() -> list[Message]:
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "a"}')
    call2 = ToolCall(id="c2", name="read_file", arguments='{"path": "b"}')
    return [
        Message(role="system", content="sys"),
        Message(role="user", content="read a"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="x" * 9000, tool_call_id="c1"),
        Message(role="assistant", content="", tool_calls=(call2,)),
        Message(role="tool", content="y" * 100, tool_call_id="c2"),
        Message(role="user", content="next"),
    ]


def old_record(messages: list[Message]) -> dict[str, object]:
    """The shape ``<session>.context.json`` has had since version 1, written literally."""
    return {
        "version": 1,
        "window": 8000,
        "checkpoint": {
            "generation": 3,
            "kind": "truncate",
            "reason": "overflow",
            "upto": 6,
            "anchor": message_digest(messages[5]),
            "tokens_before": 9000,
            "tokens_after": 1200,
            "items": [
                {"ref": 0},
                {
                    "message": {
                        "role": "user",
                        "content": "[context truncated: 1 earlier messages were dropped]",
                        "meta": {"compaction": "truncate"},
                    }
                },
                {
                    "message": {
                        "role": "assistant",
                        "content": "Understood.",
                        "meta": {"compaction": "ack"},
                    }
                },
                {"ref": 2},
                {"ref": 3, "mode": "prune"},
                {"ref": 4},
                {"ref": 5, "mode": "blank"},
            ],
        },
        "failure": {
            "generation": 3,
            "status": "blocked",
            "detail": "nothing older to summarise",
            "tokens": 1200,
            "turn": 2,
        },
    }


def test_an_old_checkpoint_loads_and_is_written_back_byte_for_byte() -> None:
    messages = canonical()
    record = old_record(messages)
    cm = ContextManager(window=8000)
    assert cm.restore(json.loads(json.dumps(record)), messages)

    checkpoint = cm.checkpoint
    assert checkpoint is not None and checkpoint.kind is ProjectionKind.TRUNCATE
    assert [e.mode for e in checkpoint.entries] == [
        EntryMode.VERBATIM,
        EntryMode.VERBATIM,
        EntryMode.VERBATIM,
        EntryMode.VERBATIM,
        EntryMode.PRUNE,
        EntryMode.VERBATIM,
        EntryMode.BLANK,
    ]
    assert cm.failure is not None and cm.failure.status is FailureStatus.BLOCKED
    view = cm.view(messages)
    assert view[1].meta == {"compaction": CompactionMark.TRUNCATE.value}
    assert PRUNE_MARKER in (view[4].content or "") and view[4].meta == {"projection": "prune"}
    assert view[6].content == BLANK_MARKER and view[-1] is messages[6]

    written = cm.to_record()
    expected = dict(record)
    # The failure's turn is not restored (a new run counts its own turns).
    expected["failure"] = {**record["failure"], "turn": 0}  # type: ignore[dict-item]
    assert json.dumps(written) == json.dumps(expected)
    # Plain strings, not enum members, reach the file.
    assert type(written["checkpoint"]["kind"]) is str
    assert {type(item.get("mode", "")) for item in written["checkpoint"]["items"]} == {str}
