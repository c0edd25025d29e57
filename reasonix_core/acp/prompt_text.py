"""An ACP prompt's content blocks as the one text of a turn (before the session
expands its ``/command`` and ``@path``, as the TUI's input is)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

if TYPE_CHECKING:
    from reasonix_core.images import ImagePart


def prompt_text(blocks: list[Any], workspace: Path) -> str:
    """Text as typed; a resource link to a file in the workspace as its ``@path``
    mention (the session attaches it, under the read rules, as the TUI does), any
    other link as its URI; an embedded resource (an editor's selection) as a block
    naming its URI. Images go beside the text (:func:`prompt_images`); audio is not
    taken (the agent does not advertise it)."""
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


def prompt_images(blocks: list[Any]) -> tuple[tuple[ImagePart, ...], list[str]]:
    """The prompt's inline image blocks as image parts (the core's one entry point
    checks type, signature and size), and a notice per block that is not one."""
    from reasonix_core.images import ImageError, image_part_from_base64

    images: list[ImagePart] = []
    problems: list[str] = []
    for number, block in enumerate(blocks, start=1):
        if not isinstance(block, ImageContentBlock):
            continue
        label = block.uri or f"image {number}"
        try:
            images.append(image_part_from_base64(block.mime_type, block.data, label))
        except ImageError as exc:
            problems.append(f"{exc}; not attached")
    return tuple(images), problems


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
