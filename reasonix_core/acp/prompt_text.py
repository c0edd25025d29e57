"""An ACP prompt's content blocks as the one text of a turn (before the session
expands its ``/command`` and ``@path``, as the TUI's input is)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)


def prompt_text(blocks: list[Any], workspace: Path) -> str:
    """Text as typed; a resource link to a file in the workspace as its ``@path``
    mention (the session attaches it, under the read rules, as the TUI does), any
    other link as its URI; an embedded resource (an editor's selection) as a block
    naming its URI. Images and audio are not taken (the agent does not advertise them)."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(_mention(block.uri, workspace))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f"\n<context uri={resource.uri!r}>\n{resource.text}\n</context>\n")
            else:
                parts.append(resource.uri)
    return " ".join(part for part in parts if part)


def _mention(uri: str, workspace: Path) -> str:
    """``@relative/path`` for a ``file://`` URI inside the workspace, else the URI."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return uri
    path = Path(unquote(parsed.path))
    try:
        relative = path.relative_to(workspace)
    except ValueError:
        return uri
    text = relative.as_posix()
    # A mention ends at whitespace: such a path stays a URI the model can read.
    return f"@{text}" if text and text != "." and not any(c.isspace() for c in text) else uri
