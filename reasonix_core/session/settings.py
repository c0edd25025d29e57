"""What a surface asks of a new session (:class:`RunSettings`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: What ``--ablate`` may take away (seed 000 §3.17): ``subagent`` removes the delegation
#: tools (task, read_only_task, fleet). A profile skill run as a subagent can still
#: delegate: read ``subagent_runs``, not the arm's name.
ABLATIONS = ("subagent",)


def arm_name(ablate: tuple[str, ...]) -> str:
    """The experiment arm a run is (RunMetrics.arm): ``full``, or ``no-subagent``..."""
    return "-".join(f"no-{part}" for part in sorted(ablate)) if ablate else "full"


@dataclass(kw_only=True)
class RunSettings:
    """What a surface asks for; ``None`` means "take it from the config"."""

    workspace: Path
    model: str | None = None
    effort: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list[str])
    # --disallowed-tools (Claude Code's --disallowedTools): deny rules for this run.
    disallowed_tools: list[str] = field(default_factory=list[str])
    max_steps: int | None = None
    continue_last: bool = False
    resume_id: str | None = None
    # --ablate: parts of the harness taken away for a comparison arm (ABLATIONS).
    ablate: tuple[str, ...] = ()
    # With continue_last / resume_id: run in a new session copied from that one
    # (--fork-session); the original is left untouched.
    fork_session: bool = False
    home: Path | None = None
    # --add-dir: extra folders read-family tools reach without asking (reads only).
    add_dirs: list[Path] = field(default_factory=list[Path])
    # Wait for MCP servers (each bounded by its start-up timeout) before the first
    # request. No surface does: the prefix never depends on them (use_capability),
    # a call to a server waits for it, so the first request leaves at once.
    mcp_wait: bool = False
    # Apply the project's risky settings without recorded trust (--trust-project).
    trust_project: bool = False
    # --append-system-prompt: after [agent] system_prompt_extra, in a new session's prompt.
    append_system_prompt: str = ""
    # Why the session starts and ends, as SessionStart / SessionEnd hooks are told
    # ("": startup or resume; "clear" for a /clear; end: one of
    # session/hook_turns.py SESSION_END_REASONS, changed later by Session.ending).
    session_source: str = ""
    session_end_reason: str = "other"
    # --settings: extra settings.json files or inline JSON (the user's own: trusted).
    settings_files: list[str] = field(default_factory=list[str])
    # --system-prompt: a new session's base prompt instead of Reasonix's own (None
    # or empty: Reasonix's own); the instructions and extras still follow it.
    system_prompt: str | None = None
    # --session-id: the id a new session is created under (None: a fresh one).
    session_id: str | None = None
    # --mcp-config: .mcp.json-shaped files declaring more servers for this run.
    mcp_config: list[Path] = field(default_factory=list[Path])
    # Start the servers only at Session.mcp.start_now() or their first use:
    # `reasonix run` starts none it does not use (headless.py).
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
    discovered_models: dict[str, tuple[str, ...]] = field(
        default_factory=dict[str, tuple[str, ...]]
    )
    # False: the session is kept in memory, no file in the sessions store
    # (`reasonix subagent run|try`: the session only lends its services to the
    # one child, whose own transcript is the record).
    record_session: bool = True
