"""Provider protocol, request/chunk types and the registry of provider kinds.

A provider turns a :class:`Request` into a :class:`PreparedRequest` exactly once
(the frozen bytes the retry path replays), then streams chunks for it. Tool-call
fragments are accumulated inside the provider: only :class:`StreamEnd` carries
whole calls to the loop; :class:`ToolCallFragment` exists for live display.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from reasonix_core.errors import ConfigError
from reasonix_core.messages import Message, ToolCall
from reasonix_core.tool_schema import ToolSchema
from reasonix_core.usage import Usage

if TYPE_CHECKING:
    from reasonix_core.config.schema import ProviderConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """One model request before it is encoded."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    # One of the provider's efforts() ("auto": the server's default); the
    # vocabulary and each kind's mapping live in reasonix_core/efforts.py.
    effort: str = "auto"
    # Already resolved for this request: None omits the field.
    max_output_tokens: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedRequest:
    """The frozen request: replayed byte for byte on every retry."""

    url: str
    body: bytes
    headers: tuple[tuple[str, str], ...]
    model: str
    # The protocol replays an answer's reasoning with its tool calls (DeepSeek's with
    # thinking on): tool calls that come without it are a fault, never kept as "".
    calls_need_reasoning: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TextChunk:
    """Streamed answer text."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningChunk:
    """Streamed reasoning text."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WebSearchChunk:
    """A web search the provider ran server-side (its results arrived), for display:
    it is no tool call of ours and is replayed with the answer (StreamEnd.replay_meta)."""

    call_id: str
    query: str
    # None: the provider does not say (the Responses kind's web_search_call).
    results: int | None
    # The provider's error code when the search failed ("" when it did not).
    error: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFragment:
    """A piece of a tool call as it streams (accumulated by ``index``)."""

    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEnd:
    """The end of a stream: why it stopped, the whole tool calls and the usage."""

    finish_reason: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    model: str = ""
    # Opaque proof of the reasoning (Anthropic's thinking-block signature),
    # kept with the assistant message so it can be replayed unchanged.
    reasoning_signature: str = ""
    # What the assistant message keeps for the kind to replay unchanged: (meta key,
    # JSON text) pairs, e.g. the Anthropic kind's whole content when a server-side
    # web search ran (its blocks are replayed exactly as received).
    replay_meta: tuple[tuple[str, str], ...] = ()


Chunk = TextChunk | ReasoningChunk | ToolCallFragment | WebSearchChunk | StreamEnd


class Provider(Protocol):
    name: str

    def prepare(self, request: Request) -> PreparedRequest: ...

    def stream(self, prepared: PreparedRequest) -> AsyncGenerator[Chunk, None]: ...

    def max_output_tokens(self, model: str) -> int | None:
        """The model's own output ceiling, when known (used for the auto budget)."""
        ...

    def efforts(self) -> tuple[str, ...]:
        """The reasoning-effort levels this provider accepts, ``auto`` first
        (empty: it does not say, anything is passed through)."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class StreamIdleTimeout(Protocol):
    """A provider whose stream gives up after this many seconds without data (the HTTP
    providers); the session sets it from ``[agent].stream_idle_timeout``."""

    stream_idle_timeout: float


ProviderFactory = Callable[["ProviderConfig", str], Provider]

_KINDS: dict[str, ProviderFactory] = {}


def register_kind(kind: str, factory: ProviderFactory) -> None:
    _KINDS[kind] = factory


BUILTIN_KINDS = {
    "openai": "reasonix_core.provider.openai",
    "anthropic": "reasonix_core.provider.anthropic",
    "responses": "reasonix_core.provider.responses",
}


def known_kinds() -> list[str]:
    for kind in BUILTIN_KINDS:
        _load_builtin_kind(kind)
    return sorted(_KINDS)


def create_provider(config: ProviderConfig, api_key: str) -> Provider:
    _load_builtin_kind(config.kind)
    factory = _KINDS.get(config.kind)
    if factory is None:
        raise ConfigError(
            f"provider {config.name!r} has unknown kind {config.kind!r}; "
            f"known kinds: {', '.join(known_kinds())}"
        )
    return factory(config, api_key)


def _load_builtin_kind(kind: str) -> None:
    # Built-in kinds register themselves on import. Only the kind a session
    # uses is imported, and the parent never imports its children at module
    # level, so `import reasonix_core.provider` stays cheap.
    module = BUILTIN_KINDS.get(kind)
    if module is not None and kind not in _KINDS:
        import importlib

        importlib.import_module(module)
