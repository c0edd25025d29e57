"""What a session lends its children (:class:`SessionServices`).

Kept light on purpose: the runtime builder fills one for every session, and
``reasonix run`` must not pay for the runner (its modules, its argument
models) until the model first delegates (:mod:`.delegation`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_core.agent.budget import BudgetMeter
    from reasonix_core.agent.model_call import PriceFn
    from reasonix_core.config import Config, ResolvedModel
    from reasonix_core.mcp.host import McpHost
    from reasonix_core.permission.approver import Approver
    from reasonix_core.permission.gate import Gate
    from reasonix_core.provider.base import Provider
    from reasonix_core.subagent.profile import Profile
    from reasonix_core.subagent.slots import Slots
    from reasonix_core.tool.sandbox import SandboxPolicy
    from reasonix_core.usage import Usage


def _no_price(model: str, usage: Usage, when: datetime) -> tuple[float, str]:
    return 0.0, "USD"


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
    approver: Approver | None = None
    read_denied: Callable[[str, Path], bool] | None = None
    secret_env: frozenset[str] = frozenset()
    bash_timeout_seconds: float = 120.0
    mcp: McpHost | None = None
    price: PriceFn = _no_price
    # The session's task budget (agent/budget.py): children charge the same meter.
    budget: BudgetMeter | None = None
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    # Profile lookup by name (skills with runAs: subagent); None: no profiles.
    profiles: Callable[[str], Profile | None] | None = None
    retry_sleep: Callable[[float], Awaitable[None]] | None = None
    # The session's scheduling slots, shared by every child (slots.py); made
    # from [agent] with the first child when not given.
    slots: Slots | None = field(default=None)

    @property
    def max_depth(self) -> int:
        return self.config.agent.max_subagent_depth
