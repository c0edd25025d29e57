"""What a session lends its children (:class:`SessionServices`).

Kept light on purpose: the session fills one for every session, and
``reasonix run`` must not pay for the runner (its modules, its argument
models) until the model first delegates (:mod:`.delegation`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from reasonix_core.config import reasonix_home

if TYPE_CHECKING:
    from reasonix_core.agent.budget import BudgetMeter
    from reasonix_core.agent.model_call import PriceFn
    from reasonix_core.config import Config, ResolvedModel
    from reasonix_core.mcp.host import McpHost
    from reasonix_core.permission.gate import Gate
    from reasonix_core.provider.base import Provider
    from reasonix_core.subagent.profile import Profile
    from reasonix_core.subagent.slots import Slots
    from reasonix_core.tool.env import SessionEnv
    from reasonix_core.tool.sandbox import SandboxPolicy
    from reasonix_core.usage import Usage


def _no_price(model: str, usage: Usage, when: datetime) -> tuple[float, str]:
    return 0.0, "USD"


def _wall_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(kw_only=True)
class SessionServices:
    """What a session lends its children; built once by the session
    (``session/build.py``). The session's facts are its ``env``, which each child
    derives its own from (:meth:`~reasonix_core.tool.env.SessionEnv.child`)."""

    config: Config
    env: SessionEnv
    resolved: ResolvedModel
    provider: Provider
    effort: str
    mcp: McpHost | None = None
    price: PriceFn = _no_price
    # The session's task budget (agent/budget.py): children charge the same meter.
    budget: BudgetMeter | None = None
    # Profile lookup by name (skills with runAs: subagent); None: no profiles.
    profiles: Callable[[str], Profile | None] | None = None
    retry_sleep: Callable[[float], Awaitable[None]] | None = None
    # The session's scheduling slots, shared by every child (slots.py); made
    # from [agent] with the first child when not given.
    slots: Slots | None = field(default=None)

    @property
    def max_depth(self) -> int:
        return self.config.agent.max_subagent_depth

    @property
    def sandbox(self) -> SandboxPolicy:
        """The session's sandbox, which bounds every child's."""
        if self.env.sandbox is None:
            raise ValueError("a session lends its children services only with its sandbox")
        return self.env.sandbox

    @property
    def home(self) -> Path:
        return self.env.home if self.env.home is not None else reasonix_home()

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.env.clock if self.env.clock is not None else _wall_clock

    @property
    def gate(self) -> Gate | None:
        """The session's gate, shared by its children (it names who asks)."""
        return cast("Gate | None", self.env.gate)
