"""``forget``: archive a background fact (it is never deleted), or restore one.

Restoring lives here rather than on the read-only ``memory`` tool: it writes, so it
must go through the permission policy like archiving (``memory`` stays read-only
and runs in plan mode and parallel read batches)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import FORGET as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool

if TYPE_CHECKING:  # memory/ loads with the first call
    from reasonix_core.memory.facts import FactStore


class ForgetArgs(BaseModel):
    model_config = ARGS_CONFIG

    id: str = Field(min_length=1)
    action: Literal["archive", "restore"] = "archive"
    reason: str | None = Field(default=None, max_length=500)


class ForgetTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from reasonix_core.memory import fact_store
        from reasonix_core.memory.facts import FactError

        a: ForgetArgs = validate_args(ForgetArgs, args)
        store = fact_store(ctx)
        if a.action == "restore":
            return await _restore(store, a.id.strip())
        try:
            fact = await anyio.to_thread.run_sync(
                lambda: store.forget(a.id.strip(), reason=a.reason or "")
            )
        except FactError as exc:
            return ToolResult.error(f"forget: {exc}")
        return ToolResult(
            text=(
                f"forget: archived {fact.type} fact {fact.id} ({fact.title}); it is no longer "
                f"recalled. Revision {fact.revision} and its history are kept in the archive."
            ),
            meta={"id": fact.id, "revision": fact.revision},
        )


async def _restore(store: FactStore, fact_id: str) -> ToolResult:
    from reasonix_core.memory.facts import FactError

    try:
        fact = await anyio.to_thread.run_sync(store.restore, fact_id)
    except FactError as exc:
        return ToolResult.error(f"forget: {exc}")
    return ToolResult(
        text=(
            f"forget: restored {fact.type} fact {fact.id} ({fact.title}) as revision "
            f"{fact.revision}; it is recalled again."
        ),
        meta={"id": fact.id, "revision": fact.revision},
    )
