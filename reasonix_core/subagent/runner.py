"""The one subagent runner (seed 000 §3.15).

Every entry point compiles a :class:`SubagentSpec` and calls
:meth:`SubagentRunner.run`; nothing else builds an Agent for a child (a test
lists the modules allowed to). The runner resolves, in order: depth, profile,
read-only, model and effort, the write claim (:mod:`.claims`), the tool scope
(:mod:`.scope`), permissions (the session's gate: same rules, same approver),
the sandbox (the claim as the only write roots), the system prompt and first
user turn (:mod:`.prompts`: nothing inherited), the transcript and its
ContextCapsule sidecar (:mod:`.capsule`), then runs the child Agent - the same
loop, the same :class:`~reasonix_core.agent.model_call.ModelCall` - with its
own transcript, records receipts (:mod:`.receipts`), compares the writes with
the claim and adjudicates the completion report (:mod:`.completion`).

The child's events reach the caller's ``emit`` tagged with the child's agent
path (``SubagentStarted``, its steps, tool calls, usage with source
``subagent``, ``SubagentFinished``); its turn events and text deltas stay
inside: the parent sees the result, not the child's conversation.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from reasonix_core import events as ev
from reasonix_core.agent.assemble import assemble_agent, capability_tool
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.loop import Agent
from reasonix_core.agent.prompt import workspace_context
from reasonix_core.agent.session import (
    LoadedSession,
    MemorySessionStore,
    SessionHeader,
    SessionStore,
    fork_session,
    new_session_id,
    read_session,
    session_path,
)
from reasonix_core.agent.session_lock import hold_session
from reasonix_core.config import ResolvedModel, read_api_key, resolve_model
from reasonix_core.efforts import check_effort
from reasonix_core.errors import ConfigError, ReasonixError, SessionError
from reasonix_core.messages import Message
from reasonix_core.permission.approver import Requester, current_requester
from reasonix_core.provider.base import Provider, StreamIdleTimeout, create_provider
from reasonix_core.subagent.capsule import ContextCapsule, sha256_text
from reasonix_core.subagent.claims import bash_rebind_problem, claimed, resolve_claim
from reasonix_core.subagent.completion import (
    Adjudication,
    CompleteSubtaskTool,
    adjudicate,
    parse_report,
)
from reasonix_core.subagent.profile import Profile
from reasonix_core.subagent.prompts import (
    COMPLETION_CONTRACT,
    DEFAULT_READ_ONLY_PROMPT,
    DEFAULT_TASK_PROMPT,
    run_options_block,
    subagent_context,
)
from reasonix_core.subagent.receipts import Receipts, RecordedTool, changed, snapshot
from reasonix_core.subagent.result import SubagentResult
from reasonix_core.subagent.scope import Scope, child_scope
from reasonix_core.subagent.services import SessionServices
from reasonix_core.subagent.slots import Slots, WriteClaim
from reasonix_core.subagent.spec import SubagentError, SubagentSpec
from reasonix_core.tool.base import Tool, ToolContext
from reasonix_core.tool.ledger import FileLedger
from reasonix_core.tool.registry import ToolRegistry, builtin_tools
from reasonix_core.tool.sandbox import SandboxPolicy, is_within

DEFAULT_MAX_DEPTH = 2
#: Turns a blocking SubagentStop hook may add to one child's run.
MAX_SUBAGENT_STOP_CONTINUATIONS = 3

Emit = Callable[[ev.Event], Awaitable[None]]

# What stays inside the child: its turn (the runner reports it as Subagent*)
# and its streamed text, which the parent receives once, as the tool result.
_PRIVATE = (
    ev.TurnStarted,
    ev.TurnFinished,
    ev.TurnFailed,
    ev.TextDelta,
    ev.ReasoningDelta,
    ev.ToolCallDelta,
)


class SubagentRunner:
    """Runs child agents for one agent (the session's, or a child that may nest)."""

    def __init__(
        self,
        services: SessionServices,
        *,
        agent_path: tuple[str, ...] = (),
        depth: int = 0,
        session_id: str | None = None,
        bound: tuple[Path, ...] | None = None,
        plan_mode: bool = False,
    ) -> None:
        self.services = services
        # The agent this runner spawns for was told it runs in plan mode (a child):
        # its own children are told too.
        self.plan_mode = plan_mode
        # The write claim of the agent this runner spawns for, which bounds its
        # children's claims (a child cannot hand out more than it holds); None:
        # the session's agent, bounded by the workspace alone.
        self.bound = bound
        if services.slots is None:
            services.slots = Slots.from_config(services.config.agent)
        self.slots: Slots = services.slots
        self.agent_path = agent_path
        # The depth of the agent this runner spawns for (the session's is 0).
        self.depth = depth
        self.session_id = session_id or services.env.session_id
        self._labels = itertools.count(1)

    def runner(self) -> SubagentRunner:
        """Itself: a child's ``ToolContext.subagents`` answers like the session's
        :class:`~reasonix_core.subagent.delegation.Delegation` handle."""
        return self

    def spec(self, prompt: str, **fields: Any) -> SubagentSpec:
        """A spec for a child of this runner's agent (depth, parent session filled in)."""
        fields.setdefault("depth", self.depth + 1)
        fields.setdefault("parent_session_id", self.session_id)
        fields["plan_mode"] = fields.get("plan_mode", False) or self.plan_mode
        language = self.services.config.agent.reasoning_language
        fields.setdefault("language", "" if language.lower() == "auto" else language)
        return SubagentSpec(prompt=prompt, **fields)

    def profile(self, name: str | None) -> Profile | None:
        """The named profile; raises :class:`SubagentError` for an unknown name."""
        if not name:
            return None
        lookup = self.services.profiles
        try:
            found = lookup(name) if lookup is not None else None
        except ReasonixError as exc:  # the skill's file is no longer usable
            raise SubagentError(str(exc)) from None
        if found is None:
            raise SubagentError(f"unknown subagent profile {name!r}")
        return found

    async def run(self, spec: SubagentSpec, emit: Emit | None = None) -> SubagentResult:
        """Run one child to the end of its turn and adjudicate it.

        Raises :class:`SubagentError` when it cannot start (before anything ran)."""
        s = self.services
        plan = self._plan(spec)
        earlier = None
        if spec.continue_from or spec.fork_from:
            earlier = await anyio.to_thread.run_sync(self._earlier, spec, plan)
        async with AsyncExitStack() as stack:
            # Scheduling: the claim decides who may run beside whom; a fleet
            # item adopts the slot its fleet took for it, a nested child borrows
            # its parent's slot or waits for one of its own (slots.py).
            await stack.enter_async_context(self.slots.hold(plan.scheduling))
            if plan.narrows:
                # Unclaimed, and only path-aware writers: once it writes, its
                # reservation is just the files written (its enforced claim stays
                # the workspace).
                plan.receipts.on_write = lambda: self.slots.narrow(
                    WriteClaim.resolved(_mutations(plan.receipts, plan.sandbox))
                )
            resolved, provider = await self._provider(spec, plan.profile, stack)
            effort = self._effort(spec, plan, provider, resolved)
            capsule = plan.capsule(spec, s.sandbox, resolved.ref, effort)
            # Creating the transcript and writing the capsule (atomic, fsync: a few
            # ms) happen off the event loop the parent and a fleet's children share.
            store = await anyio.to_thread.run_sync(
                self._store, plan, spec, capsule, resolved.ref, effort, earlier
            )
            stack.callback(store.close)
            if earlier is not None:
                # One writer per transcript: a sibling going on in the same child waits
                # for nothing, it is refused (session_lock.py).
                try:
                    stack.enter_context(hold_session(store))
                except SessionError as exc:
                    raise SubagentError(str(exc)) from None
            context = self._context(spec, plan, store.id)
            history = earlier.messages if earlier is not None else ()
            agent = self._agent(provider, resolved, effort, plan, context, store, spec, history)
            if earlier is not None:
                # Its compaction checkpoint (if any) as it left it: never re-planned.
                agent.context.restore(store.read_checkpoint(), agent.messages)
            # Subagent* go in the spawner's stream (its path); the child's own
            # events carry the child's path.
            seq = EventSequence(self.agent_path)
            if emit is not None:
                await emit(
                    seq(
                        ev.SubagentStarted,
                        name=plan.name,
                        child_path=plan.path,
                        tool_call_id=spec.parent_call_id,
                        fleet_item=spec.fleet_item,
                        read_only=plan.read_only,
                        prompt=spec.prompt,
                        capsule_hash=capsule.capsule_hash,
                    )
                )
            answer, error = await self._drive_watched(agent, spec, plan, emit, earlier is not None)
            result = _result(plan, store.id, answer, error, capsule)
            if emit is not None:
                await emit(_finished(seq, result, plan.name))
            return result

    def _effort(
        self, spec: SubagentSpec, plan: _Plan, provider: Provider, resolved: ResolvedModel
    ) -> str:
        """The child's effort (the spec's, its profile's, else the session's), checked
        against what its provider accepts."""
        s = self.services
        wanted = spec.effort or (plan.profile.effort if plan.profile else None) or s.effort
        try:
            return check_effort(wanted, provider.efforts(), resolved.provider.name)
        except ConfigError as exc:
            raise SubagentError(str(exc)) from None

    def _context(self, spec: SubagentSpec, plan: _Plan, session_id: str) -> ToolContext:
        """The child's tool context: the session's facts with its own transcript and
        claim-bound sandbox, a fresh file ledger, and a runner of its own when it may
        nest."""
        s = self.services
        nested = (
            SubagentRunner(
                s,
                agent_path=plan.path,
                depth=spec.depth,
                session_id=session_id,
                bound=plan.claim,
                plan_mode=spec.plan_mode,
            )
            if plan.can_nest
            else None
        )
        return ToolContext(
            env=s.env.child(session_id=session_id, sandbox=plan.sandbox),
            ledger=FileLedger(),
            subagents=nested,
        )

    async def _drive_watched(
        self, agent: Agent, spec: SubagentSpec, plan: _Plan, emit: Emit | None, going_on: bool
    ) -> tuple[str, str | None]:
        """Drive the child's turn as its requester; note what its bash commands changed."""
        watch = "bash" in plan.scope.names
        before = await anyio.to_thread.run_sync(snapshot, plan.claim) if watch else None
        # Every approval the child asks for names it (the session's gate is shared).
        outer = current_requester.get()  # the subagent that spawned this one, if any
        who = f"{spec.fleet_item} · {plan.name}" if spec.fleet_item else plan.name
        asking = current_requester.set(
            Requester(
                agent_path=plan.path,
                name=plan.name,
                task=_short(spec.prompt),
                lineage=(*(outer.lineage if outer is not None else ()), who),
            )
        )
        if going_on:
            # An earlier context (continue_from / fork_from): the options, then the task.
            options = run_options_block(spec.plan_mode, spec.language)
            turn = f"{options}\n\n{spec.prompt}" if options else spec.prompt
        else:
            turn = self._first_turn(spec, plan)
        try:
            answer, error = await self._drive_hooked(agent, turn, plan, emit)
        finally:
            current_requester.reset(asking)
        if watch:
            after = await anyio.to_thread.run_sync(snapshot, plan.claim)
            plan.receipts.note_bash_changes(changed(before, after))
        return answer, error

    def _plan(self, spec: SubagentSpec) -> _Plan:
        """Everything decided before anything runs: depth, read-only, the claim and
        the sandbox bound to it, the tool scope, the system prompt."""
        s = self.services
        if spec.depth > s.max_depth:
            raise SubagentError(
                f"subagent depth {spec.depth} exceeds [agent] max_subagent_depth = {s.max_depth}"
            )
        if not spec.prompt.strip():
            raise SubagentError("the subagent's prompt is empty")
        profile = spec.profile
        read_only = spec.is_read_only
        label = spec.label or spec.parent_call_id or f"subagent-{next(self._labels)}"
        claim = () if read_only else self.claim(spec.write_paths)
        sandbox = dataclasses.replace(s.sandbox, allow_write=(), claim=claim)
        can_nest = spec.depth < s.max_depth
        scope = child_scope(
            self._session_tools(),
            read_only=read_only,
            can_nest=can_nest,
            bash_problem=None if read_only else bash_rebind_problem(sandbox, claim),
            allowed=profile.allowed_tools if profile is not None else None,
        )
        receipts = Receipts()
        tools: list[Tool] = [RecordedTool(t, receipts) for t in scope.tools]
        if not read_only:
            tools.append(RecordedTool(CompleteSubtaskTool(receipts.accept_report), receipts))
        if profile is not None and profile.system_prompt:
            system_prompt, source = profile.system_prompt, f"profile:{profile.name}"
        elif read_only:
            system_prompt, source = DEFAULT_READ_ONLY_PROMPT, "default_read_only"
        else:
            system_prompt, source = DEFAULT_TASK_PROMPT, "default_task"
        return _Plan(
            profile=profile,
            read_only=read_only,
            path=(*self.agent_path, label),
            claim=claim,
            sandbox=sandbox,
            can_nest=can_nest,
            scope=scope,
            receipts=receipts,
            registry=ToolRegistry(tools),
            system_prompt=system_prompt,
            source=source,
            scheduling=_scheduling(read_only, claim),
            # Narrowing is safe only when the host sees every write as it happens:
            # no bash, and no children of its own writing inside its slot.
            narrows=(
                spec.write_paths is None
                and self.bound is None
                and not read_only
                and not {"bash", "task", "fleet"} & set(scope.names)
            ),
        )

    def claim(self, write_paths: tuple[str, ...] | None) -> tuple[Path, ...]:
        """A writer's claim, resolved, and within what its spawner holds: an
        omitted claim inherits the spawner's; a path outside it is refused
        (:class:`SubagentError`). A fleet's preflight resolves its items' claims
        with it too."""
        claim = resolve_claim(write_paths, self.services.sandbox)
        bound = self.bound
        if bound is None:
            return claim
        if write_paths is None:
            return bound
        sandbox = self.services.sandbox
        for path in claim:
            if not claimed(path, bound):
                held = ", ".join(sandbox.display(p) for p in bound) or "nothing"
                raise SubagentError(
                    f"write_paths: {sandbox.display(path)} is outside this subagent's own "
                    f"write claim ({held}); a subagent can delegate only what it may write"
                )
        return claim

    async def _drive_hooked(
        self, agent: Agent, turn: str, plan: _Plan, emit: Emit | None
    ) -> tuple[str, str | None]:
        """The child's turn between its SubagentStart and SubagentStop hooks
        (docs/HOOKS.md): a SubagentStop that blocks (exit 2, ``decision: block``)
        sends the child on with the reason, a bounded number of times."""
        hooks = self.services.env.hooks
        if hooks is None:
            return await self._drive(agent, turn, emit)
        who = {"agent_id": plan.path[-1], "agent_type": plan.name}
        if hooks.has("SubagentStart"):
            await hooks.fire("SubagentStart", who, subject=(plan.name,))
            await self._hook_events(emit)
        answer, error = await self._drive(agent, turn, emit)
        for rounds in range(MAX_SUBAGENT_STOP_CONTINUATIONS + 1):
            if error is not None or not hooks.has("SubagentStop"):
                break
            stopped = await hooks.fire(
                "SubagentStop",
                {
                    **who,
                    "stop_hook_active": rounds > 0,
                    "agent_transcript_path": str(agent.session.path),
                    "last_assistant_message": answer,
                },
                subject=(plan.name,),
                session_id=agent.session_id,
            )
            await self._hook_events(emit)
            if stopped.stop or not stopped.blocked or rounds == MAX_SUBAGENT_STOP_CONTINUATIONS:
                break
            answer, error = await self._drive(
                agent, f"A SubagentStop hook asks you to continue: {stopped.reason}", emit
            )
        return answer, error

    async def _hook_events(self, emit: Emit | None) -> None:
        hooks = self.services.env.hooks
        if hooks is None:
            return
        seq = EventSequence(self.agent_path)
        for report in hooks.take_reports():
            if emit is not None:
                await emit(seq(ev.HookRan, **report.fields()))

    async def _drive(self, agent: Agent, text: str, emit: Emit | None) -> tuple[str, str | None]:
        """Run the child's one turn, forwarding its events; (answer, error)."""
        answer, error = "", None
        async with aclosing(agent.run(text)) as events:
            async for event in events:
                if isinstance(event, ev.TurnFinished):
                    answer = event.text
                    if event.stop_reason == "max_steps":
                        error = "stopped at the step limit before finishing"
                elif isinstance(event, ev.TurnFailed):
                    error = event.error
                if emit is not None and not isinstance(event, _PRIVATE):
                    await emit(event)
        return answer, error

    # -- construction -----------------------------------------------------

    def _session_tools(self) -> list[Tool]:
        """Fresh instances of the session's tools for one child; the MCP proxy as
        the child's own front end, which calls read-only targets only."""
        return [
            *builtin_tools(self.services.config.tools.enabled),
            capability_tool(self.services.mcp, read_only_targets=True),
        ]

    async def _provider(
        self, spec: SubagentSpec, profile: Profile | None, stack: AsyncExitStack
    ) -> tuple[ResolvedModel, Provider]:
        s = self.services
        ref = spec.model or (profile.model if profile is not None else None)
        if not ref:
            return s.resolved, s.provider
        try:
            resolved = resolve_model(s.config, ref)
        except ConfigError as exc:
            raise SubagentError(f"model {ref!r}: {exc}") from None
        if resolved.provider.name == s.resolved.provider.name:
            return resolved, s.provider  # one connection pool per provider
        try:
            provider = create_provider(resolved.provider, read_api_key(resolved.provider, s.home))
        except ReasonixError as exc:
            raise SubagentError(f"model {ref!r}: {exc}") from None
        stack.push_async_callback(provider.aclose)
        if isinstance(provider, StreamIdleTimeout):
            provider.stream_idle_timeout = s.config.agent.stream_idle_timeout
        return resolved, provider

    def _earlier(self, spec: SubagentSpec, plan: _Plan) -> LoadedSession:
        """The earlier child ``continue_from`` / ``fork_from`` names, checked: a child
        of this same agent (a model cannot reach another session's transcripts, nor
        a path), of the same kind (its system prompt is this run's)."""
        if spec.continue_from and spec.fork_from:
            raise SubagentError("give continue_from or fork_from, not both")
        wanted = spec.continue_from or spec.fork_from
        key = "continue_from" if spec.continue_from else "fork_from"
        root = self.services.home / "sessions" / "subagents"
        try:
            path = session_path(root, self.services.env.workspace, wanted)
            if not path.is_file():
                raise SubagentError(f"{key}: no subagent session {wanted!r} in this workspace")
            header, messages = read_session(path)
        except (SessionError, OSError) as exc:
            raise SubagentError(f"{key}: {exc}") from None
        origin = header.extra.get("subagent")
        parent = origin.get("parent_session_id") if isinstance(origin, dict) else None
        if parent != self.session_id:
            raise SubagentError(f"{key}: {wanted!r} is not a subagent this agent started")
        if header.system_prompt != plan.system_prompt:
            raise SubagentError(
                f"{key}: {wanted!r} ran as another kind of subagent; go on in it with the "
                "same profile and read_only as it started with"
            )
        return LoadedSession(store=SessionStore(path, header), header=header, messages=messages)

    def _store(
        self,
        plan: _Plan,
        spec: SubagentSpec,
        capsule: ContextCapsule,
        model: str,
        effort: str,
        earlier: LoadedSession | None = None,
    ) -> SessionStore:
        """The child's transcript (the capsule beside it), or an in-memory one for
        an ephemeral spec; going on from an ``earlier`` one, that transcript
        (``continue_from``) or a copy of it (``fork_from``)."""
        s = self.services
        now = s.clock()
        origin = {
            "parent_session_id": spec.parent_session_id,
            "parent_tool_call_id": spec.parent_call_id,
            "agent_path": list(plan.path),
            "capsuleHash": capsule.capsule_hash,
        }
        if earlier is not None and not spec.ephemeral:
            if spec.continue_from:
                store = earlier.store
                store.append_event("subagent_continued", **origin, time=now.isoformat())
            else:
                store = fork_session(
                    earlier, s.home / "sessions" / "subagents", s.env.workspace, now,
                    subagent=origin,
                )  # fmt: skip
            capsule.write(store.path.with_name(f"{store.id}.capsule.json"))
            return store
        header = SessionHeader(
            id=new_session_id(now),
            workspace=str(s.env.workspace),
            created=now.isoformat(),
            model=model,
            effort=effort,
            system_prompt=plan.system_prompt,
            tools_fingerprint=capsule.tool_schema_sha256[:16],
            extra={"subagent": origin},
        )
        if spec.ephemeral:
            # Named in the session's temp dir (removed with the session), so
            # nothing that derives a file from the transcript's name (the cache
            # ledger's request records) writes anywhere lasting.
            return MemorySessionStore(s.env.temp_dir / f"{header.id}.jsonl", header)
        # Beside the session's folder, not in it: listing and --continue see only
        # top-level sessions.
        store = SessionStore.create(s.home / "sessions" / "subagents", s.env.workspace, header)
        capsule.write(store.path.with_name(f"{store.id}.capsule.json"))
        return store

    def _agent(
        self,
        provider: Provider,
        resolved: ResolvedModel,
        effort: str,
        plan: _Plan,
        context: ToolContext,
        store: SessionStore,
        spec: SubagentSpec,
        history: Sequence[Message] = (),
    ) -> Agent:
        s = self.services
        agent = assemble_agent(
            config=s.config,
            resolved=resolved,
            provider=provider,
            tools=plan.registry,
            tool_context=context,
            session=store,
            system_prompt=plan.system_prompt,
            history=history,
            effort=effort,
            max_steps=spec.max_steps or s.config.agent.max_steps,
            gate=s.gate,
            price=s.price,
            clock=s.clock,
            checkpoints=not isinstance(store, MemorySessionStore),
            source="subagent",
            agent_path=plan.path,
            budget=s.budget,
        )
        if s.retry_sleep is not None:
            agent.retry.sleep = s.retry_sleep
        return agent

    def _first_turn(self, spec: SubagentSpec, plan: _Plan) -> str:
        """Everything siblings share first - the workspace context, the depth note of a
        nested child, a writer's completion contract - and the task text last, so the
        task never precedes the shared part and siblings' requests are byte-identical
        up to it (the provider caches that prefix for the later ones)."""
        parts = [workspace_context(self.services.sandbox.root, self.services.clock())]
        if spec.depth > 1:
            parts.append(subagent_context(spec.depth, self.services.max_depth))
        if not plan.read_only:
            parts.append(COMPLETION_CONTRACT)
        options = run_options_block(spec.plan_mode, spec.language)
        if options:
            parts.append(options)
        parts.append(spec.prompt)
        return "\n\n".join(parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """One child, as decided before it runs (:meth:`SubagentRunner._plan`)."""

    profile: Profile | None
    read_only: bool
    path: tuple[str, ...]
    claim: tuple[Path, ...]
    sandbox: SandboxPolicy
    can_nest: bool
    scope: Scope
    receipts: Receipts
    registry: ToolRegistry
    system_prompt: str
    source: str
    scheduling: WriteClaim | None
    # An unclaimed writer whose reservation narrows to what it writes (seed 000 §3.12).
    narrows: bool

    @property
    def name(self) -> str:
        """What the events call it: the profile, or the kind of task."""
        if self.profile is not None:
            return self.profile.name
        return "read_only_task" if self.read_only else "task"

    def capsule(
        self, spec: SubagentSpec, session_sandbox: SandboxPolicy, model: str, effort: str
    ) -> ContextCapsule:
        return ContextCapsule(
            workspace=str(session_sandbox.root),
            system_prompt_source=self.source,
            system_prompt_sha256=sha256_text(self.system_prompt),
            tools=tuple(self.registry.names),
            tool_schema_sha256=sha256_text(self.registry.fingerprint),
            dropped_tools=dict(sorted(self.scope.dropped.items())),
            model=model,
            effort=effort,
            read_only=self.read_only,
            write_claim=None
            if self.read_only
            else tuple(self.sandbox.display(p) for p in self.claim),
            depth=spec.depth,
            parent_session_id=spec.parent_session_id,
            parent_tool_call_id=spec.parent_call_id,
            continued_from=spec.continue_from or None,
            forked_from=spec.fork_from or None,
            run_options=spec.run_options,
        )


def _result(
    plan: _Plan, session_id: str, answer: str, error: str | None, capsule: ContextCapsule
) -> SubagentResult:
    """Compare the host's record with the claim and adjudicate the report."""
    receipts, sandbox = plan.receipts, plan.sandbox
    mutations = _mutations(receipts, sandbox)
    violations = tuple(sandbox.display(p) for p in mutations if not claimed(p, plan.claim))
    adjudication: Adjudication | None = None
    if not plan.read_only and receipts.report is not None:
        adjudication = adjudicate(parse_report(receipts.report), receipts, sandbox)
    if error is not None:
        status, ok = "failed", False
    elif plan.read_only:
        status, ok = "done", True
    elif adjudication is not None:
        status = adjudication.status
        ok = status not in ("failed", "blocked")
    else:
        status, ok = "unreported", True
    return SubagentResult(
        label=plan.path[-1],
        agent_path=plan.path,
        session_id=session_id,
        read_only=plan.read_only,
        ok=ok,
        status=status,
        answer=answer,
        capsule=capsule,
        error=error,
        adjudication=adjudication,
        writes=tuple(sandbox.display(p) for p in mutations),
        commands=tuple((c.command, c.exit_code) for c in receipts.commands),
        violations=violations,
        unaccounted=receipts.bash_unaccounted,
    )


def _mutations(receipts: Receipts, sandbox: SandboxPolicy) -> list[Path]:
    """The paths written: the session's temp dir is scratch, not a mutation of
    anything; every other path written is one (and outside the claim an escape)."""
    scratch = Path(os.path.realpath(sandbox.temp_dir))
    return [p for p in receipts.writes if not is_within(p, scratch)]


def _finished(seq: EventSequence, result: SubagentResult, name: str) -> ev.SubagentFinished:
    adj = result.adjudication
    return seq(
        ev.SubagentFinished,
        name=name,
        ok=result.ok,
        child_path=result.agent_path,
        tool_call_id=result.capsule.parent_tool_call_id,
        status=result.status,
        read_only=result.read_only,
        completion=result.completion,
        claimed_status=adj.claimed_status if adj is not None else "",
        downgrades=adj.downgrades if adj is not None else 0,
        mutations=result.writes,
        violations=result.violations,
    )


def _short(prompt: str, width: int = 80) -> str:
    """The task's first non-empty line, at most ``width`` characters."""
    line = next((part.strip() for part in prompt.splitlines() if part.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def _scheduling(read_only: bool, claim: tuple[Path, ...]) -> WriteClaim | None:
    """The claim as the scheduler sees it: None for a reader, else the claim
    resolved once (:func:`.claims.resolve_claim`: the workspace root when omitted)."""
    return None if read_only else WriteClaim.resolved(claim)
