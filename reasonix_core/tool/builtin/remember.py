"""``remember``: save a background fact for later sessions, or update one.

Not read-only, so it goes through the permission layer; the builder installs
:func:`reasonix_core.memory.facts.auto_save_reason` as a policy hook so that a
bounded, non-sensitive, create-only project/reference fact saves without
asking (seed 000 §3.6). Everything else follows the preset.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import anyio
from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolFamily, ToolResult

MAX_TITLE = 120
MAX_CONTENT = 4000
MAX_KEYWORDS = 8


class RememberArgs(BaseModel):
    model_config = ARGS_CONFIG

    title: str = Field(min_length=1, max_length=MAX_TITLE)
    content: str = Field(min_length=1, max_length=MAX_CONTENT)
    type: Literal["user", "feedback", "project", "reference"]
    scope: Literal["project", "global"] | None = None
    keywords: list[str] | None = Field(default=None, max_length=MAX_KEYWORDS)
    id: str | None = None


class RememberTool:
    name: ClassVar[str] = "remember"
    description: ClassVar[str] = (
        "Save a durable background fact for future sessions (one fact per call). Save only "
        "what will still be true and useful later and cannot be read off the code: a "
        "project convention or decision (type=project), where something lives outside the "
        "repo (type=reference), the user's role or preferences (type=user), or guidance the "
        "user gave about how to work (type=feedback). Do not save secrets, transient task "
        "state, or things the code or git history already records.\n"
        "- `title`: one line naming the fact; `content`: the fact itself, short and "
        "self-contained (include the why when it matters); `keywords`: optional search terms.\n"
        "- `scope`: project (this workspace) or global (every project); default: project for "
        "project/reference, global for user/feedback.\n"
        "- To change an existing fact pass its `id` (from the memory tool): the previous "
        "revision is kept. Without `id` a new fact is created; a fact with the same title in "
        "the same scope is refused (update it instead).\n"
        "New, short, non-sensitive project/reference facts are saved without asking; other "
        "saves may need the user's approval."
    )
    read_only: ClassVar[bool] = False
    family: ClassVar[ToolFamily] = ToolFamily.OTHER
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "title": {
                "type": "string",
                "maxLength": MAX_TITLE,
                "description": "One line naming the fact.",
            },
            "content": {
                "type": "string",
                "maxLength": MAX_CONTENT,
                "description": "The fact, short and self-contained.",
            },
            "type": {"type": "string", "enum": ["user", "feedback", "project", "reference"]},
            "scope": {
                "type": "string",
                "enum": ["project", "global"],
                "description": "Default: project for project/reference, global for user/feedback.",
            },
            "keywords": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": MAX_KEYWORDS,
                "description": "Optional extra search terms.",
            },
            "id": {
                "type": "string",
                "description": "Update this existing fact instead of creating one.",
            },
        },
        "required": ["title", "content", "type"],
        "additionalProperties": False,
    }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from reasonix_core.memory import fact_store
        from reasonix_core.memory.facts import FactError

        a: RememberArgs = validate_args(RememberArgs, args)
        store = fact_store(ctx)

        def save() -> Any:
            if a.id:
                current = store.locate(a.id.strip())
                if current is not None and a.scope and a.scope != current.scope:
                    raise FactError(
                        f"fact {current.id} is a {current.scope} fact; its scope cannot change. "
                        "Forget it and remember a new one in the other scope"
                    )
                return store.update(
                    a.id.strip(),
                    title=a.title,
                    body=a.content,
                    type=a.type,
                    keywords=a.keywords,
                )
            return store.create(
                type=a.type,
                title=a.title,
                body=a.content,
                scope=a.scope,
                keywords=a.keywords or (),
            )

        try:
            fact = await anyio.to_thread.run_sync(save)
        except FactError as exc:
            return ToolResult.error(f"remember: {exc}")
        verb = "saved" if fact.revision == 1 else f"updated to revision {fact.revision}"
        return ToolResult(
            text=(
                f"remember: {verb} {fact.type} fact {fact.id} (scope {fact.scope}): {fact.title}"
            ),
            meta={"id": fact.id, "revision": fact.revision, "scope": fact.scope},
        )
