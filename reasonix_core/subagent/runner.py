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
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from reasonix_core import events as ev
from reasonix_core.agent.context import ContextManager
from reasonix_core.agent.event_sequence import EventSequence
from reasonix_core.agent.loop import Agent, AgentOptions
from reasonix_core.agent.model_call import PriceFn, no_price
from reasonix_core.agent.prompt import workspace_context
from reasonix_core.agent.retry import RetryPolicy
from reasonix_core.agent.session import SessionHeader, SessionStore, new_session_id
from reasonix_core.config import Config, ResolvedModel, read_api_key, resolve_model
from reasonix_core.errors import ConfigError, ReasonixError
from reasonix_core.permission.gate import Gate
from reasonix_core.provider.base import Provider, create_provider
from reasonix_core.provider.efforts import check_effort
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
)
from reasonix_core.subagent.receipts import Receipts, RecordedTool, changed, snapshot
from reasonix_core.subagent.scope import child_scope
from reasonix_core.subagent.slots import Slots, WriteClaim
from reasonix_core.subagent.spec import SubagentError, SubagentSpec
from reasonix_core.tool.base import Tool, ToolContext
from reasonix_core.tool.ledger import FileLedger
from reasonix_core.tool.registry import ToolRegistry, builtin_tools
from reasonix_core.tool.sandbox import SandboxPolicy

DEFAULT_MAX_DEPTH = 2

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


@dataclass(kw_only=True)
class SessionServices:
    """What a session lends its children; built once by the runtime builder."""

    config: Config
    home: Path
    workspace: Path
    resolved: ResolvedModel
    provider: Provider
    effort: str
    sandbox: SandboxPolicy
    temp_dir: Path
    session_id: str
    gate: Gate | None = None
    approver: Any = None
    read_denied: Callable[[str, Path], bool] | None = None
    secret_env: frozenset[str] = frozenset()
    bash_timeout_seconds: float = 120.0
    mcp: Any = None
    price: PriceFn = no_price
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    # Profile lookup by name (skills with runAs: subagent); None: no profiles.
    profiles: Callable[[str], Profile | None] | None = None
    retry_sleep: Callable[[float], Awaitable[None]] | None = None
    # The session's scheduling slots, shared by every child (slots.py).
    slots: Slots = field(default_factory=Slots)

    @property
    def max_depth(self) -> int:
        return self.config.agent.max_subagent_depth


@dataclass(frozen=True, slots=True)
class SubagentResult:
    """What the parent gets back; :meth:`render` is its tool result."""

    label: str
    agent_path: tuple[str, ...]
    session_id: str
    read_only: bool
    ok: bool
    # read-only: "done" / "failed"; writers: the adjudicated status,
    # "unreported" (prose only) or "failed" (the run itself failed).
    status: str
    answer: str
    capsule: ContextCapsule
    error: str | None = None
    adjudication: Adjudication | None = None
    writes: tuple[str, ...] = ()
    commands: tuple[tuple[str, int | None], ...] = ()
    violations: tuple[str, ...] = ()
    # bash ran in a claim too large to snapshot: its changes are not itemised.
    unaccounted: bool = False
    dropped_tools: dict[str, str] = field(default_factory=dict)

    @property
    def completion(self) -> str:
        """How a writer ended: "report" (complete_subtask), "prose", or "" (read-only / failed)."""
        if self.read_only or self.error is not None:
            return ""
        return "report" if self.adjudication is not None else "prose"

    def render(self) -> str:
        parts: list[str] = []
        if self.error is not None:
            parts.append(f"[subagent failed: {self.error}]")
        adj = self.adjudication
        if adj is not None:
            head = f"[subagent status: {adj.status}"
            if adj.status != adj.claimed_status:
                head += f" (claimed {adj.claimed_status}; downgraded by the host)"
            parts.append(head + "]")
            parts.append(f"Summary: {adj.summary}")
            if adj.items:
                lines = ["Acceptance criteria (checked by the host):"]
                lines += [
                    f"- [{i.verdict}] {i.criterion} ({i.kind}: {i.reason})" for i in adj.items
                ]
                parts.append("\n".join(lines))
            if adj.unresolved:
                parts.append("\n".join(["Unresolved:", *(f"- {u}" for u in adj.unresolved)]))
        elif not self.read_only and self.error is None:
            parts.append("[subagent status: unreported (it ended without complete_subtask)]")
        if self.answer:
            parts.append(self.answer)
        if not self.read_only:
            lines = ["Host receipt:"]
            lines.append(f"- wrote: {', '.join(self.writes) if self.writes else 'nothing'}")
            if self.commands:
                lines += [f"- ran: {c} (exit {code})" for c, code in self.commands]
            else:
                lines.append("- ran: no commands")
            if self.unaccounted:
                lines.append("- bash changes: not itemised (too many files in the claim)")
            if self.violations:
                lines.append(f"- WRITES OUTSIDE THE CLAIM: {', '.join(self.violations)}")
            parts.append("\n".join(lines))
        return "\n\n".join(parts)


