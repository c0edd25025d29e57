"""What the TUI needs from the rest of Reasonix, as one small injected protocol.

``ReasonixApp(services)`` receives an :class:`AppServices`; it never builds
agents, reads config or touches the network itself. Every member the app uses
is declared here, so nothing is looked up by name; implementations derive from
:class:`BaseServices`, which supplies the optional members' defaults. The real
implementation is :class:`reasonix_tui.engine.EngineServices` (built after the
first frame behind :class:`reasonix_tui.deferred.DeferredServices`); tests and
snapshots use :class:`reasonix_testkit.tui.ScriptedServices`.

What belongs to one session (compact, rewind, plan approval, goal, the cache
account, the budget) is on the :class:`SessionHandle` the app gets from
:meth:`AppServices.new_runner`, which drives the core's ``Session``; the services
keep only what the app has across sessions. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # types only: the first frame needs none of the core
    from reasonix_core.agent.cache_preview import RebillPreview
    from reasonix_core.agent.cache_report import CacheReport
    from reasonix_core.agent.turn_meta import TurnMeta
    from reasonix_core.coordinator.plans import SavedPlan
    from reasonix_core.efforts import EffortLevel
    from reasonix_core.events import Event
    from reasonix_core.messages import Message
    from reasonix_core.permission.approver import Approver
    from reasonix_core.skills import SkillCatalog
    from reasonix_core.trust import ProjectReview


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummary:
    """One saved session as shown by the ``/resume`` picker."""

    session_id: str
    title: str
    updated: datetime
    turns: int = 0
    model: str = ""


DEEPSEEK_KEYS_URL = "https://platform.deepseek.com/api_keys"


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalView:
    """The session's goal as ``/goal status`` and the status bar show it."""

    objective: str
    status: str  # active, paused, complete, blocked
    rounds: int = 0
    tokens: int = 0
    cost: float = 0.0
    armed: bool = False  # this process drives it (never saved: a restart disarms)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKeyInfo:
    """Where the current provider's API key comes from (setup screen, /login, 401 hints)."""

    provider: str
    variable: str  # the environment variable, e.g. DEEPSEEK_API_KEY
    stored_in: Path  # <config_home>/.env, where the app saves it
    from_environment: bool = False  # the variable is set in the environment (it wins)
    signup_url: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderChoice:
    """One provider the setup screen offers: the configured one, or a preset
    (reasonix_core/provider/presets.py)."""

    key: str  # the preset's key, or the configured provider's name
    label: str
    endpoint: str
    # The key to ask for; None: none needed (a local server) or already set.
    key_info: ApiKeyInfo | None = None
    note: str = ""  # what the list says of the key: "$VAR" (to give), "key set", "no key"


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelProbe:
    """What ``/model`` learnt from the provider's ``/models``: the ids it lists as
    picker names (``provider/model``), or why it could not say."""

    models: tuple[str, ...] = ()
    error: str = ""  # "" when the listing arrived


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerView:
    """One MCP server as shown by the ``/mcp`` status screen (already redacted)."""

    name: str
    transport: str  # "stdio", "http", "sse"
    state: str  # "connecting", "ready", "failed", "disabled"
    tools: int = 0
    prompts: int = 0
    resources: int = 0
    reconnects: int = 0
    error_class: str = ""  # e.g. "TimeoutError"; never the raw message


@dataclass(frozen=True, slots=True, kw_only=True)
class RewindTurn:
    """One turn as shown by the ``/rewind`` picker."""

    number: int
    head: str  # the prompt's first line
    time: str = ""
    files: tuple[str, ...] = ()  # "M a.txt +1 -1" lines


@dataclass(frozen=True, slots=True, kw_only=True)
class RewindPreview:
    """What rewinding the code to a turn would do: a unified diff and the files
    changed outside Reasonix since the last checkpoint (they stop the rewind)."""

    diff: str
    conflicts: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RewindDone:
    message: str
    # The session to continue in (after a chat rewind or a fork), else None.
    resume_id: str | None = None


