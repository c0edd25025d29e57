"""The planner + executor :class:`~reasonix_core.agent.runner.Runner` (seed 000 §3.5).

Both are ordinary Agents with their own sessions, so each prompt prefix only
grows. A turn the routes (:mod:`.routes`) leave to the executor is the
executor's turn, byte for byte. A planning turn:

1. the planner receives ``<planner-turn route="..."/>`` and the user's text
   (its system prompt never changes) and researches with read-only tools for
   at most :data:`RESEARCH_STEPS` steps;
2. a plan counts only when delivered through ``submit_plan``; prose, or running
   out of research steps, earns one final summary round (:data:`SUMMARY_STEPS`);
3. still no plan, or a failed request: the turn fails closed - the executor
   never runs - and the planner's incomplete turn is rolled back (its messages
   dropped, a ``branch`` record appended: the transcript stays append-only and
   valid, rewind's mechanism);
4. a plan: plan-then-execute and goal hand it straight to the executor (in the
   executor's user turn); plan-for-approval asks the host's ``approve`` hook
   (the TUI's dialog) or, with none (headless), saves it for
   ``reasonix run -c --approve-plan``; plan-only saves it and ends the turn.

Events: one TurnStarted and one TurnFinished/TurnFailed per turn (the
planner's own turn events stay inside), ``RouteDecided`` first, ``PlanReady``
when a plan arrives; the planner's model calls report ``source="planner"``.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reasonix_core import events as ev
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.loop import Agent
from reasonix_core.agent.session import BRANCH
from reasonix_core.coordinator.plans import (
    PLAN_MODE_ROUTE,
    PlanVerdict,
    SavedPlan,
    handoff_text,
    pending_plan,
    save_plan,
    settle_plan,
)
from reasonix_core.coordinator.routes import Route, RouteDecision, TurnMeta, decide_route
from reasonix_core.errors import UsageError

if TYPE_CHECKING:
    from reasonix_core.images import ImagePart

#: The planner's research bound (model requests) before the summary round.
RESEARCH_STEPS = 12
#: The final summary round: one request to call submit_plan (and, when it does,
#: the step that runs the tool).
SUMMARY_STEPS = 1

PLANNER_TURN = '<planner-turn route="{route}"/>'
SUMMARY_TURN = (
    '<planner-turn route="{route}" phase="final-summary"/>\n'
    "Research is over. Deliver the best plan the evidence supports now, through "
    "submit_plan; a plan given as prose is not delivered."
)

#: The host's approval boundary: shows the plan, returns the user's verdict.
ApproveFn = Callable[[SavedPlan], Awaitable[PlanVerdict]]


class PlannerFailed(Exception):
    """The planner did not deliver a plan (internal: becomes a TurnFailed)."""


@dataclass
class PlanInbox:
    """Where ``submit_plan`` puts the plan (the coordinator empties it per turn)."""

    plans: list[str] = field(default_factory=list)

    def accept(self, plan: str) -> None:
        self.plans.append(plan)


class Coordinator:
    """Drives a planner Agent and an executor Agent behind one Runner."""

    def __init__(
        self,
        *,
        executor: Agent,
        planner: Agent,
        inbox: PlanInbox,
        approve: ApproveFn | None = None,
    ) -> None:
        self.executor = executor
        self.planner = planner
        self.inbox = inbox
        self.approve = approve
        self._events = EventSequence()
        self._plan_ids = itertools.count(1)

    # -- Runner protocol --------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.executor.session_id

    @property
    def model(self) -> str:
        return self.executor.model

    @property
    def effort(self) -> str:
        return self.executor.effort

    async def run(self, prompt: str, meta: TurnMeta | None = None) -> AsyncGenerator[ev.Event, None]:
        decision = decide_route(prompt, meta)
        yield self._events(ev.RouteDecided, route=decision.route.value, reason=decision.reason)
        if not decision.route.plans:
            async with aclosing(self.executor.run(prompt, meta)) as events:
                async for event in events:
                    yield self._events.adopt(event)
            return
        images = meta.images if meta is not None else ()
        async with aclosing(self._planned_turn(prompt, decision, images)) as events:
            async for event in events:
                yield event

    async def run_pending(self) -> AsyncGenerator[ev.Event, None]:
        """Execute the session's plan waiting for approval (``--approve-plan``)."""
        async with aclosing(run_pending_plan(self.executor, self._events)) as events:
            async for event in events:
                yield event

    # -- a planning turn --------------------------------------------------

    async def _planned_turn(
        self, prompt: str, decision: RouteDecision, images: tuple[ImagePart, ...] = ()
    ) -> AsyncGenerator[ev.Event, None]:
        route = decision.route
        yield self._events(ev.TurnStarted, session_id=self.session_id, prompt=prompt)
        plan: str | None = None
        failure = ""
        try:
            async with aclosing(self._plan(prompt, route)) as events:
                async for event in events:
                    if isinstance(event, str):
                        plan = event
                    else:
                        yield event
        except PlannerFailed as exc:
            failure = str(exc)
        if plan is None:
            yield self._events(
                ev.TurnFailed,
                error=f"the planner did not deliver a plan ({failure}); nothing was executed",
                kind="planner_failed",
                details={"route": route.value},
            )
            return
        saved = SavedPlan(
            id=f"{self.session_id}-plan-{next(self._plan_ids)}",
            route=route.value,
            plan=plan,
            request=prompt,
        )
        if route is Route.PLAN_ONLY:
            save_plan(self.executor.session, saved)
            yield self._ready(saved, "saved")
            yield self._events(ev.TurnFinished, stop_reason="plan_saved", text=plan)
            return
        if route is Route.PLAN_FOR_APPROVAL:
            save_plan(self.executor.session, saved)
            if self.approve is None:
                # Headless: the boundary holds; a later explicit --approve-plan runs it.
                yield self._ready(saved, "await_approval")
                yield self._events(ev.TurnFinished, stop_reason="plan_pending", text=plan)
                return
            yield self._ready(saved, "await_approval")
            verdict = await self.approve(saved)
            if verdict is not PlanVerdict.APPROVE:
                settle_plan(self.executor.session, saved.id, verdict)
                kept = verdict is PlanVerdict.KEEP
                yield self._ready(saved, "kept" if kept else "rejected")
                yield self._events(
                    ev.TurnFinished,
                    stop_reason="plan_pending" if kept else "plan_rejected",
                    text=plan,
                )
                return
            settle_plan(self.executor.session, saved.id, PlanVerdict.APPROVE)
            yield self._ready(saved, "approved")
        else:
            yield self._ready(saved, "execute")
        async with aclosing(self._execute(saved, announce=False, images=images)) as events:
            async for event in events:
                yield event

    def _ready(self, saved: SavedPlan, disposition: str) -> ev.PlanReady:
        return self._events(
            ev.PlanReady,
            plan_id=saved.id,
            plan=saved.plan,
            route=saved.route,
            disposition=disposition,
        )

    async def _execute(
        self, saved: SavedPlan, *, announce: bool, images: tuple[ImagePart, ...] = ()
    ) -> AsyncGenerator[ev.Event, None]:
        # The user's images go to the executor's turn (the planner plans from the text).
        turn = _execute(self.executor, saved, self._events, announce, images)
        async with aclosing(turn) as events:
            async for event in events:
                yield event

    async def _plan(self, prompt: str, route: Route) -> AsyncGenerator[ev.Event | str, None]:
        """The planner's turn; yields its events, then the plan (a str), or raises
        PlannerFailed after rolling the turn back."""
        planner = self.planner
        keep = len(planner.messages)
        self.inbox.plans.clear()
        steps = planner.options.max_steps
        completed = False
        try:
            problem = ""
            for text, limit in (
                (f"{PLANNER_TURN.format(route=route.value)}\n\n{prompt}", RESEARCH_STEPS),
                (SUMMARY_TURN.format(route=route.value), SUMMARY_STEPS),
            ):
                planner.options.max_steps = limit
                problem = ""
                async with aclosing(planner.run(text)) as events:
                    async for event in events:
                        if isinstance(event, ev.TurnFailed):
                            problem = f"planner request failed: {event.error}"
                        elif isinstance(event, ev.TurnFinished):
                            if event.stop_reason == "max_steps" and not self.inbox.plans:
                                problem = "research bound reached without submit_plan"
                            elif not self.inbox.plans:
                                problem = "prose without submit_plan (protocol error)"
                        elif not isinstance(event, ev.TurnStarted):
                            yield self._events.adopt(event)
                if self.inbox.plans:
                    completed = True
                    yield self.inbox.plans[-1]
                    return
                if problem.startswith("planner request failed"):
                    break
            raise PlannerFailed(problem or "no plan")
        finally:
            planner.options.max_steps = steps
            if not completed:
                self._roll_back(keep)

    def _roll_back(self, keep: int) -> None:
        """Drop the planner's incomplete turn: its next turn continues from the
        messages before it, and a restart reads the same (the branch record)."""
        planner = self.planner
        if len(planner.messages) > keep:
            del planner.messages[keep:]
            # The file holds no system message (the header does): one fewer.
            planner.session.append_event(BRANCH, keep=keep - 1)


