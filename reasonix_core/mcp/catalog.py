"""What one server offers (tools, prompts, resources), as immutable records,
plus the conversions from SDK results to plain text for the model.

A catalog is built once per ready generation, after every cursor page of
``tools/list``, ``prompts/list`` and ``resources/list`` was consumed, and
replaced whole: a caller never sees half of a listing.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from reasonix_core.mcp.config import sanitize

if TYPE_CHECKING:  # the SDK loads off the event loop (_sdk)
    from mcp_types import (
        BlobResourceContents,
        CallToolResult,
        ContentBlock,
        GetPromptResult,
        TextResourceContents,
    )

#: Upper bound on cursor pages per listing: a server that never stops paging cannot hang start-up.
MAX_PAGES = 100


def full_name(server_key: str, remote: str) -> str:
    return f"mcp__{server_key}__{sanitize(remote)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class McpToolInfo:
    full_name: str  # mcp__<server>__<tool>
    server: str  # server key
    remote_name: str  # the name the server knows
    description: str
    input_schema: dict[str, Any]
    read_only: bool  # annotations.readOnlyHint is explicitly true
    destructive: bool  # annotations.destructiveHint is explicitly true


@dataclass(frozen=True, slots=True, kw_only=True)
class McpPromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class McpPromptInfo:
    full_name: str  # mcp__<server>__<prompt>; the slash command without "/"
    server: str
    remote_name: str
    description: str
    arguments: tuple[McpPromptArgument, ...] = ()

    @property
    def argument_hint(self) -> str:
        return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.arguments)


@dataclass(frozen=True, slots=True, kw_only=True)
class McpResourceInfo:
    server: str
    uri: str
    name: str = ""
    description: str = ""
    mime_type: str = ""

    @property
    def reference(self) -> str:
        """How a user refers to it: ``@<server>:<uri>``."""
        return f"@{self.server}:{self.uri}"


@dataclass(frozen=True, slots=True)
class Catalog:
    tools: tuple[McpToolInfo, ...] = ()
    prompts: tuple[McpPromptInfo, ...] = ()
    resources: tuple[McpResourceInfo, ...] = ()

    def tool(self, name: str) -> McpToolInfo | None:
        for tool in self.tools:
            if tool.full_name == name:
                return tool
        return None

    def prompt(self, name: str) -> McpPromptInfo | None:
        for prompt in self.prompts:
            if prompt.full_name == name:
                return prompt
        return None


class _Page(Protocol):
    """One page of an MCP listing (tools, prompts or resources)."""

    @property
    def next_cursor(self) -> str | None: ...


async def all_pages(
    fetch: Callable[..., Awaitable[_Page]], attr: str, types: ModuleType
) -> list[Any]:
    """Every item of a paginated listing, following ``next_cursor``."""
    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await fetch(params=params)
        items.extend(getattr(result, attr) or ())
        cursor = result.next_cursor
        if not cursor or cursor in seen:
            break
        seen.add(cursor)
    return items


def build_catalog(
    server_key: str, tools: list[Any], prompts: list[Any], resources: list[Any]
) -> Catalog:
    tool_infos: list[McpToolInfo] = []
    names: set[str] = set()
    for tool in tools:
        name = full_name(server_key, tool.name)
        if name in names:
            continue  # two remote names that sanitise alike: the first one wins
        names.add(name)
        annotations = tool.annotations
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        if schema.get("type") != "object":
            schema = {
                "type": "object",
                "properties": {},
                **{k: v for k, v in schema.items() if k != "type"},
            }
        tool_infos.append(
            McpToolInfo(
                full_name=name,
                server=server_key,
                remote_name=tool.name,
                description=(tool.description or tool.title or "").strip(),
                input_schema=schema,
                read_only=bool(annotations is not None and annotations.read_only_hint is True),
                destructive=bool(annotations is not None and annotations.destructive_hint is True),
            )
        )
    prompt_infos = [
        McpPromptInfo(
            full_name=full_name(server_key, p.name),
            server=server_key,
            remote_name=p.name,
            description=(p.description or p.title or "").strip(),
            arguments=tuple(
                McpPromptArgument(
                    name=a.name, description=a.description or "", required=bool(a.required)
                )
                for a in (p.arguments or ())
            ),
        )
        for p in prompts
    ]
    resource_infos = [
        McpResourceInfo(
            server=server_key,
            uri=str(r.uri),
            name=r.name or "",
            description=(r.description or "").strip(),
            mime_type=r.mime_type or "",
        )
        for r in resources
    ]
    return Catalog(tuple(tool_infos), tuple(prompt_infos), tuple(resource_infos))


# --- results as text -------------------------------------------------------------


def content_text(block: ContentBlock) -> str:
    """One content block of a tool result or prompt message as text."""
    kind: str = getattr(block, "type", "")  # a newer SDK may bring other kinds
    if not kind:
        return "[unknown content]"
    if block.type == "text":
        return block.text
    if block.type == "image":
        return f"[image {block.mime_type}, {_b64_size(block.data)} bytes]"
    if block.type == "audio":
        return f"[audio {block.mime_type}, {_b64_size(block.data)} bytes]"
    if block.type == "resource_link":
        return f"[resource link {block.uri}{f' ({block.name})' if block.name else ''}]"
    if block.type == "resource":
        return resource_text(block.resource)
    return f"[{kind or 'unknown'} content]"


def resource_text(contents: TextResourceContents | BlobResourceContents) -> str:
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        return text
    blob = getattr(contents, "blob", "")
    mime = getattr(contents, "mime_type", None) or "application/octet-stream"
    return f"[binary resource {contents.uri}, {mime}, {_b64_size(blob)} bytes]"


def call_result_text(result: CallToolResult) -> str:
    parts = [content_text(block) for block in (result.content or ())]
    text = "\n".join(p for p in parts if p)
    structured = getattr(result, "structured_content", None)
    if structured is not None and not text.strip():
        text = json.dumps(structured, ensure_ascii=False, sort_keys=True)
    return text or "(no output)"


def prompt_text(result: GetPromptResult) -> str:
    """A ``prompts/get`` result as one user turn: the messages in order."""
    chunks: list[str] = []
    for message in result.messages or ():
        text = content_text(message.content)
        if message.role != "user":
            text = f"[{message.role}]\n{text}"
        chunks.append(text)
    return "\n\n".join(chunks)


def _b64_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (ValueError, TypeError):
        return len(data) * 3 // 4