class _MemoryStore(SessionStore):
    """An ephemeral child's transcript: kept in memory only (``spec.ephemeral``)."""

    def _write(self, record: dict[str, Any]) -> None:
        pass

    def write_checkpoint(self, data: dict[str, Any]) -> None:
        pass

    def read_checkpoint(self) -> dict[str, Any] | None:
        return None


class SubagentRunner:
    """Runs child agents for one agent (the session's, or a child that may nest)."""

    def __init__(
        self,
        services: SessionServices,
        *,
        agent_path: tuple[str, ...] = (),
        depth: int = 0,
        session_id: str | None = None,
    ) -> None:
        self.services = services
        self.agent_path = agent_path
        # The depth of the agent this runner spawns for (the session's is 0).
        self.depth = depth
        self.session_id = session_id or services.session_id
        self._labels = itertools.count(1)

    def spec(self, prompt: str, **fields: Any) -> SubagentSpec:
        """A spec for a child of this runner's agent (depth, parent session filled in)."""
        fields.setdefault("depth", self.depth + 1)
        fields.setdefault("parent_session_id", self.session_id)
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
        if spec.depth > s.max_depth:
            raise SubagentError(
                f"subagent depth {spec.depth} exceeds [agent] max_subagent_depth = {s.max_depth}"
            )
        if not spec.prompt.strip():
            raise SubagentError("the subagent's prompt is empty")
        profile = spec.profile
        read_only = spec.is_read_only
        label = spec.label or spec.parent_call_id or f"subagent-{next(self._labels)}"
        path = (*self.agent_path, label)

        claim = () if read_only else resolve_claim(spec.write_paths, s.sandbox)
        sandbox = dataclasses.replace(s.sandbox, allow_write=(), claim=claim)
        bash_problem = None if read_only else bash_rebind_problem(sandbox, claim)
        can_nest = spec.depth < s.max_depth
        scope = child_scope(
            self._session_tools(),
            read_only=read_only,
            can_nest=can_nest,
            bash_problem=bash_problem,
            allowed=profile.allowed_tools if profile is not None else None,
        )
        receipts = Receipts()
        tools: list[Tool] = [RecordedTool(t, receipts) for t in scope.tools]
        if not read_only:
            tools.append(RecordedTool(CompleteSubtaskTool(receipts.accept_report), receipts))
        registry = ToolRegistry(tools)

        if profile is not None and profile.system_prompt:
            system_prompt, source = profile.system_prompt, f"profile:{profile.name}"
        elif read_only:
            system_prompt, source = DEFAULT_READ_ONLY_PROMPT, "default_read_only"
        else:
            system_prompt, source = DEFAULT_TASK_PROMPT, "default_task"

        async with AsyncExitStack() as stack:
            # Scheduling: the claim decides who may run beside whom; inside a
            # slot already held (a fleet item, a nested child) no second one.
            await stack.enter_async_context(s.slots.hold(_scheduling(read_only, claim)))
            resolved, provider = await self._provider(spec, profile, stack)
            wanted = spec.effort or (profile.effort if profile is not None else None) or s.effort
            try:
                effort = check_effort(wanted, provider.efforts(), resolved.provider.name)
            except ConfigError as exc:
                raise SubagentError(str(exc)) from None
            now = s.clock()
            child_id = new_session_id(now)
            capsule = ContextCapsule(
                workspace=str(s.sandbox.root),
                system_prompt_source=source,
                system_prompt_sha256=sha256_text(system_prompt),
                tools=tuple(registry.names),
                tool_schema_sha256=sha256_text(registry.fingerprint),
                model=resolved.ref,
                effort=effort,
                read_only=read_only,
                write_claim=None if read_only else tuple(sandbox.display(p) for p in claim),
                depth=spec.depth,
                parent_session_id=spec.parent_session_id,
                parent_tool_call_id=spec.parent_call_id,
            )
            header = SessionHeader(
                id=child_id,
                workspace=str(s.workspace),
                created=now.isoformat(),
                model=resolved.ref,
                effort=effort,
                system_prompt=system_prompt,
                tools_fingerprint=capsule.tool_schema_sha256[:16],
                extra={
                    "subagent": {
                        "parent_session_id": spec.parent_session_id,
                        "parent_tool_call_id": spec.parent_call_id,
                        "agent_path": list(path),
                        "capsuleHash": capsule.capsule_hash,
                    }
                },
            )
            store = self._store(header, spec.ephemeral)
            stack.callback(store.close)
            if not spec.ephemeral:
                # atomic_write_text fsyncs (a few ms): off the event loop, which
                # the parent and the other children of a fleet share.
                sidecar = store.path.with_name(f"{child_id}.capsule.json")
                await anyio.to_thread.run_sync(capsule.write, sidecar)

            context = ToolContext(
                workspace=s.workspace,
                temp_dir=s.temp_dir,
                bash_timeout_seconds=s.bash_timeout_seconds,
                approver=s.approver,
                secret_env=s.secret_env,
                sandbox=sandbox,
                ledger=FileLedger(),
                read_denied=s.read_denied,
                gate=s.gate,  # type: ignore[arg-type]
            )
            if can_nest:
                context.subagents = SubagentRunner(
                    s, agent_path=path, depth=spec.depth, session_id=child_id
                )
            agent = self._agent(
                provider, resolved, effort, registry, context, store, system_prompt, spec, path
            )
            text = self._first_turn(spec.prompt, read_only)
            # Subagent* go in the spawner's stream (its path), the child's own
            # events carry the child's path.
            seq = EventSequence(self.agent_path)
            if emit is not None:
                await emit(
                    seq(
                        ev.SubagentStarted,
                        name=profile.name if profile is not None else _kind(read_only),
                        child_path=path,
                        tool_call_id=spec.parent_call_id,
                        fleet_item=spec.fleet_item,
                        read_only=read_only,
                        prompt=spec.prompt,
                        capsule_hash=capsule.capsule_hash,
                    )
                )
            answer, error = "", None
            watch = "bash" in scope.names
            before = await anyio.to_thread.run_sync(snapshot, claim) if watch else None
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
            if before is not None:
                after = await anyio.to_thread.run_sync(snapshot, claim)
                receipts.note_bash_changes(changed(before, after) if after is not None else None)
            result = self._result(
                spec, label, path, child_id, read_only, answer, error, capsule, claim,
                sandbox, receipts, scope.dropped,
            )  # fmt: skip
            if emit is not None:
                name = profile.name if profile is not None else _kind(read_only)
                await emit(self._finished(seq, result, name))
            return result

    # -- construction -----------------------------------------------------

    def _session_tools(self) -> list[Tool]:
        """Fresh instances of the session's tools for one child; the MCP proxy as
        the child's own front end, which calls read-only targets only."""
        tools: list[Tool] = list(builtin_tools(self.services.config.tools.enabled))
        mcp = self.services.mcp
        if mcp is not None and getattr(mcp, "configured", False):
            from reasonix_core.mcp.capability import UseCapabilityTool

            tools.append(UseCapabilityTool(mcp, read_only_targets=True))
        return tools

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
        if hasattr(provider, "stream_idle_timeout"):
            provider.stream_idle_timeout = s.config.agent.stream_idle_timeout
        return resolved, provider

    def _store(self, header: SessionHeader, ephemeral: bool) -> SessionStore:
        if ephemeral:
            return _MemoryStore(Path("/dev/null"), header)
        # Beside the session's folder, not in it: listing and --continue see only
        # top-level sessions.
        sessions = self.services.home / "sessions" / "subagents"
        return SessionStore.create(sessions, self.services.workspace, header)

    def _agent(
        self,
        provider: Provider,
        resolved: ResolvedModel,
        effort: str,
        registry: ToolRegistry,
        context: ToolContext,
        store: SessionStore,
        system_prompt: str,
        spec: SubagentSpec,
        path: tuple[str, ...],
    ) -> Agent:
        s = self.services
        agent_cfg = s.config.agent
        window = resolved.provider.context_window_for(resolved.model)
        retry = RetryPolicy(
            attempts=agent_cfg.retry_attempts,
            base_delay=agent_cfg.retry_base_delay,
            max_delay=agent_cfg.retry_max_delay,
        )
        if s.retry_sleep is not None:
            retry.sleep = s.retry_sleep
        return Agent(
            provider=provider,
            model=resolved.model,
            tools=registry,
            tool_context=context,
            session=store,
            system_prompt=system_prompt,
            gate=s.gate,
            retry=retry,
            options=AgentOptions(
                effort=effort,
                max_steps=spec.max_steps or agent_cfg.max_steps,
                context_window=window,
                max_output_tokens=resolved.provider.max_output_tokens_for(resolved.model),
                source="subagent",
                agent_path=path,
            ),
            price=s.price,
            clock=s.clock,
            context=ContextManager(
                window=window,
                ratio=agent_cfg.compact_ratio,
                store=None if isinstance(store, _MemoryStore) else store,
            ),
        )

    def _first_turn(self, prompt: str, read_only: bool) -> str:
        """The workspace context first (shared by every child of the session), then the
        task, then (writers) the completion contract: the task never precedes the shared part."""
        parts = [workspace_context(self.services.sandbox.root, self.services.clock()), prompt]
        if not read_only:
            parts.append(COMPLETION_CONTRACT)
        return "\n\n".join(parts)

    # -- after the run ----------------------------------------------------

    def _result(
        self,
        spec: SubagentSpec,
        label: str,
        path: tuple[str, ...],
        child_id: str,
        read_only: bool,
        answer: str,
        error: str | None,
        capsule: ContextCapsule,
        claim: Sequence[Path],
        sandbox: SandboxPolicy,
        receipts: Receipts,
        dropped: dict[str, str],
    ) -> SubagentResult:
        claim_roots = tuple(claim)
        violations = tuple(
            sandbox.display(p) for p in receipts.writes if not claimed(p, claim_roots)
        )
        adjudication: Adjudication | None = None
        if not read_only and receipts.report is not None:
            adjudication = adjudicate(parse_report(receipts.report), receipts, sandbox)
        if error is not None:
            status, ok = "failed", False
        elif read_only:
            status, ok = "done", True
        elif adjudication is not None:
            status = adjudication.status
            ok = status not in ("failed", "blocked")
        else:
            status, ok = "unreported", True
        return SubagentResult(
            label=label,
            agent_path=path,
            session_id=child_id,
            read_only=read_only,
            ok=ok,
            status=status,
            answer=answer,
            capsule=capsule,
            error=error,
            adjudication=adjudication,
            writes=tuple(sandbox.display(p) for p in receipts.writes),
            commands=tuple((c.command, c.exit_code) for c in receipts.commands),
            violations=violations,
            unaccounted=receipts.bash_unaccounted,
            dropped_tools=dropped,
        )

    @staticmethod
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


def _scheduling(read_only: bool, claim: tuple[Path, ...]) -> WriteClaim | None:
    """The claim as the scheduler sees it: None for a reader, else the claim
    resolved once (:func:`.claims.resolve_claim`: the workspace root when omitted)."""
    return None if read_only else WriteClaim.resolved(claim)


def _kind(read_only: bool) -> str:
    return "read_only_task" if read_only else "task"
