"""The conversation model: immutable messages and tool calls.

Messages are frozen so that a request, once built, can never change under the
retry path, and so that earlier history serialises to the same bytes every time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reasonix_core.images import ImagePart

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A complete tool call. ``arguments`` is the exact string the model sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message of the transcript, as the provider sees it (``meta`` stays local)."""

    role: Role
    content: str | None = None
    # Chain of thought as received; replayed verbatim (DeepSeek rejects tool
    # requests whose earlier assistant turns lack it).
    reasoning_content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    # Images of a user turn, inline (reasonix_core/images.py); each provider kind
    # writes them in its own shape, for a model that takes images.
    images: tuple[ImagePart, ...] = ()
    # Metadata kept in the transcript beside the message: the full text of a
    # bounded tool result (local only), the outcome of a tool call, or a
    # provider's reasoning signature that its kind replays on later requests.
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready dict for the session transcript."""
        record: dict[str, Any] = {"role": self.role}
        if self.content is not None:
            record["content"] = self.content
        if self.images:
            record["images"] = [image.to_record() for image in self.images]
        if self.reasoning_content is not None:
            record["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            record["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            record["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            record["name"] = self.name
        if self.meta:
            record["meta"] = self.meta
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Message:
        role = record["role"]
        if role not in ("system", "user", "assistant", "tool"):
            raise ValueError(f"unknown role {role!r}")
        calls = tuple(
            ToolCall(id=str(c["id"]), name=str(c["name"]), arguments=str(c["arguments"]))
            for c in record.get("tool_calls") or ()
        )
        return cls(
            role=role,
            content=record.get("content"),
            reasoning_content=record.get("reasoning_content"),
            tool_calls=calls,
            tool_call_id=record.get("tool_call_id"),
            name=record.get("name"),
            images=tuple(ImagePart.from_record(i) for i in record.get("images") or ()),
            meta=dict(record.get("meta") or {}),
        )


#: ``Message.meta`` key of a user turn the host made (a goal round), not typed by
#: the user: drawn and listed as the host's (replay, /rewind). Never sent.
HOST_TURN = "host_turn"
#: ``Message.meta`` key of a user turn holding large pastes the user saw collapsed:
#: ``[[start, length, number], ...]`` into its content, so a resumed transcript
#: draws the same ``[Pasted text #N ...]`` chips. Never sent.
PASTED = "pasted"


def system(text: str) -> Message:
    return Message(role="system", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def tool_result(call_id: str, text: str, **meta: object) -> Message:
    return Message(role="tool", tool_call_id=call_id, content=text, meta=dict(meta))
