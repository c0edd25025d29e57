"""Assembling a ready-to-run Agent from configuration.

Used by ``reasonix run`` and by the TUI's services, so both surfaces build
exactly the same engine: config -> model -> provider -> tools -> permissions ->
session -> Agent.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reasonix_core.agent.assemble import assemble_agent, capability_tool
from reasonix_core.agent.budget import BudgetLimits, BudgetMeter
from reasonix_core.agent.cache_ledger import last_settings
from reasonix_core.agent.loop import Agent
from reasonix_core.agent.prompt import build_system_prompt, workspace_context
from reasonix_core.agent.session import (
    MemorySessionStore,
    SessionHeader,
    SessionStore,
    new_session_id,
    open_session,
    read_request_records,
)
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
from reasonix_core.config.prices import DEEPSEEK_PRICES_USD, price_for
from reasonix_core.errors import ConfigError
from reasonix_core.memory import auto_save_reason, recall_block
from reasonix_core.permission.approver import Approver
from reasonix_core.permission.gate import PermissionGate
from reasonix_core.permission.policy import Policy
from reasonix_core.permission.write_grants import WriteGrants
from reasonix_core.project import project_folders
from reasonix_core.provider.base import Provider, create_provider
from reasonix_core.provider.efforts import check_effort
from reasonix_core.skills import SkillCatalog, load_catalog
from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.registry import ToolRegistry, builtin_tools
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.trust import MCP_JSON
from reasonix_core.usage import Usage

PERMISSION_PRESETS = ("ask", "auto", "yolo")

#: Credential folders and files under the user's home that no tool reads and
#: the bash sandbox masks, in addition to the Reasonix home and the user's
#: own ``[sandbox] forbid_read``.
SECRET_PATHS: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.config/gh",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker/config.json",
    "~/.kube",
    "~/.gnupg",
)


@dataclass(kw_only=True)
class RunSettings:
    """What a surface asks for; ``None`` means "take it from the config"."""

    workspace: Path
    model: str | None = None
    effort: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    max_steps: int | None = None
    continue_last: bool = False
    resume_id: str | None = None
    home: Path | None = None
    # --add-dir: extra folders read-family tools reach without asking (reads only).
    add_dirs: list[Path] = field(default_factory=list)
    # Wait for MCP servers (each bounded by its start-up timeout) before the first
    # request. No surface does: the prefix never depends on them (use_capability),
    # a call to a server waits for it, so the first request leaves at once.
    mcp_wait: bool = False
    # Apply the project's risky settings without recorded trust (--trust-project).
    trust_project: bool = False
    # --append-system-prompt: after [agent] system_prompt_extra, in a new session's prompt.
    append_system_prompt: str = ""
    # --mcp-config: .mcp.json-shaped files declaring more servers for this run.
    mcp_config: list[Path] = field(default_factory=list)
    # Start the servers only at Runtime.mcp.start_now() (or their first use):
    # `reasonix run` lets its first request leave before they compete for the CPU.
    mcp_deferred: bool = False
    # --max-cost / --max-tokens / --max-time (seconds); None: [agent] task_*_budget.
    max_cost: float | None = None
    max_tokens: int | None = None
    max_time: float | None = None
    # Start in plan mode (--permission-mode plan): writers blocked until the user
    # approves a plan; independent of the preset (docs/MODES.md#plan-mode).
    plan_mode: bool = False
    # Model ids each provider's /models listed this session (the TUI's /model probe):
    # ``model`` may name one (resolve.py, ``discovered``).
    discovered_models: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # False: the session is kept in memory, no file in the sessions store
    # (`reasonix subagent run|try`: the session only lends its services to the
    # one child, whose own transcript is the record).
    record_session: bool = True


@dataclass(kw_only=True)
class Runtime:
    """A built session: the agent and what it was built from."""

    agent: Agent
    config: Config
    resolved: ResolvedModel
    home: Path
    policy: Policy
    workspace: Path
    continued: bool = False
    # The MCP host (reasonix_core.mcp.host.McpHost) or None when no server is declared.
    mcp: Any = None
    # The session's skills (docs/SKILLS.md): run_skill and ``/<skill>`` read them.
    skills: SkillCatalog = field(default_factory=SkillCatalog)
    # The planner + executor Coordinator when [agent] planner_model is set.
    coordinator: Any = None
    # The session's plan mode (reasonix_core.coordinator.plan_mode.PlanMode).
    plan_mode: Any = None
    # The session's goal (reasonix_core.goal.state.GoalBook).
    goals: Any = None

    @property
    def runner(self) -> Any:
        """What a surface drives (a Runner): the Coordinator, else the agent."""
        return self.coordinator if self.coordinator is not None else self.agent


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


def _configured_prices(config: Config) -> dict[str, Any]:
    configured: dict[str, Any] = {}
    for provider in config.providers:
        for model, price in (provider.prices or {}).items():
            configured.setdefault(model, price)
    return configured


def has_price(config: Config, model: str) -> bool:
    """Whether :func:`make_price_fn` knows a price for ``model`` (a model it does not,
    e.g. one discovered at the provider's ``/models``, costs 0 in the metrics and
    shows as an unknown cost in the TUI)."""
    return model in _configured_prices(config) or model.strip().lower() in DEEPSEEK_PRICES_USD


def make_price_fn(config: Config) -> Callable[[str, Usage, datetime], tuple[float, str]]:
    """Cost of one call: a user-configured price wins; known DeepSeek models
    otherwise follow the peak/off-peak table at request-completion time."""
    configured = _configured_prices(config)

    def price(model: str, usage: Usage, when: datetime) -> tuple[float, str]:
        chosen = configured.get(model)
        table = price_for(model, when)
        default = DEEPSEEK_PRICES_USD.get(model.lower())
        if table is not None and (chosen is None or (default and chosen == default[0])):
            chosen = table
        if chosen is None:
            return 0.0, "USD"
        cost = chosen.cost(
            cache_hit_tokens=usage.cache_hit_tokens,
            cache_miss_tokens=usage.cache_miss_tokens,
            output_tokens=usage.completion_tokens,
        )
        return cost, chosen.currency

    return price


def protected_paths(config: Config, home: Path, workspace: Path) -> tuple[Path, ...]:
    """What no tool may read: the Reasonix home, :data:`SECRET_PATHS` and
    ``[sandbox] forbid_read``, resolved.

    A built-in entry that contains the workspace (someone working inside
    ``~/.config/gh`` or the Reasonix home itself) is not dropped but narrowed:
    everything in it except the branch leading to the workspace stays
    protected, so the user keeps their workspace and the keys beside it stay
    hidden. Entries created there after start-up are not covered.
    """
    root = Path(os.path.realpath(workspace))
    builtin = [home, *(Path(os.path.expanduser(p)) for p in SECRET_PATHS)]
    out: list[Path] = []
    for entry in builtin:
        out.extend(_carve(Path(os.path.realpath(entry)), root))
    for entry in config.sandbox.forbid_read:
        p = Path(os.path.expanduser(entry))
        out.append(Path(os.path.realpath(p if p.is_absolute() else root / p)))
    return tuple(dict.fromkeys(out))


def _carve(secret: Path, workspace: Path) -> list[Path]:
    """``secret`` minus the path down to ``workspace`` (when it contains it)."""
    if workspace != secret and secret not in workspace.parents:
        return [secret]
    out: list[Path] = []
    here = secret
    for part in workspace.relative_to(secret).parts:
        try:
            names = sorted(os.listdir(here))
        except OSError:
            names = []
        out.extend(here / name for name in names if name != part)
        here = here / part
    return out


def _absolute(entries: Iterable[Path | str], workspace: Path) -> list[Path]:
    roots: list[Path] = []
    for entry in entries:
        p = Path(os.path.expanduser(os.fspath(entry)))
        roots.append(p if p.is_absolute() else workspace / p)
    return roots


def added_dirs(config: Config, settings: RunSettings, workspace: Path) -> list[Path]:
    """The folders the user added before the session: ``--add-dir`` and
    ``[permissions] additional_directories``. Read tools reach them without
    asking, and ``bash`` may be granted writes there without asking
    (``additional_write_dirs``, docs/PERMISSIONS.md#expanding-the-write-scope)."""
    return _absolute([*settings.add_dirs, *config.permissions.additional_directories], workspace)


def read_roots(config: Config, settings: RunSettings, workspace: Path) -> list[Path]:
    """Folders read-family tools reach without asking, besides the workspace
    (and the session temp dir, added once it exists): :func:`added_dirs` and the
    ``[sandbox] allow_write`` roots (a folder tools may write is one they may read)."""
    return [
        *added_dirs(config, settings, workspace),
        *_absolute(config.sandbox.allow_write, workspace),
    ]


def build_policy(
    config: Config, settings: RunSettings, workspace: Path, home: Path | None = None
) -> Policy:
    preset = settings.permission_mode or config.permissions.preset
    if preset not in PERMISSION_PRESETS:
        raise ConfigError(
            f"unknown permission mode {preset!r}; choose one of {', '.join(PERMISSION_PRESETS)}"
        )
    perms = config.permissions.model_copy(update={"preset": preset})
    return Policy.from_config(
        perms,
        workspace,
        extra_allow=list(settings.allowed_tools),
        read_roots=read_roots(config, settings, workspace),
        forbid_read=protected_paths(config, home or settings.home or reasonix_home(), workspace),
    )


@asynccontextmanager
async def open_runtime(
    settings: RunSettings,
    *,
    approver: Approver,
    overrides: dict[str, Any] | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    provider_factory: Callable[[Any, str], Provider] | None = None,
    mcp_host: Any = None,
    skills: SkillCatalog | None = None,
    plan_approver: Any = None,
) -> AsyncIterator[Runtime]:
    """Build everything; close the provider, jobs and temp dir on exit.

    ``mcp_host``: an MCP host the caller already entered and keeps (the TUI
    starts it with the app); otherwise one is opened here for the servers
    declared for the workspace and closed on exit. ``skills``: the skills the
    caller already discovered (the TUI lists them as commands); otherwise they
    are discovered here. ``plan_approver``: the host's plan-approval boundary
    (reasonix_core.coordinator.coordinator.ApproveFn; None: plans wait in the
    session for ``--approve-plan``)."""
    home = settings.home or reasonix_home()
    loaded = load_config(
        settings.workspace, overrides=overrides, home=home, trust_project=settings.trust_project
    )
    config = loaded.config
    # Start-up work: a few small synchronous reads before the first request.
    workspace = Path(config.sandbox.workspace_root or settings.workspace).resolve()  # noqa: ASYNC240
    loaded_session = None
    last_used: tuple[str, str] | None = None  # a continued session's last (model, effort)
    if settings.continue_last or settings.resume_id:
        loaded_session = open_session(home / "sessions", workspace, settings.resume_id)
        last_used = _last_used(loaded_session.header, loaded_session.store.path)
    # A continued session keeps its model unless asked otherwise: same prefix, same cache.
    model_ref = settings.model or (last_used[0] if last_used else None)
    try:
        resolved = resolve_model(config, model_ref, settings.discovered_models)
    except ConfigError:
        if settings.model or loaded_session is None or model_ref == loaded_session.header.model:
            raise
        # The records name a model the config no longer has: the session's first one.
        resolved = resolve_model(config, loaded_session.header.model)
    planner = None
    if config.agent.planner_model.strip():
        from reasonix_core.coordinator.build import resolve_planner

        # Before anything is built or sent: an unresolvable planner is a config error.
        planner = resolve_planner(config)
    api_key = read_api_key(resolved.provider, home)
    effort = (
        settings.effort
        or (last_used[1] if last_used else None)
        or (config.agent.effort if config.agent.effort != "auto" else resolved.provider.effort)
    )
    policy = build_policy(config, settings, workspace, home)
    mcp = mcp_host
    if mcp is None:
        mcp = _mcp_host(
            config,
            workspace,
            home,
            trust_project=settings.trust_project,
            extra_files=settings.mcp_config,
            deferred=settings.mcp_deferred,
        )
    if skills is None:
        skills = load_catalog(workspace, home)
    registry = ToolRegistry([*_builtins(config, skills), capability_tool(mcp)])

    async with AsyncExitStack() as stack:
        provider = (provider_factory or create_provider)(resolved.provider, api_key)
        stack.push_async_callback(provider.aclose)
        # --effort, [agent] effort and the provider's effort: one check, against
        # what the selected provider says it accepts (before anything is sent).
        effort = check_effort(effort, provider.efforts(), resolved.provider.name)
        if hasattr(provider, "stream_idle_timeout"):
            provider.stream_idle_timeout = config.agent.stream_idle_timeout

        temp_dir = Path(tempfile.mkdtemp(prefix="reasonix-"))
        stack.callback(shutil.rmtree, temp_dir, True)
        policy.add_read_roots(temp_dir)
        sandbox = SandboxPolicy(
            workspace=workspace,
            temp_dir=temp_dir,
            allow_write=tuple(Path(p) for p in config.sandbox.allow_write),
            # One list for file tools and the bash sandbox's masks.
            forbid_read=tuple(Path(p) for p in policy.forbid_read),
            bash=config.sandbox.bash,
            network=config.sandbox.network,
        )
        from reasonix_core.tool.jobs import JobManager

        jobs = await stack.enter_async_context(JobManager())
        if mcp is not None and mcp_host is None:
            # Servers start in the background from here; nothing waits yet.
            await stack.enter_async_context(mcp)
        context = ToolContext(
            workspace=workspace,
            temp_dir=temp_dir,
            bash_timeout_seconds=config.tools.bash_timeout_seconds,
            approver=approver,
            secret_env=secret_env_names(config),
            sandbox=sandbox,
            jobs=jobs,
            read_denied=policy.read_denied,
            skills=skills,
            home=home,
            clock=clock,
        )
        _install_memory(policy)
        gate = PermissionGate(
            policy, approver, WriteGrants(added_dirs(config, settings, workspace))
        )
        # use_capability checks each MCP target against the session's gate itself.
        context.gate = gate

        if loaded_session is not None:
            store = loaded_session.store
            system_prompt = loaded_session.header.system_prompt
            history = loaded_session.messages
        else:
            system_prompt = build_system_prompt(
                workspace,
                home,
                extra="\n\n".join(
                    part.strip()
                    for part in (config.agent.system_prompt_extra, settings.append_system_prompt)
                    if part.strip()
                ),
                protected=policy.forbid_read,
                denied=functools.partial(policy.read_denied, "read_file"),
                skills_index=skills.index.text if "run_skill" in registry else "",
                reasoning_language=config.agent.reasoning_language,
            )
            header = SessionHeader(
                id=new_session_id(clock()),
                workspace=str(workspace),
                created=clock().isoformat(),
                model=resolved.ref,
                effort=effort,
                system_prompt=system_prompt,
                tools_fingerprint=_digest(registry.fingerprint),
            )
            if settings.record_session:
                store = SessionStore.create(home / "sessions", workspace, header)
            else:
                store = MemorySessionStore(temp_dir / f"{header.id}.jsonl", header)
            history = []
        stack.callback(store.close)
        context.session_id = store.id
        from reasonix_core.coordinator.plan_mode import PlanMode

        # Not persisted: a continued session starts outside plan mode unless asked.
        context.plan_mode = plan_mode = PlanMode(policy, store, plan_approver)
        if settings.plan_mode:
            plan_mode.enter()
        from reasonix_core.goal.state import GoalBook

        # The goal is in the session's records; armed only when this process is told.
        context.goals = goals = GoalBook(store)

        agent = assemble_agent(
            config=config,
            resolved=resolved,
            provider=provider,
            tools=registry,
            tool_context=context,
            session=store,
            system_prompt=system_prompt,
            history=history,
            effort=effort,
            max_steps=settings.max_steps
            if settings.max_steps is not None
            else config.agent.max_steps,
            gate=gate,
            price=make_price_fn(config),
            clock=clock,
            context_suffix=_context_suffix(workspace, clock, context),
            budget=_budget(settings, config),
        )
        context_manager = agent.context
        _install_subagents(
            config, home, workspace, resolved, provider, effort, sandbox, context, store.id,
            gate, mcp, clock, skills, agent.options.budget,
        )  # fmt: skip
        if config.checkpoints.enabled:
            agent.checkpoints = _checkpointer(store, workspace, clock, config)
            stack.callback(agent.checkpoints.close)  # its inotify watches
        if loaded_session is not None:
            if ends_with_branch(store.path):
                agent.note_rewound()
            # A restart restores the existing checkpoint only (never re-plans it).
            context_manager.restore(store.read_checkpoint(), agent.messages)
            header = loaded_session.header
            same_tools = header.tools_fingerprint == _digest(registry.fingerprint)
            assert last_used is not None
            agent.note_prefix_baseline(
                registry.fingerprint if same_tools else "(previous tool set)",
                last_used[0].split("/", 1)[-1],
                last_used[1],
            )
        coordinator = None
        if planner is not None:
            from reasonix_core.coordinator.build import build_coordinator

            coordinator = build_coordinator(
                stack=stack, config=config, resolved=planner, executor=agent,
                executor_provider=provider, executor_resolved=resolved, tool_context=context,
                gate=gate, mcp=mcp, home=home, workspace=workspace, effort=effort,
                price=make_price_fn(config), clock=clock, approve=plan_approver,
            )  # fmt: skip
        if mcp is not None and settings.mcp_wait:
            await mcp.wait_ready()
        yield Runtime(
            agent=agent,
            config=config,
            resolved=resolved,
            home=home,
            policy=policy,
            workspace=workspace,
            continued=loaded_session is not None,
            mcp=mcp,
            skills=skills,
            coordinator=coordinator,
            plan_mode=plan_mode,
            goals=goals,
        )


def _install_memory(policy: Policy) -> None:
    """The memory policy of a (top-level) session; its fact store, history index
    and recall are built on first use from the tool context (reasonix_core.memory).

    This runtime owns the project's fact store, so it installs the seed 000
    §3.6 exception: bounded, non-sensitive, create-only project/reference
    facts save without asking. A surface that does not own the store (a
    sub-agent) must not install it, and then every memory write follows the
    preset - headless, that fails closed."""
    policy.add_auto_allow("remember", auto_save_reason)


def _install_subagents(
    config: Config,
    home: Path,
    workspace: Path,
    resolved: ResolvedModel,
    provider: Provider,
    effort: str,
    sandbox: SandboxPolicy,
    context: ToolContext,
    session_id: str,
    gate: PermissionGate,
    mcp: Any,
    clock: Callable[[], datetime],
    skills: SkillCatalog,
    budget: BudgetMeter | None,
) -> None:
    """The session's delegation handle, over what the session lends its children
    (the provider, the gate and approver, the sandbox, the MCP host, the skills
    as profiles), for the delegation tools and run_skill (docs/SUBAGENTS.md).
    The runner itself is built when the model first delegates."""
    from reasonix_core.subagent.delegation import Delegation
    from reasonix_core.subagent.profile import catalog_profiles
    from reasonix_core.subagent.services import SessionServices

    delegation = Delegation(
        SessionServices(
            config=config,
            home=home,
            workspace=workspace,
            resolved=resolved,
            provider=provider,
            effort=effort,
            sandbox=sandbox,
            temp_dir=context.temp_dir,
            session_id=session_id,
            gate=gate,
            approver=context.approver,
            read_denied=context.read_denied,
            secret_env=context.secret_env,
            bash_timeout_seconds=context.bash_timeout_seconds,
            mcp=mcp,
            price=make_price_fn(config),
            budget=budget,
            clock=clock,
            profiles=catalog_profiles(skills),
        )
    )
    context.subagents = delegation
    context.run_subagent_skill = delegation.skill_hook(context)


def _context_suffix(
    workspace: Path, clock: Callable[[], datetime], context: ToolContext
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
        return "\n\n".join(parts)

    return suffix


def _checkpointer(
    store: SessionStore, workspace: Path, clock: Callable[[], datetime], config: Config
) -> Any:
    from reasonix_core.checkpoint.recorder import Checkpointer

    return Checkpointer.open(store, workspace, clock, config.checkpoints.max_store_mb)


def _mcp_host(
    config: Config,
    workspace: Path,
    home: Path,
    *,
    trust_project: bool,
    extra_files: list[Path] | None = None,
    deferred: bool = False,
) -> Any:
    """An (unentered) MCP host, or None when no server is declared."""
    if (
        not extra_files
        and config.mcp is None
        and not any((folder / MCP_JSON).exists() for folder in project_folders(workspace))
    ):
        # Nothing can declare a server: no [mcp] applies (config.mcp holds the user
        # file's and, once the folder is trusted, the project files'; an untrusted
        # one's is withheld, and the host would leave it out too), no --mcp-config
        # file and no .mcp.json in any project folder. Skips importing the MCP
        # package (~10 ms).
        return None
    from reasonix_core.mcp import make_host

    host = make_host(
        config,
        workspace,
        home,
        trust_project=trust_project,
        extra_files=extra_files or (),
        deferred=deferred,
    )
    return host if host.configured else None


def _builtins(config: Config, skills: SkillCatalog) -> list[Any]:
    """The built-ins ``[tools] enabled`` allows; ``run_skill`` only when the session
    has skills to offer the model. Decided once, when the session starts, like
    the MCP proxy: the tool list never changes within a session."""
    tools = builtin_tools(config.tools.enabled)
    if not skills.index.text:
        tools = [tool for tool in tools if tool.name != "run_skill"]
    if config.agent.max_subagent_depth < 1:
        # max_subagent_depth = 0: no delegation at all (docs/SUBAGENTS.md).
        from reasonix_core.subagent.scope import DELEGATION

        tools = [tool for tool in tools if tool.name not in DELEGATION]
    return tools


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _budget(settings: RunSettings, config: Config) -> BudgetMeter | None:
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
