"""What an action will cost in cache re-billing, said before it is taken.

A ``/model`` or ``/effort`` switch restarts the prompt cache, a manual
``/compact`` re-bills everything after the system prompt, and a session idle
longer than the provider keeps its cache will miss on its next request. Each
preview is the chain's last request (:class:`~reasonix_core.agent.cache_ledger.Baseline`)
priced now: the tokens it had cached that will be billed again, their extra
cost at the current peak or off-peak price, and when off-peak starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from reasonix_core.agent.cache_ledger import CACHE_LIFETIME, Baseline, RebillCost
from reasonix_core.config.prices import DEEPSEEK_PRICES_USD, is_peak, next_off_peak

__all__ = ["RebillPreview", "idle_preview", "rebill_preview"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RebillPreview:
    tokens: int
    cost: float
    currency: str
    # None: the model's price has no peak / off-peak schedule.
    peak: bool | None = None
    # When the off-peak price starts (UTC), while it is peak now.
    off_peak_at: datetime | None = None
    # For an idle session: how long since its last request.
    idle: timedelta | None = None
    # False: the model has no known price, so ``cost`` (0) means "unknown", not free.
    priced: bool = True


def rebill_preview(
    baseline: Baseline | None,
    *,
    model: str,
    when: datetime,
    rebill: RebillCost,
    keep_system: bool = False,
    idle: timedelta | None = None,
    priced: bool = True,
) -> RebillPreview | None:
    """None when nothing is cached (no request yet): nothing to lose."""
    if baseline is None:
        return None
    tokens = baseline.tokens_after(baseline.system_end if keep_system else 0)
    if tokens <= 0:
        return None
    cost, currency = rebill(model, tokens, when)
    scheduled = model.strip().lower() in DEEPSEEK_PRICES_USD
    return RebillPreview(
        tokens=tokens,
        cost=cost,
        currency=currency,
        peak=is_peak(when) if scheduled else None,
        off_peak_at=next_off_peak(when) if scheduled else None,
        idle=idle,
        priced=priced,
    )


def idle_preview(
    baseline: Baseline | None,
    *,
    model: str,
    when: datetime,
    rebill: RebillCost,
    priced: bool = True,
) -> RebillPreview | None:
    """The next request's miss when the chain's last request is older than the
    provider's cache lifetime; None when it is recent or unknown."""
    if baseline is None or not baseline.at:
        return None
    try:
        last = datetime.fromisoformat(baseline.at)
    except ValueError:
        return None
    now = when if when.tzinfo else when.replace(tzinfo=UTC)
    last = last if last.tzinfo else last.replace(tzinfo=UTC)
    idle = now - last
    if idle <= CACHE_LIFETIME:
        return None
    return rebill_preview(
        baseline, model=model, when=when, rebill=rebill, idle=idle, priced=priced
    )
