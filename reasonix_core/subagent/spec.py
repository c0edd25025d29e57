"""The one request every entry point compiles into (seed 000 §3.15)."""

from __future__ import annotations

from dataclasses import dataclass

from reasonix_core.errors import ReasonixError
from reasonix_core.subagent.profile import Profile


class SubagentError(ReasonixError):
    """A subagent could not be started (too deep, a bad claim, an unknown profile).

    The delegation tools turn it into a tool error the model reads."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentSpec:
    """One child run: what it is asked, as whom, and what it may touch.

    ``write_paths`` None is no explicit claim: the whole workspace. ``depth``
    is the child's own (the session's agent is 0). ``ephemeral`` runs keep no
    transcript on disk; it is a field here, not a second construction path.
    """

    prompt: str
    profile: Profile | None = None
    model: str | None = None
    effort: str | None = None
    write_paths: tuple[str, ...] | None = None
    read_only: bool = False
    ephemeral: bool = False
    parent_session_id: str = ""
    parent_call_id: str = ""
    # The child's element of the agent path (unique among its siblings);
    # default: the parent tool call id.
    label: str = ""
    # The fleet item this child runs ("" outside a fleet).
    fleet_item: str = ""
    depth: int = 1
    # A per-run step limit from the caller (0: the session's setting).
    max_steps: int = 0
    # An earlier child of the same agent to go on from (seed 000 §3.13), by its
    # session id: ``continue_from`` appends to its transcript, ``fork_from`` to a
    # copy (the earlier one untouched). "": a fresh context.
    continue_from: str = ""
    fork_from: str = ""
    # Run options the child is told (seed 000 §3.13): the parent is in plan mode;
    # the configured reasoning / response language ("": auto, not said).
    plan_mode: bool = False
    language: str = ""

    @property
    def run_options(self) -> dict[str, object]:
        """The run options that are set, as the capsule records them."""
        options: dict[str, object] = {}
        if self.plan_mode:
            options["plan_mode"] = True
        if self.language:
            options["language"] = self.language
        return options

    @property
    def is_read_only(self) -> bool:
        """Read-only when the caller asks or the profile says so (a bound, never lifted)."""
        return self.read_only or (self.profile is not None and self.profile.read_only)
