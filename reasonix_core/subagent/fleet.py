"""A fleet is a small dependency graph of subagent items (seed 000 §3.14).

The vocabulary is ``id`` and ``depends_on``: no conditions, no expressions, no
dynamic fan-out. :func:`preflight` checks a plan before anything starts (a fleet
that cannot finish never begins); :func:`run_fleet` starts every item as soon as
its dependencies are done, within the session's :class:`~.slots.Slots`. How one
item runs is a callable, so the graph knows nothing of agents.

- A failed or skipped item skips its whole downstream branch.
- Without ``fail_fast`` independent branches go on; with it, no new item starts
  after a failure, and items already running finish (a writer is never dropped
  half-way).
- Only items that may run at the same time need disjoint ``write_paths``; items
  ordered by the graph may share paths. Two items that may run together with
  overlapping explicit claims are a preflight error. An item without
  ``write_paths`` claims the whole workspace: it is not an error, it waits until
  no other writer runs.
- A dependent's task text ends with its direct dependencies' results
  (:func:`task_text`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import anyio

from reasonix_core import events as ev
from reasonix_core.errors import FleetPlanError
from reasonix_core.subagent.slots import Slots, WriteClaim
from reasonix_core.subagent.spec import SubagentError

if TYPE_CHECKING:
    from pathlib import Path

    from reasonix_core.tool.sandbox import SandboxPolicy

__all__ = [
    "SLOT_WAIT",
    "UPSTREAM_LIMIT",
    "FleetItem",
    "FleetPlan",
    "FleetResult",
    "ItemOutcome",
    "ItemResult",
    "preflight",
    "run_fleet",
    "task_text",
]

#: The reason reported for an item whose dependencies are done but whose slot is not.
SLOT_WAIT = "waiting for a scheduling slot"
#: Characters of one upstream result a dependent receives (head and tail kept).
UPSTREAM_LIMIT = 8000
#: Characters of an item's line in the fleet's summary for people.
BRIEF_CHARS = 120
_ID = re.compile(r"[\w.:/ -]{1,64}")
FinalState = Literal["done", "failed", "skipped", "cancelled"]


@dataclass(frozen=True, slots=True)
class FleetItem:
    """One item as the model wrote it. ``id`` ``None``: its 1-based position."""

    prompt: str
    id: str | None = None
    profile: str | None = None
    depends_on: tuple[str, ...] = ()
    write_paths: tuple[str, ...] | None = None
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class ItemResult:
    """What running one item gave: ``ok`` decides done or failed; ``text`` is
    what the parent and the dependents read; ``status`` an optional label (a
    writer's adjudicated status)."""

    ok: bool
    text: str
    status: str = ""
    # What it came back with, for people ("" : the text's first line).
    brief: str = ""


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    item_id: str
    state: FinalState
    text: str = ""  # the item's answer (done / failed)
    reason: str = ""  # why it was skipped, failed or cancelled
    status: str = ""
    brief: str = ""  # ItemResult.brief

    def summary(self) -> str:
        """One line for people: the item, how it ended, a short result."""
        how = self.status or self.state
        short = self.brief or next((x for x in self.text.splitlines() if x.strip()), "")
        if self.reason:
            how = self.reason if self.reason.startswith(self.state) else f"{how}: {self.reason}"
            short = "" if self.state != "failed" else short
        line = f"{self.item_id}  {_flat(how)}" + (f" · {_flat(short)}" if short.strip() else "")
        return line if len(line) <= BRIEF_CHARS else line[: BRIEF_CHARS - 1] + "…"


def _flat(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class FleetPlan:
    """A checked fleet: ids resolved, in the model's order, and an order in which
    every item follows its dependencies."""

    items: tuple[FleetItem, ...]  # every ``id`` set
    order: tuple[str, ...]  # topological
    claims: Mapping[str, WriteClaim | None]  # None: read-only

    def item(self, item_id: str) -> FleetItem:
        return next(i for i in self.items if i.id == item_id)


@dataclass(frozen=True, slots=True)
class FleetResult:
    outcomes: tuple[ItemOutcome, ...]  # in the plan's item order

    @property
    def ok(self) -> bool:
        return all(o.state == "done" for o in self.outcomes)

    def count(self, state: FinalState) -> int:
        return sum(1 for o in self.outcomes if o.state == state)

    def summary(self) -> str:
        """The fleet's result for people (its card shows this, never :meth:`render`'s
        XML): one line per item, in the plan's order."""
        return "\n".join(o.summary() for o in self.outcomes)

    def render(self) -> str:
        """The fleet's result as the parent model reads it."""
        states: tuple[FinalState, ...] = ("done", "failed", "skipped", "cancelled")
        tally = ", ".join(f"{self.count(s)} {s}" for s in states if self.count(s))
        parts = [f"fleet: {len(self.outcomes)} items, {tally}"]
        for o in self.outcomes:
            status = f' status="{o.status}"' if o.status else ""
            body = "\n".join(x for x in (o.reason, o.text) if x)
            parts.append(f'<item id="{o.item_id}" state="{o.state}"{status}>\n{body}\n</item>')
        return "\n\n".join(parts)


def preflight(
    items: Sequence[FleetItem],
    sandbox: SandboxPolicy,
    *,
    resolve: Callable[[tuple[str, ...] | None], Sequence[Path]] | None = None,
) -> FleetPlan:
    """Resolve ids, check the graph, resolve the write claims (as the runner
    will enforce them: ``resolve``, the runner's own resolution, bounded by the
    claim of the agent that calls the fleet; default the workspace's) and check
    those of items that may run together; raise :class:`FleetPlanError` naming
    the ids at fault."""
    if not items:
        raise FleetPlanError("a fleet needs at least one item")
    resolved: list[FleetItem] = []
    seen: set[str] = set()
    for position, item in enumerate(items, start=1):
        item_id = str(position) if item.id is None else item.id
        if not _ID.fullmatch(item_id):
            raise FleetPlanError(
                f"item {position}: id {item_id!r} must be 1-64 letters, digits, spaces or . _ : / -"
            )
        if item_id in seen:
            raise FleetPlanError(f"duplicate id {item_id!r} (item {position})")
        seen.add(item_id)
        if item.read_only and item.write_paths:
            raise FleetPlanError(f"item {item_id!r} is read_only but claims write_paths")
        depends_on = tuple(dict.fromkeys(item.depends_on))
        resolved.append(replace(item, id=item_id, depends_on=depends_on))
    for item in resolved:
        for dep in item.depends_on:
            if dep == item.id:
                raise FleetPlanError(f"item {item.id!r} depends on itself")
            if dep not in seen:
                raise FleetPlanError(
                    f"item {item.id!r} depends on {dep!r}, which is not an item id "
                    f"(ids: {', '.join(sorted(seen))})"
                )
    order = _topological(resolved)
    claims: dict[str, WriteClaim | None] = {}
    for i in resolved:
        assert i.id is not None
        try:
            if i.read_only:
                claims[i.id] = None
            elif resolve is None:
                claims[i.id] = WriteClaim.of(i.write_paths, sandbox)
            else:
                claims[i.id] = WriteClaim.resolved(resolve(i.write_paths))
        except SubagentError as exc:
            raise FleetPlanError(f"item {i.id!r}: {exc}") from None
    _check_concurrent_claims(resolved, claims)
    return FleetPlan(items=tuple(resolved), order=order, claims=claims)


def _topological(items: Sequence[FleetItem]) -> tuple[str, ...]:
    deps = {i.id: i.depends_on for i in items if i.id is not None}
    order: list[str] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 2:
            return
        if state.get(node) == 1:
            cycle = [*trail[trail.index(node) :], node]
            raise FleetPlanError(f"dependency cycle: {' -> '.join(cycle)}")
        state[node] = 1
        for dep in deps[node]:
            visit(dep, [*trail, node])
        state[node] = 2
        order.append(node)

    for node in deps:
        visit(node, [])
    return tuple(order)


def _ancestors(items: Sequence[FleetItem]) -> dict[str, set[str]]:
    deps = {i.id: i.depends_on for i in items if i.id is not None}
    memo: dict[str, set[str]] = {}

    def of(node: str) -> set[str]:
        if node not in memo:
            found: set[str] = set()
            for dep in deps[node]:
                found |= {dep} | of(dep)
            memo[node] = found
        return memo[node]

    return {node: of(node) for node in deps}


def _check_concurrent_claims(
    items: Sequence[FleetItem], claims: Mapping[str, WriteClaim | None]
) -> None:
    """Two items the graph leaves unordered may run at once: their explicit
    write claims must not overlap (an omitted claim just waits its turn)."""
    ancestors = _ancestors(items)
    explicit = [i.id for i in items if i.id is not None and i.write_paths is not None]
    for n, a in enumerate(explicit):
        for b in explicit[n + 1 :]:
            if a in ancestors[b] or b in ancestors[a]:
                continue
            ca, cb = claims[a], claims[b]
            if ca is not None and cb is not None and ca.overlaps(cb):
                raise FleetPlanError(
                    f"items {a!r} and {b!r} may run at the same time and both claim "
                    f"{ca.shared_with(cb)}; make one depend on the other or split the write_paths"
                )


def task_text(item: FleetItem, upstream: Mapping[str, ItemResult]) -> str:
    """The task a child is given: the item's prompt, then (for a dependent) its
    direct dependencies' results in an ``<upstream-results>`` block, each
    bounded to :data:`UPSTREAM_LIMIT` characters."""
    if not item.depends_on:
        return item.prompt
    blocks = []
    for dep in item.depends_on:
        result = upstream[dep]
        status = f' status="{result.status}"' if result.status else ""
        blocks.append(f'<result id="{dep}"{status}>\n{_bounded(result.text)}\n</result>')
    return (
        f"{item.prompt}\n\n<upstream-results>\n"
        "The items this task depends on finished with these results:\n"
        + "\n".join(blocks)
        + "\n</upstream-results>"
    )


def _bounded(text: str) -> str:
    if len(text) <= UPSTREAM_LIMIT:
        return text
    half = UPSTREAM_LIMIT // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n[... {omitted} characters omitted ...]\n{text[-half:]}"


RunItem = Callable[[FleetItem, Mapping[str, ItemResult]], Awaitable[ItemResult]]
Report = Callable[[ev.FleetItemChanged], None]


async def run_fleet(
    plan: FleetPlan,
    run_item: RunItem,
    *,
    slots: Slots,
    fail_fast: bool = False,
    report: Report | None = None,
    tool_call_id: str = "",
) -> FleetResult:
    """Run a checked plan. ``run_item`` gets the item with its full task text as
    ``prompt`` (see :func:`task_text`) and its direct dependencies' results; an
    exception it raises fails that item. ``report`` sees every state change as a
    :class:`~reasonix_core.events.FleetItemChanged` (``seq`` and ``agent_path``
    left for the stream to stamp). Cancelling the caller cancels every running
    item, reports the unfinished ones ``cancelled`` and re-raises."""
    return await _FleetRun(plan, run_item, slots, fail_fast, report, tool_call_id).run()


class _FleetRun:
    def __init__(
        self,
        plan: FleetPlan,
        run_item: RunItem,
        slots: Slots,
        fail_fast: bool,
        report: Report | None,
        tool_call_id: str,
    ) -> None:
        self.plan = plan
        self.run_item = run_item
        self.slots = slots
        self.fail_fast = fail_fast
        self.report = report
        self.tool_call_id = tool_call_id
        self.outcomes: dict[str, ItemOutcome] = {}
        self.results: dict[str, ItemResult] = {}
        self.launched: set[str] = set()
        self.first_failure = ""

    async def run(self) -> FleetResult:
        for item in self.plan.items:
            self._emit(_id(item), "waiting")
        try:
            async with anyio.create_task_group() as tg:
                self._launch_ready(tg)
        except BaseException:
            for item_id in self.plan.order:
                if item_id not in self.outcomes:
                    self._finish(item_id, "cancelled", reason="the fleet was cancelled")
            raise
        return FleetResult(outcomes=tuple(self.outcomes[_id(i)] for i in self.plan.items))

    def _launch_ready(self, tg: anyio.abc.TaskGroup) -> None:
        # In topological order a skip reaches the whole branch in one pass.
        for item_id in self.plan.order:
            if item_id in self.outcomes or item_id in self.launched:
                continue
            item = self.plan.item(item_id)
            blocked = next(
                (
                    d
                    for d in item.depends_on
                    if d in self.outcomes and self.outcomes[d].state != "done"
                ),
                None,
            )
            if blocked is not None:
                self._finish(
                    item_id,
                    "skipped",
                    reason=f"skipped: depends on {blocked!r}, which {_past(self.outcomes[blocked].state)}",
                )
            elif self.first_failure and self.fail_fast:
                self._finish(item_id, "skipped", reason=self._fail_fast_reason())
            elif all(d in self.outcomes for d in item.depends_on):
                self.launched.add(item_id)
                tg.start_soon(self._run_one, item, tg)

    async def _run_one(self, item: FleetItem, tg: anyio.abc.TaskGroup) -> None:
        item_id = _id(item)
        claim = self.plan.claims[item_id]
        if not self.slots.can_start(claim):
            self._emit(item_id, "waiting", SLOT_WAIT)
        try:
            await self._hold_and_run(item, claim)
        except SubagentError as exc:  # its claim no longer fits the slot it runs in
            self.first_failure = self.first_failure or item_id
            self._finish(item_id, "failed", text=str(exc))
        self._launch_ready(tg)

    async def _hold_and_run(self, item: FleetItem, claim: WriteClaim | None) -> None:
        item_id = _id(item)
        # Taken for the item's child: the runner adopts it rather than nesting.
        async with self.slots.hold(claim, for_child=True):
            if self.first_failure and self.fail_fast:
                # Waited for a slot while another item failed: never started.
                self._finish(item_id, "skipped", reason=self._fail_fast_reason())
            else:
                self._emit(item_id, "running")
                upstream = {d: self.results[d] for d in item.depends_on}
                try:
                    result = await self.run_item(
                        replace(item, prompt=task_text(item, upstream)), upstream
                    )
                except Exception as exc:  # an item's bug fails the item, not the fleet
                    result = ItemResult(ok=False, text=f"{type(exc).__name__}: {exc}")
                self.results[item_id] = result
                state: FinalState = "done" if result.ok else "failed"
                if not result.ok:
                    self.first_failure = self.first_failure or item_id
                self._finish(
                    item_id, state, text=result.text, status=result.status, brief=result.brief
                )

    def _fail_fast_reason(self) -> str:
        return f"skipped: fail_fast is set and {self.first_failure!r} failed"

    def _finish(
        self,
        item_id: str,
        state: FinalState,
        *,
        text: str = "",
        reason: str = "",
        status: str = "",
        brief: str = "",
    ) -> None:
        self.outcomes[item_id] = ItemOutcome(
            item_id=item_id, state=state, text=text, reason=reason, status=status, brief=brief
        )
        self._emit(item_id, state, reason)

    def _emit(self, item_id: str, state: ev.FleetItemState, reason: str = "") -> None:
        if self.report is not None:
            self.report(
                ev.FleetItemChanged(
                    tool_call_id=self.tool_call_id,
                    item_id=item_id,
                    state=state,
                    depends_on=self.plan.item(item_id).depends_on,
                    reason=reason,
                )
            )


def _id(item: FleetItem) -> str:
    assert item.id is not None  # preflight resolved it
    return item.id


def _past(state: FinalState) -> str:
    return {"failed": "failed", "skipped": "was skipped", "cancelled": "was cancelled"}.get(
        state, state
    )