class SessionHandle(Protocol):
    """One session as the screen drives it: a core
    :class:`~reasonix_core.agent.runner.Runner` (``session_id``, ``model``,
    ``effort``, ``run``) and the session's own commands, mapped to the views above.

    :meth:`AppServices.new_runner` and :meth:`AppServices.resume_runner` hand it
    out; the real one (``reasonix_tui.engine.EngineRunner``) opens its
    :class:`~reasonix_core.session.core.Session` on first use and forwards to it.
    What outlives one session (the model picked for the next, the permission
    mode, the provider, MCP, the saved sessions) stays on :class:`AppServices`.
    """

    @property
    def session_id(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def effort(self) -> str: ...

    def run(self, prompt: str, meta: TurnMeta | None = None) -> AsyncGenerator[Event, None]:
        """One user turn (the Runner protocol)."""
        ...

    def saved_messages(self) -> Sequence[Message]:
        """The saved transcript this session reopens (``reasonix -c``, ``--resume``,
        ``/resume``), to draw it; empty for a new session. Blocking (reads the session
        file; called in a worker thread)."""
        ...

    def compact(self, focus: str = "") -> AsyncGenerator[Event, None]:
        """Fold the history now (``focus``: what the summary should keep); events go
        through the turn dispatcher."""
        ...

    async def nothing_to_compact(self) -> str:
        """The one line ``/compact`` shows instead of compacting (and instead of asking
        to break the prompt cache) when it would change nothing, else "": the core's
        compaction planner decides (``Session.nothing_to_compact``)."""
        ...

    def cache_report(self) -> CacheReport | None:
        """The session's cache account for ``/cache`` (None: nothing recorded yet)."""
        ...

    def rebill_preview(self, change: str, target: str = "") -> RebillPreview | None:
        """What ``change`` ("model" to ``target``, "effort", "compact") would re-bill
        from the prompt cache now; None when nothing is cached."""
        ...

    def idle_preview(self) -> RebillPreview | None:
        """The first request's cache miss of a session idle longer than the provider
        keeps its cache; None otherwise."""
        ...

    def budget_left(self) -> str:
        """The task budget's remainder (``$0.42 · 3m left``); empty without one.
        Read by the status ticker: never waits."""
        ...

    async def pending_plan(self) -> SavedPlan | None:
        """The plan waiting for approval (``/plan``): one kept in the plan-approval
        dialog, or saved by a headless run."""
        ...

    def execute_plan(self) -> AsyncGenerator[Event, None]:
        """Execute the pending plan (the user approved it in ``/plan``'s dialog); ends
        plan mode. Events go through the turn dispatcher."""
        ...

    async def reject_plan(self) -> None:
        """Discard the pending plan."""
        ...

    async def goal(self, action: str, objective: str = "") -> GoalView | None:
        """``/goal``: ``start`` (create and arm), ``status``, ``pause``, ``resume`` (and
        arm), ``clear``. ``ValueError`` with the reason when the goal cannot change;
        None when the session has no goal."""
        ...

    def drive_goal(self, objective: str = "") -> AsyncGenerator[Event, None]:
        """Goal rounds while the goal is active and armed: ``objective`` starts it,
        else its rounds continue. Events go through the turn dispatcher."""
        ...

    def rewind_turns(self) -> list[RewindTurn]:
        """The turns with their file changes (``/rewind``); ``ValueError`` with the
        reason when the checkpoints cannot be read."""
        ...

    def rewind_preview(self, turn: int) -> RewindPreview:
        """What a code rewind to the start of ``turn`` would change."""
        ...

    async def open(self) -> None:
        """Open the session now if it is not yet (a rewind of a resumed session
        before its first prompt); raises ``ReasonixError`` when it cannot."""
        ...

    def rewind(self, turn: int, scope: str, force: bool = False) -> RewindDone:
        """Rewind: ``scope`` is code, chat, both or fork. ``ValueError`` with the reason
        when it cannot (a conflict, no store)."""
        ...


class AppServices(Protocol):
    """Dependencies of the TUI. Every member is cheap unless said otherwise.

    Members marked *optional* have a default in :class:`BaseServices`.
    """

    workspace: Path
    """Project root: ``@`` completion, custom commands and the title use it."""

    config_home: Path
    """``~/.reasonix`` (or ``$REASONIX_HOME``): user commands and logs live under it."""

    @property
    def context_window(self) -> int:
        """Token window of the current model, for the status bar's context gauge."""
        ...

    @property
    def permission_mode(self) -> str:
        """Current permission mode, read and assigned by the UI (Shift+Tab)."""
        ...

    @permission_mode.setter
    def permission_mode(self, mode: str) -> None: ...

    @property
    def permission_modes(self) -> Sequence[str]:
        """The Shift+Tab cycle, in order, e.g. ``("ask", "auto", "yolo")``."""
        ...

    clock: Callable[[], datetime]
    """Wall clock for elapsed times; frozen in tests and snapshots."""

    @property
    def compact_ratio(self) -> float | None:
        """Optional. The effective ``[agent] compact_ratio`` for ``/status`` (None: unknown)."""
        ...

    @property
    def is_ready(self) -> bool:
        """Optional. False while the services are still being built: the app shows the
        session screen at once, awaits :meth:`ready` once that frame is out, and the
        status bar says "starting…" until then."""
        ...

    @property
    def notify_after(self) -> float | None:
        """Optional. Notify (OSC 9/777, bell) when a turn ends after this many seconds,
        and when an approval waits; None: never (``[tui] notify``)."""
        ...

    @property
    def prompt_history_path(self) -> Path | None:
        """Optional. Where the prompts sent in this workspace are kept across restarts
        (``prompt_history.py``); None: not kept."""
        ...

    @property
    def skills(self) -> SkillCatalog | None:
        """Optional. The skills sessions start with (docs/SKILLS.md): ``/<skill>``
        commands, their expansion and the notices about skipped files. None until the
        services are built, or when the surface has none."""
        ...

    @property
    def settings_files(self) -> Sequence[str]:
        """Optional. The ``--settings`` values (files or inline JSON) sessions read
        hooks and permissions from besides the settings files (docs/HOOKS.md)."""
        ...

    trust_review: ProjectReview | None
    """Optional. The folder's untrusted risky project settings, asked about (trust
    dialog) before :meth:`ready`; None when there is nothing to ask."""

    startup_notes: tuple[str, ...]

    def saved_session_busy(self) -> int | None:
        """Another process's pid when it has the session the launch reopens open."""
        ...
    """Optional. Said once in the transcript when the app starts (e.g. ``-c`` found
    no session to continue)."""

    async def ready(self) -> None:
        """Optional. Finish building (only awaited while :attr:`is_ready` is false);
        if it raises, the app exits and the launcher reports the error."""
        ...

    def settle_trust(self, trust: bool) -> None:
        """Optional. The user's answer to the trust dialog (``OSError``/``ConfigError``
        if the trust file cannot be written)."""
        ...

    async def serve(self) -> None:
        """Optional. Owner task for long-lived resources: the app runs it as a worker
        for its whole life (once ready) and cancels it on exit."""
        ...

    def new_runner(self, approver: Approver) -> SessionHandle:
        """Start a fresh session whose tool approvals go to ``approver``."""
        ...

    def resume_runner(self, session_id: str, approver: Approver) -> SessionHandle:
        """Reopen a saved session (raise ``KeyError`` if it is gone)."""
        ...

    def list_sessions(self) -> list[SessionSummary]:
        """Saved sessions, newest first."""
        ...

    def models(self) -> list[str]:
        """Model names offered by the ``/model`` picker."""
        ...

    def set_model(self, model: str) -> None:
        """Switch model for the current and future runners (``ValueError`` if unknown)."""
        ...

    async def probe_models(self) -> ModelProbe | None:
        """Optional. Ask the current provider's ``/models`` (bounded in time; never
        raises): ``/model`` adds what it lists to the picker. None: nothing to ask."""
        ...

    def priced(self, model: str) -> bool:
        """Optional. Whether a price is known for ``model``; False: its requests count 0
        and the status bar shows the session's cost as unknown (``$?``)."""
        ...

    def efforts(self) -> list[str]:
        """Reasoning-effort levels the current model accepts (may be empty)."""
        ...

    def effort_choices(self) -> list[EffortLevel]:
        """The current model's levels as ``/effort`` lists them: one name per distinct
        request (reasonix_core/efforts.py), each with the aliases it accepts; empty
        when the model has no effort setting."""
        ...

    def set_effort(self, effort: str) -> None:
        """Set reasoning effort (``ValueError`` if not one of :meth:`efforts`)."""
        ...

    def needs_api_key(self) -> bool:
        """True on first run: the setup screen is shown before the session."""
        ...

    def save_api_key(self, key: str) -> None:
        """Persist the key (``<config_home>/.env``, mode 0600); raise ``OSError`` on failure."""
        ...

    def api_key_info(self) -> ApiKeyInfo:
        """Optional. The current provider's key: its name, variable and file."""
        ...

    def provider_choices(self) -> list[ProviderChoice]:
        """Optional. What the first-run setup screen offers, the configured provider
        first; empty: the screen asks for the current provider's key only."""
        ...

    async def use_endpoint(self, base_url: str, api_key: str | None) -> None:
        """Optional. Add the OpenAI-compatible endpoint at ``base_url`` to the user's
        config (its models listed by it; ``api_key`` stored when given) and use it;
        ValueError with the reason when it cannot."""
        ...

    async def use_provider(self, key: str, api_key: str | None) -> None:
        """Optional. Make choice ``key`` the provider sessions start with: store
        ``api_key`` (if given) where :meth:`save_api_key` does, add the preset to the
        user's config (a local server's models asked of its ``/models``) and make it
        ``default_model``. ``ValueError``/``OSError`` with the reason when it cannot."""
        ...

    def mcp_status(self) -> list[McpServerView]:
        """Current MCP servers for ``/mcp`` (empty when none are configured)."""
        ...

    def reconnect_mcp(self, name: str) -> None:
        """Ask the MCP host to reconnect one server (returns at once)."""
        ...

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        """Optional. MCP prompts of ready servers as slash commands:
        (command name without "/", description, argument hint)."""
        ...

    async def wait_mcp(self) -> bool:
        """Optional. Wait until every MCP server still starting is ready or has given
        up, as ``reasonix run`` does before its prompt; True if any was starting."""
        ...

    async def render_mcp_prompt(self, name: str, args: str) -> str:
        """Optional. The text of MCP prompt ``name`` for ``args`` (raises on failure)."""
        ...

    async def expand_mcp_resources(self, text: str) -> tuple[str, list[str]]:
        """Optional. ``text`` with its ``@server:uri`` references expanded, and the
        problems to show."""
        ...

    def mention_refused(self, path: str) -> bool:
        """Optional. True when an ``@path`` reference must not attach ``path``: it is
        inside a protected path (``forbid_read``) or a ``Read`` deny rule covers it.
        Blocking (called in a worker thread)."""
        ...


class BaseServices(AppServices):
    """The optional members' defaults: ready at once, nothing to serve, no MCP."""

    trust_review: ProjectReview | None = None
    # Said once in the transcript when the app starts (e.g. `-c` found no session).
    startup_notes: tuple[str, ...] = ()

    @property
    def compact_ratio(self) -> float | None:
        return None

    def saved_session_busy(self) -> int | None:
        """The pid of another process that has the session the launch reopens open
        (0: unknown pid), else None. Blocking: call it off the loop."""
        return None

    @property
    def prompt_history_path(self) -> Path | None:
        return None

    @property
    def notify_after(self) -> float | None:
        return None

    @property
    def is_ready(self) -> bool:
        return True

    @property
    def skills(self) -> SkillCatalog | None:
        return None

    @property
    def settings_files(self) -> Sequence[str]:
        return ()

    async def ready(self) -> None:
        return None

    def settle_trust(self, trust: bool) -> None:
        return None

    async def serve(self) -> None:
        return None

    def api_key_info(self) -> ApiKeyInfo:
        return ApiKeyInfo(
            provider="DeepSeek",
            variable="DEEPSEEK_API_KEY",
            stored_in=self.config_home / ".env",
            signup_url=DEEPSEEK_KEYS_URL,
        )

    def mcp_prompts(self) -> list[tuple[str, str, str]]:
        return []

    def provider_choices(self) -> list[ProviderChoice]:
        return []

    async def use_provider(self, key: str, api_key: str | None) -> None:
        if api_key:
            self.save_api_key(api_key)

    async def use_endpoint(self, base_url: str, api_key: str | None) -> None:
        raise ValueError("a custom endpoint is not available here")

    async def probe_models(self) -> ModelProbe | None:
        return None

    def priced(self, model: str) -> bool:
        return True

    async def wait_mcp(self) -> bool:
        return False

    async def render_mcp_prompt(self, name: str, args: str) -> str:
        raise LookupError(f"no MCP prompt named {name}")

    async def expand_mcp_resources(self, text: str) -> tuple[str, list[str]]:
        return text, []

    def mention_refused(self, path: str) -> bool:
        return False
