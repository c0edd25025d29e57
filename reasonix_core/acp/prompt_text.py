"""An ACP prompt's content blocks as the one text of a turn (before the session
expands its ``/command`` and ``@path``, as the TUI's input is)."""

from __future__ import annotations

from typing import Any

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)


def prompt_text(blocks: list[Any]) -> str:
    """Text as typed; a resource link as its URI; an embedded resource (an editor's
    selection) as a fenced block naming its URI. Images and audio are not taken
    (the agent does not advertise them)."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(block.uri)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f"\n<context uri={resource.uri!r}>\n{resource.text}\n</context>\n")
            else:
                parts.append(resource.uri)
    return " ".join(part for part in parts if part)
