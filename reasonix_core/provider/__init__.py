"""Model providers: the protocol, the kind registry and built-in kinds."""

from reasonix_core.jsontext import canonical_json
from reasonix_core.provider.base import (
    Chunk,
    PreparedRequest,
    Provider,
    ReasoningChunk,
    Request,
    StreamEnd,
    TextChunk,
    ToolCallFragment,
    ToolSchema,
    WebSearchChunk,
    create_provider,
    known_kinds,
    register_kind,
)

__all__ = [
    "Chunk",
    "PreparedRequest",
    "Provider",
    "ReasoningChunk",
    "Request",
    "StreamEnd",
    "TextChunk",
    "ToolCallFragment",
    "ToolSchema",
    "WebSearchChunk",
    "canonical_json",
    "create_provider",
    "known_kinds",
    "register_kind",
]
