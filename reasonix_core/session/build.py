"""Building a session from what a surface asks for, in named steps.

config -> model -> policy -> tools -> store -> agent -> modes. Each step returns
what it built and takes what the earlier ones returned, so the order is the data
flow and nothing is set on an object after it is built. ``reasonix run``, the
TUI, ``reasonix subagent run`` and the benches all enter :func:`build_session`, so
every surface runs exactly the same engine.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import tempfile
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix_core.agent.assemble import assemble_agent, capability_tool
from reasonix_core.agent.budget import BudgetLimits, BudgetMeter
from reasonix_core.agent.cache_ledger import last_settings
from reasonix_core.agent.instructions import Instructions
from reasonix_core.agent.loop import Agent
from reasonix_core.agent.model_call import PriceFn
from reasonix_core.agent.prompt import BASE_PROMPT, build_system_prompt, workspace_context
from reasonix_core.agent.session import (
    LoadedSession,
    MemorySessionStore,
    SessionHeader,
    SessionStore,
    new_session_id,
    open_session,
    read_request_records,
)
from reasonix_core.agent.session_lock import hold_session
from reasonix_core.checkpoint.timeline import ends_with_branch
from reasonix_core.config import (
    Config,
    ResolvedModel,
    load_config,
    read_api_key,
    reasonix_home,
    resolve_model,
    secret_env_names,
)
from reasonix_core.coordinator.plan_mode import PlanMode
from reasonix_core.efforts import check_effort
from reasonix_core.errors import ConfigError, SessionError
from reasonix_core.goal.state import GoalBook
from reasonix_core.hooks.engine import Hooks
from reasonix_core.hooks.settings import LoadedSettings, load_settings
from reasonix_core.memory import auto_save_reason, recall_block
from reasonix_core.messages import Message
from reasonix_core.permission.approver import Approver
from reasonix_core.permission.gate import PermissionGate
from reasonix_core.permission.policy import Policy
from reasonix_core.permission.write_grants import WriteGrants
from reasonix_core.project import project_folders
from reasonix_core.provider.base import Provider, ProviderFactory, create_provider
from reasonix_core.session.core import Session
from reasonix_core.session.instructions import standing_instructions
from reasonix_core.session.policy import added_dirs, build_policy, starts_in_plan
from reasonix_core.session.prices import make_price_fn
from reasonix_core.session.settings import RunSettings
from reasonix_core.skills import SkillCatalog, load_catalog
from reasonix_core.subagent.delegation import Delegation
from reasonix_core.subagent.profile import catalog_profiles
from reasonix_core.subagent.services import SessionServices
from reasonix_core.tool.base import Tool, ToolContext
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.registry import ToolRegistry, builtin_tools
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.trust import MCP_JSON

if TYPE_CHECKING:
    from reasonix_core.agent.vision import VisionFallback
    from reasonix_core.checkpoint.recorder import Checkpointer
    from reasonix_core.coordinator.coordinator import ApproveFn, Coordinator
    from reasonix_core.mcp.host import McpHost
    from reasonix_core.tool.sandbox_keeper import SandboxKeeper
    from reasonix_core.tool.text_files import TextFiles

Clock = Callable[[], datetime]


def _now() -> datetime:
    return datetime.now(UTC)


@asynccontextmanager
async def build_session(
    settings: RunSettings,
    *,
    approver: Approver,
    overrides: Mapping[str, object] | None = None,
    clock: Clock = _now,
    provider_factory: ProviderFactory | None = None,
    mcp_host: McpHost | None = None,
    skills: SkillCatalog | None = None,
    plan_approver: ApproveFn | None = None,
    text_files: TextFiles | None = None,
) -> AsyncGenerator[Session, None]:
    """Build the session; close the provider, jobs, store and temp dir on exit.

    ``mcp_host``: an MCP host the caller already entered and keeps (the TUI
    starts it with the app); otherwise one is opened here for the servers
    declared for the workspace and closed on exit. ``skills``: the skills the
    caller already discovered (the TUI lists them as commands); otherwise they
    are discovered here. ``plan_approver``: the host's plan-approval boundary
    (None: plans wait in the session for ``--approve-plan``). ``text_files``: an
    editor holding the workspace's files, which the file tools read and write
    through (an ACP client's buffers; None: the host disk)."""
    base = load_base(settings, overrides)
    model = choose_model(base, settings)
    async with AsyncExitStack() as stack:
        session = await _assemble(
            stack, base, model, settings, approver, clock, provider_factory, mcp_host, skills,
            plan_approver, text_files,
        )  # fmt: skip
        if session.mcp is not None and settings.mcp_wait:
            await session.mcp.wait_ready()
        if session.hooks is not None:
            from reasonix_core.session.hook_turns import end_reason, session_end, session_start

            session.hooks.end_reason = end_reason(settings.session_end_reason)

            await session_start(session.hooks, settings.session_source or (
                "resume" if base.loaded is not None else "startup"
            ))  # fmt: skip
            stack.push_async_callback(session_end, session.hooks)
        yield session


async def _assemble(
    stack: AsyncExitStack,
    base: Base,
    model: ModelChoice,
    settings: RunSettings,
    approver: Approver,
    clock: Clock,
    provider_factory: ProviderFactory | None,
    mcp_host: McpHost | None,
    skills: SkillCatalog | None,
    plan_approver: ApproveFn | None,
    text_files: TextFiles | None = None,
) -> Session:
    """Every step after the model's, in order; what must be closed goes on ``stack``."""
    temp_dir = open_temp_dir(stack)
    policy = session_policy(base, settings, temp_dir)
    mcp = mcp_host if mcp_host is not None else declared_mcp_host(base, settings)
    if skills is None:
        skills = load_catalog(base.workspace, base.home)
    registry = build_tools(base.config, skills, mcp, settings.ablate)
    provider, effort = await open_provider(stack, base, model, provider_factory)
    sandbox = build_sandbox(base.config, base.workspace, temp_dir, policy)
    from reasonix_core.tool.jobs import JobManager

    jobs = await stack.enter_async_context(JobManager())
    kept = open_kept_sandboxes(stack, base.config)
    if mcp is not None and mcp_host is None:
        # Servers start in the background from here; nothing waits yet.
        await stack.enter_async_context(mcp)
    # A continued session keeps its system prompt: its files are not read again.
    instructions = (
        None
        if base.loaded is not None
        else await standing_instructions(base.workspace, base.home, policy, approver)
    )
    opened = open_store(
        base, settings, model, effort, policy, skills, registry, temp_dir, clock, instructions
    )
    stack.enter_context(hold_session(opened.store))  # one writer per session (session_lock.py)
    stack.callback(opened.store.close)
    hooks = build_hooks(base, policy, opened.store)
    # Folders the user added (--add-dir, additional_directories, additionalDirectories).
    added = [*added_dirs(base.config, settings, base.workspace), *base.claude.additional_directories]
    gate = PermissionGate(policy, approver, WriteGrants(added), hooks)
    plan_mode, goals = build_modes(
        policy, opened.store, plan_approver, starts_in_plan(settings, base.claude)
    )
    env = build_env(
        base, temp_dir, approver, sandbox, policy, clock, gate, opened.store.id, text_files, hooks,
        kept,
    )  # fmt: skip
    budget = task_budget(settings, base.config)
    delegation = lend_to_children(base, env, model, provider, effort, mcp, skills, budget)
    context = ToolContext(
        env=env, jobs=jobs, skills=skills, plan_mode=plan_mode, goals=goals,
        subagents=delegation, run_subagent_skill=delegation.run_skill,
    )  # fmt: skip
    checkpoints = open_checkpoints(stack, opened.store, base, clock)
    vision = vision_fallback(stack, base, model, provider, provider_factory)
    agent = build_agent(
        base, settings, model, provider, effort, registry, context, opened, gate, clock, budget,
        checkpoints, vision,
    )  # fmt: skip
    if base.loaded is not None and base.last_used is not None:
        restore_continued(agent, base.loaded, base.last_used, registry)
    coordinator = build_planner(
        stack, base, model, agent, provider, context, gate, mcp, effort, clock, plan_approver
    )
    return Session(
        agent=agent, config=base.config, resolved=model.resolved, home=base.home,
        policy=policy, workspace=base.workspace, plan_mode=plan_mode, goals=goals,
        mcp=mcp, skills=skills,
        coordinator=coordinator, checkpoints=checkpoints, hooks=hooks,
        notices=(*base.notices, *(instructions.notices if instructions is not None else ())),
    )  # fmt: skip


# -- config ----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Base:
    """The configuration, where the session lives, and the session it continues."""

    config: Config
    home: Path
    workspace: Path
    # The session read back for --continue / --resume, else None.
    loaded: LoadedSession | None
    # A continued session's last (model reference, effort), else None.
    last_used: tuple[str, str] | None
    # What the start has to say (retired settings: config/retired.py).
    notices: tuple[str, ...] = ()
    # Claude Code's settings.json files: hooks and permission rules (hooks/settings.py).
    claude: LoadedSettings = field(default_factory=LoadedSettings)

    @functools.cached_property
    def price(self) -> PriceFn:
        """The cost of a call under this configuration: one function that the
        agent, the planner and the subagents share."""
        return make_price_fn(self.config)


def load_base(settings: RunSettings, overrides: Mapping[str, object] | None) -> Base:
    home = settings.home or reasonix_home()
    loaded_config = load_config(
        settings.workspace,
        overrides=dict(overrides) if overrides is not None else None,
        home=home,
        trust_project=settings.trust_project,
    )
    config = loaded_config.config
    from reasonix_core.config.retired import retired_notices

    notices = tuple(retired_notices(config, loaded_config.user_file))
    # Start-up work: a few small synchronous reads before the first request.
    workspace = Path(config.sandbox.workspace_root or settings.workspace).resolve()
    claude = load_settings(
        workspace, home, trust_project=settings.trust_project, extra=settings.settings_files
    )
    loaded = None
    last_used = None
    if settings.resume_id is not None and not settings.resume_id.strip():
        # `-r "$ID"` with an empty variable: never a new session in its place.
        raise SessionError("an empty session id: give the id of the session to resume")
    if settings.continue_last or settings.resume_id:
        resume_id = settings.resume_id
        if settings.fork_session:
            from reasonix_core.session.fork import fork_saved_session

            # A copy to run in; the session it came from is only read.
            resume_id = fork_saved_session(home, workspace, resume_id)
        loaded = open_session(home / "sessions", workspace, resume_id)
        last_used = _last_used(loaded.header, loaded.store.path)
    return Base(
        config=config, home=home, workspace=workspace, loaded=loaded, last_used=last_used,
        notices=notices, claude=claude,
    )  # fmt: skip


def _last_used(header: SessionHeader, path: Path) -> tuple[str, str]:
    """The model reference and effort a continued session's last request used (its
    request records know a /model or /effort since the header was written)."""
    last = last_settings(read_request_records(path))
    if last is None:
        return header.model, header.effort
    model, effort = last
    # The header's reference is provider/model (a model id may hold a "/" itself).
    provider, slash, header_model = header.model.partition("/")
    if not slash or model == header_model:
        return header.model, effort
    return f"{provider}/{model}", effort


# -- model -----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ModelChoice:
    resolved: ResolvedModel
    # The planner model ([agent] planner_model), else None.
    planner: ResolvedModel | None
    # The effort asked for, before the provider checks it.
    effort: str
    # The image fallback ([agent] vision_model), else None (agent/vision.py).
    vision: ResolvedModel | None = None


def choose_model(base: Base, settings: RunSettings) -> ModelChoice:
    config, loaded, last_used = base.config, base.loaded, base.last_used
    # A continued session keeps its model unless asked otherwise: same prefix, same cache.
    model_ref = settings.model or (last_used[0] if last_used else None)
    try:
        resolved = resolve_model(config, model_ref, settings.discovered_models)
    except ConfigError:
        if settings.model or loaded is None or model_ref == loaded.header.model:
            raise
        # The records name a model the config no longer has: the session's first one.
        resolved = resolve_model(config, loaded.header.model)
    planner = None
    if config.agent.planner_model.strip():
        from reasonix_core.coordinator.build import resolve_planner

        # Before anything is built or sent: an unresolvable planner is a config error.
        planner = resolve_planner(config)
    vision = None
    if config.agent.vision_model.strip():
        from reasonix_core.agent.vision import resolve_vision

        # Before anything is built or sent, as for the planner.
        vision = resolve_vision(config, resolved)
    effort = (
        settings.effort
        or (last_used[1] if last_used else None)
        or (config.agent.effort if config.agent.effort != "auto" else resolved.provider.effort)
    )
    return ModelChoice(resolved=resolved, planner=planner, effort=effort, vision=vision)


async def open_provider(
    stack: AsyncExitStack, base: Base, model: ModelChoice, factory: ProviderFactory | None
) -> tuple[Provider, str]:
    """The provider (closed with the session) and the effort it accepts."""
    api_key = read_api_key(model.resolved.provider, base.home)
    provider = (factory or create_provider)(model.resolved.provider, api_key)
    stack.push_async_callback(provider.aclose)
    # --effort, [agent] effort and the provider's effort: one check, against
    # what the selected provider says it accepts (before anything is sent).
    effort = check_effort(model.effort, provider.efforts(), model.resolved.provider.name)
    if hasattr(provider, "stream_idle_timeout"):
        provider.stream_idle_timeout = base.config.agent.stream_idle_timeout  # type: ignore[attr-defined]
    return provider, effort


# -- policy ----------------------------------------------------------------


def open_temp_dir(stack: AsyncExitStack) -> Path:
    """The session's temp dir, removed with the session."""
    temp_dir = Path(tempfile.mkdtemp(prefix="reasonix-"))
    stack.callback(shutil.rmtree, temp_dir, True)
    return temp_dir


def build_sandbox(config: Config, workspace: Path, temp_dir: Path, policy: Policy) -> SandboxPolicy:
    return SandboxPolicy(
        workspace=workspace,
        temp_dir=temp_dir,
        allow_write=tuple(Path(p) for p in config.sandbox.allow_write),
        # One list for file tools and the bash sandbox's masks.
        forbid_read=tuple(Path(p) for p in policy.forbid_read),
        bash=config.sandbox.bash,
        network=config.sandbox.network,
        tmp_size=config.sandbox.tmp_size,
    )


def open_kept_sandboxes(stack: AsyncExitStack, config: Config) -> SandboxKeeper | None:
    """The session's kept sandboxes (docs/SECURITY.md, "A sandbox kept per session"),
    closed with the session before its temp dir is removed; None with ``[sandbox]
    keep = false`` or ``bash = "off"``. Nothing starts until the first command."""
    if config.sandbox.bash != "enforce" or not config.sandbox.keep:
        return None
    from reasonix_core.tool.sandbox_keeper import SandboxKeeper

    keeper = SandboxKeeper()
    stack.push_async_callback(keeper.aclose)
    return keeper


def session_policy(base: Base, settings: RunSettings, temp_dir: Path) -> Policy:
    """The top-level session's policy: the files in its temp dir are its own
    (readable without asking), and it owns the project's fact store.

    Owning the store, it installs the seed 000 §3.6 exception: bounded,
    non-sensitive, create-only project/reference facts save without asking
    (reasonix_core.memory builds the store, index and recall on first use). A
    surface that does not own the store (a sub-agent) must not install it, and
    then every memory write follows the preset - headless, that fails closed."""
    policy = build_policy(base.config, settings, base.workspace, base.home, temp_dir, base.claude)
    policy.add_auto_allow("remember", auto_save_reason)
    return policy


def build_hooks(base: Base, policy: Policy, store: SessionStore) -> Hooks | None:
    """The session's hooks (docs/HOOKS.md), or None when no settings file that
    applies declares one (a project's only once its folder is trusted)."""
    if not base.claude.hooks:
        return None

    def permission_mode() -> str:
        # Claude Code's names for the posture hooks are told about.
        if policy.plan_mode:
            return "plan"
        names = {"ask": "default", "auto": "acceptEdits", "yolo": "bypassPermissions"}
        return names.get(policy.preset, policy.preset)

    return Hooks(
        base.claude.hooks,
        workspace=base.workspace,
        secret_env=secret_env_names(base.config),
        session_id=store.id,
        transcript_path=store.path,
        permission_mode=permission_mode,
    )


# -- tools -----------------------------------------------------------------


def declared_mcp_host(base: Base, settings: RunSettings) -> McpHost | None:
    """An (unentered) MCP host, or None when no server is declared."""
    if (
        not settings.mcp_config
        and base.config.mcp is None
        and not any((folder / MCP_JSON).exists() for folder in project_folders(base.workspace))
    ):
        # Nothing can declare a server: no [mcp] applies (config.mcp holds the user
        # file's and, once the folder is trusted, the project files'; an untrusted
        # one's is withheld, and the host would leave it out too), no --mcp-config
        # file and no .mcp.json in any project folder. Skips importing the MCP
        # package (~10 ms).
        return None
    from reasonix_core.mcp import make_host

    host = make_host(
        base.config,
        base.workspace,
        base.home,
        trust_project=settings.trust_project,
        extra_files=settings.mcp_config,
        deferred=settings.mcp_deferred,
    )
    return host if host.configured else None


def build_tools(
    config: Config, skills: SkillCatalog, mcp: McpHost | None, ablate: tuple[str, ...] = ()
) -> ToolRegistry:
    """The built-ins ``[tools] enabled`` allows, and ``use_capability`` last. ``run_skill``
    only when the session has skills to offer the model. Decided once, when the session
    starts, like the MCP proxy: the tool list never changes within a session."""
    tools: list[Tool] = builtin_tools(config.tools.enabled)
    if not skills.index.text:
        tools = [tool for tool in tools if tool.name != "run_skill"]
    if config.agent.max_subagent_depth < 1 or "subagent" in ablate:
        # max_subagent_depth = 0, --ablate subagent: no delegation tools (docs/SUBAGENTS.md).
        from reasonix_core.subagent.scope import DELEGATION

        tools = [tool for tool in tools if tool.name not in DELEGATION]
    return ToolRegistry([*tools, capability_tool(mcp)])


def build_env(
    base: Base,
    temp_dir: Path,
    approver: Approver,
    sandbox: SandboxPolicy,
    policy: Policy,
    clock: Clock,
    gate: PermissionGate,
    session_id: str,
    text_files: TextFiles | None = None,
    hooks: Hooks | None = None,
    kept_sandboxes: SandboxKeeper | None = None,
) -> SessionEnv:
    """The session's facts, once: its agent's tools read them, its subagents
    derive theirs from them (:meth:`SessionEnv.child`)."""
    return SessionEnv(
        workspace=base.workspace,
        temp_dir=temp_dir,
        home=base.home,
        sandbox=sandbox,
        approver=approver,
        # use_capability checks each MCP target against the session's gate itself.
        gate=gate,
        read_denied=policy.read_denied,
        secret_env=secret_env_names(base.config),
        bash_timeout_seconds=base.config.tools.bash_timeout_seconds,
        clock=clock,
        session_id=session_id,
        text_files=text_files,
        hooks=hooks,
        kept_sandboxes=kept_sandboxes,
    )


def lend_to_children(
    base: Base,
    env: SessionEnv,
    model: ModelChoice,
    provider: Provider,
    effort: str,
    mcp: McpHost | None,
    skills: SkillCatalog,
    budget: BudgetMeter | None,
) -> Delegation:
    """The session's delegation handle, over what it lends its children (its env,
    provider, MCP host, budget, and its skills as profiles), for the delegation
    tools and run_skill (docs/SUBAGENTS.md). The runner itself is built when the
    model first delegates."""
    return Delegation(
        SessionServices(
            config=base.config,
            env=env,
            resolved=model.resolved,
            provider=provider,
            effort=effort,
            mcp=mcp,
            price=base.price,
            budget=budget,
            profiles=catalog_profiles(skills),
        )
    )


# -- store -----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OpenedStore:
    """The session's transcript, its system prompt and what it already holds."""

    store: SessionStore
    system_prompt: str
    history: list[Message]


def open_store(
    base: Base,
    settings: RunSettings,
    model: ModelChoice,
    effort: str,
    policy: Policy,
    skills: SkillCatalog,
    registry: ToolRegistry,
    temp_dir: Path,
    clock: Clock,
    instructions: Instructions | None = None,
) -> OpenedStore:
    """The continued session's store, or a new one with a new system prompt
    (``instructions``: :func:`~reasonix_core.session.instructions.standing_instructions`)."""
    if base.loaded is not None:
        loaded = base.loaded
        return OpenedStore(
            store=loaded.store,
            system_prompt=loaded.header.system_prompt,
            history=loaded.messages,
        )
    config, workspace = base.config, base.workspace
    system_prompt = build_system_prompt(
        workspace,
        base.home,
        extra="\n\n".join(
            part.strip()
            for part in (config.agent.system_prompt_extra, settings.append_system_prompt)
            if part.strip()
        ),
        protected=policy.forbid_read,
        denied=functools.partial(policy.read_denied, "read_file"),
        skills_index=skills.index.text if "run_skill" in registry else "",
        reasoning_language=config.agent.reasoning_language,
        instructions=instructions.sections if instructions is not None else None,
        base=settings.system_prompt or BASE_PROMPT,
    )
    header = SessionHeader(
        id=settings.session_id or new_session_id(clock()),
        workspace=str(workspace),
        created=clock().isoformat(),
        model=model.resolved.ref,
        effort=effort,
        system_prompt=system_prompt,
        tools_fingerprint=_digest(registry.fingerprint),
    )
    store: SessionStore
    if settings.record_session:
        store = SessionStore.create(base.home / "sessions", workspace, header)
    else:
        store = MemorySessionStore(temp_dir / f"{header.id}.jsonl", header)
    return OpenedStore(store=store, system_prompt=system_prompt, history=[])


def open_checkpoints(
    stack: AsyncExitStack, store: SessionStore, base: Base, clock: Clock
) -> Checkpointer | None:
    """The workspace snapshots around each turn, or None when disabled; their
    workspace watcher is released with the session (``stack``)."""
    if not base.config.checkpoints.enabled:
        return None
    from reasonix_core.checkpoint.recorder import Checkpointer

    checkpoints = Checkpointer.open(
        store, base.workspace, clock, base.config.checkpoints.max_store_mb
    )
    stack.callback(checkpoints.close)
    return checkpoints


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- agent -----------------------------------------------------------------


def task_budget(settings: RunSettings, config: Config) -> BudgetMeter | None:
    """The task budget the flags or ``[agent] task_*_budget`` ask for, or None."""
    agent = config.agent
    limits = BudgetLimits(
        cost=settings.max_cost if settings.max_cost is not None else agent.task_cost_budget,
        tokens=settings.max_tokens if settings.max_tokens is not None else agent.task_token_budget,
        seconds=settings.max_time
        if settings.max_time is not None
        else agent.task_time_budget_minutes * 60,
    )
    return BudgetMeter(limits) if limits.any else None


def build_agent(
    base: Base,
    settings: RunSettings,
    model: ModelChoice,
    provider: Provider,
    effort: str,
    registry: ToolRegistry,
    context: ToolContext,
    opened: OpenedStore,
    gate: PermissionGate,
    clock: Clock,
    budget: BudgetMeter | None,
    checkpoints: Checkpointer | None,
    vision: VisionFallback | None = None,
) -> Agent:
    config = base.config
    return assemble_agent(
        config=config,
        resolved=model.resolved,
        provider=provider,
        tools=registry,
        tool_context=context,
        session=opened.store,
        system_prompt=opened.system_prompt,
        history=opened.history,
        effort=effort,
        max_steps=settings.max_steps if settings.max_steps is not None else config.agent.max_steps,
        gate=gate,
        price=base.price,
        clock=clock,
        context_suffix=context_suffix(base.workspace, clock, context),
        budget=budget,
        snapshots=checkpoints,
        vision=vision,
    )


def vision_fallback(
    stack: AsyncExitStack,
    base: Base,
    model: ModelChoice,
    provider: Provider,
    factory: ProviderFactory | None,
) -> VisionFallback:
    """What the session's turns do with images: the executor's capability, and the
    vision model's describer when ``[agent] vision_model`` names one (its own provider
    when it is another's, closed with the session)."""
    from reasonix_core.agent.vision import VisionDescriber, VisionFallback

    executor = model.resolved.provider
    if model.vision is None or model.vision == model.resolved:
        return VisionFallback(provider=executor)
    reaching = provider
    if model.vision.provider.name != executor.name:
        key = read_api_key(model.vision.provider, base.home)
        reaching = (factory or create_provider)(model.vision.provider, key)
        stack.push_async_callback(reaching.aclose)
    describer = VisionDescriber(resolved=model.vision, provider=reaching)
    return VisionFallback(provider=executor, describer=describer)


def context_suffix(
    workspace: Path, clock: Clock, context: ToolContext
) -> Callable[[bool, str], str]:
    """The volatile tail of a user turn: ``<workspace-context>`` on the first
    turn, then the budgeted ``<memory-recall>`` block for the raw prompt. Both
    live in the user message, never in the system prompt or the tools."""

    def suffix(first: bool, prompt: str = "") -> str:
        parts = [workspace_context(workspace, clock())] if first else []
        recalled = recall_block(context, prompt) if prompt else ""
        if recalled:
            parts.append(recalled)
        # The active goal rides in the user turn, never the cached system prompt.
        goal = context.goals.context_block() if context.goals is not None else ""
        if goal:
            parts.append(goal)
        # What SessionStart / UserPromptSubmit hooks said (docs/HOOKS.md): the user
        # turn too, so configuring a hook never changes the prefix.
        hooked = context.env.hooks.take_context() if context.env.hooks is not None else ""
        if hooked:
            parts.append(hooked)
        return "\n\n".join(parts)

    return suffix


def restore_continued(
    agent: Agent, loaded: LoadedSession, last_used: tuple[str, str], registry: ToolRegistry
) -> None:
    """A continued session's agent picks up where the records end: a rewound
    branch, the existing compaction checkpoint (never re-planned), and the prefix
    the last request sent (so a changed tool set or model is named)."""
    store = loaded.store
    if ends_with_branch(store.path):
        agent.note_rewound()
    agent.context.restore(store.read_checkpoint(), agent.messages)
    same_tools = loaded.header.tools_fingerprint == _digest(registry.fingerprint)
    last_model, last_effort = last_used
    agent.note_prefix_baseline(
        registry.fingerprint if same_tools else "(previous tool set)",
        last_model.split("/", 1)[-1],
        last_effort,
    )


# -- modes -----------------------------------------------------------------


def build_modes(
    policy: Policy,
    store: SessionStore,
    plan_approver: ApproveFn | None,
    plan: bool,
) -> tuple[PlanMode, GoalBook]:
    """The session's plan mode and goal. Plan mode is not persisted: a continued
    session starts outside it unless asked (``plan``); the goal is in the session's
    records."""
    plan_mode = PlanMode(policy, store, plan_approver)
    if plan:
        plan_mode.enter()
    return plan_mode, GoalBook(store)


def build_planner(
    stack: AsyncExitStack,
    base: Base,
    model: ModelChoice,
    executor: Agent,
    provider: Provider,
    context: ToolContext,
    gate: PermissionGate,
    mcp: McpHost | None,
    effort: str,
    clock: Clock,
    plan_approver: ApproveFn | None,
) -> Coordinator | None:
    """The planner + executor Coordinator when ``[agent] planner_model`` is set."""
    if model.planner is None:
        return None
    from reasonix_core.coordinator.build import build_coordinator

    return build_coordinator(
        stack=stack, config=base.config, resolved=model.planner, executor=executor,
        executor_provider=provider, executor_resolved=model.resolved, tool_context=context,
        gate=gate, mcp=mcp, home=base.home, workspace=base.workspace, effort=effort,
        price=base.price, clock=clock, approve=plan_approver,
    )  # fmt: skip
