"""``remember``: save a background fact for later sessions, or update one.

Not read-only, so it goes through the permission layer; the builder installs
:func:`reasonix_core.memory.facts.auto_save_reason` as a policy hook so that a
bounded, non-sensitive, create-only project/reference fact saves without
asking (seed 000 §3.6). Everything else follows the preset.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import MAX_CONTENT, MAX_KEYWORDS, MAX_TITLE, SpecifiedTool
from reasonix_core.tool.builtin.specs import REMEMBER as SPEC

if TYPE_CHECKING:  # memory/ loads with the first call
    from reasonix_core.memory.facts import Fact


class RememberArgs(BaseModel):
    model_config = ARGS_CONFIG

    title: str = Field(min_length=1, max_length=MAX_TITLE)
    content: str = Field(min_length=1, max_length=MAX_CONTENT)
    type: Literal["user", "feedback", "project", "reference"]
    scope: Literal["project", "global"] | None = None
    keywords: list[str] | None = Field(default=None, max_length=MAX_KEYWORDS)
    id: str | None = None


class RememberTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from reasonix_core.memory import fact_store
        from reasonix_core.memory.facts import FactError

        a: RememberArgs = validate_args(RememberArgs, args)
        store = fact_store(ctx)

        def save() -> Fact:
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