async def run_pending_plan(
    executor: Agent, sequence: EventSequence | None = None
) -> AsyncGenerator[ev.Event, None]:
    """Execute the newest plan waiting for approval in ``executor``'s session:
    the approval is this explicit call (``reasonix run -c --approve-plan``),
    never a prompt's wording. Needs no planner: the plan is already written.
    Raises UsageError when no plan waits."""
    sequence = sequence or EventSequence()
    saved = pending_plan(executor.session.path)
    if saved is None:
        raise UsageError("no plan is waiting for approval in this session")
    settle_plan(executor.session, saved.id, PlanVerdict.APPROVE)
    yield sequence(
        ev.PlanReady, plan_id=saved.id, plan=saved.plan, route=saved.route, disposition="approved"
    )
    async with aclosing(_execute(executor, saved, sequence, True)) as events:
        async for event in events:
            yield event


async def _execute(
    executor: Agent,
    saved: SavedPlan,
    sequence: EventSequence,
    announce: bool,
    images: tuple[ImagePart, ...] = (),
) -> AsyncGenerator[ev.Event, None]:
    """The executor's turn over the request and its plan; its TurnStarted is
    the coordinator's own unless ``announce`` (a turn of its own)."""
    # A plan-mode approval's request is the host's words, not the user's: a host turn
    # (drawn as a notice on resume, not counted as a prompt), as live.
    host_made = saved.route == PLAN_MODE_ROUTE
    meta = TurnMeta(images=images, synthetic=host_made) if images or host_made else None
    async with aclosing(executor.run(handoff_text(saved.request, saved.plan), meta)) as events:
        async for event in events:
            if isinstance(event, ev.TurnStarted) and not announce:
                continue
            yield sequence.adopt(event)
