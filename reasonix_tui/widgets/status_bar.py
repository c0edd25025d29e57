"""Two-line status bar: posture and busy state; usage, cache and cost."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widget import Widget

from reasonix_tui import format as fmt
from reasonix_tui.services import GoalView

if TYPE_CHECKING:
    from reasonix_core.agent.cache_report import SavedGauges

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
MODE_STYLE = {
    "ask": "$text-primary",
    "auto": "$text-warning",
    "plan": "bold $text-success",
    "yolo": "bold $text-error",
}


@dataclass(frozen=True, slots=True)
class StatusState:
    mode: str = "ask"
    model: str = ""
    effort: str = ""
    busy_since: datetime | None = None
    now: datetime | None = None
    context_tokens: int = 0
    context_window: int = 0
    last_cache_pct: float | None = None
    cache_hit_tokens: int = 0
    prompt_tokens: int = 0
    cost: float = 0.0
    currency: str = "USD"
    unpriced: bool = False  # a request of a model with no known price is in ``cost``
    # A request's usage was estimated locally (the provider reported none): "~".
    estimated: bool = False
    queued: int = 0
    hint: str = ""
    frame: int = 0
    starting: bool = False  # the services are still being built
    budget_left: str = ""  # the task budget's remainder when one is set
    goal: GoalView | None = None  # the session's goal (/goal), once known


GOAL_STATE_STYLE = {"armed": "$text-success", "paused": "$text-warning"}


def goal_segment(goal: GoalView, room: int, currency: str = "USD") -> Content:
    """``goal: <objective> · round N · 12k tok · $0.01 · armed``, the objective cut to fit
    ``room`` cells (left out when fewer than 8 are left for it)."""
    if goal.status == "active":
        state = "armed" if goal.armed else "not driven"
    else:
        state = goal.status
    tail = (
        f" · round {goal.rounds} · {fmt.tokens(goal.tokens)} tok · "
        f"{fmt.cost(goal.cost, currency)} · "
    )
    space = room - len("goal: ") - len(tail) - len(state)
    objective = " ".join(goal.objective.split())
    if space < 8:
        objective = ""
    elif len(objective) > space:
        objective = objective[: space - 1].rstrip() + "…"
    head = f"goal: {objective}" if objective else "goal"
    return Content.assemble(
        (head + tail, "$text-accent"), (state, GOAL_STATE_STYLE.get(state, "$text-muted"))
    )


class StatusBar(Widget):
    DEFAULT_CSS = """
    StatusBar {
        height: 2;
        padding: 0 1;
        background: $panel;
        color: $text;
    }
    """

    class CacheClicked(Message):
        """The cache figure was clicked: the session screen opens ``/cache``."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.state = StatusState()
        # Where the cache figure is on the second line (content columns, end excluded).
        self._cache_span = (0, 0)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and offset.y == 1:
            start, end = self._cache_span
            if start <= offset.x < end:
                self.post_message(self.CacheClicked())

    def update_state(self, **changes: object) -> None:
        self.state = replace(self.state, **changes)  # type: ignore[arg-type]
        self.refresh()

    def add_usage(
        self,
        prompt: int,
        completion: int,
        cache_hit: int,
        cost: float,
        currency: str,
        *,
        priced: bool = True,
        estimated: bool = False,
    ) -> None:
        s = self.state
        self.update_state(
            context_tokens=prompt + completion,
            last_cache_pct=(100 * cache_hit / prompt) if prompt else None,
            cache_hit_tokens=s.cache_hit_tokens + cache_hit,
            prompt_tokens=s.prompt_tokens + prompt,
            cost=s.cost + cost,
            currency=currency,
            unpriced=s.unpriced or not priced,
            estimated=s.estimated or estimated,
        )

    def add_cost(self, cost: float, currency: str) -> None:
        """A subagent's request: the session pays for it, but the context and cache
        gauges stay the parent's (its card shows the child's own)."""
        self.update_state(cost=self.state.cost + cost, currency=currency)

    def restore_usage(self, gauges: SavedGauges) -> None:
        """A resumed session's gauges as its last request left them."""
        self.update_state(
            context_tokens=gauges.context_tokens,
            last_cache_pct=gauges.last_cache_pct,
            cache_hit_tokens=gauges.cache_hit_tokens,
            prompt_tokens=gauges.prompt_tokens,
            cost=gauges.cost,
            currency=gauges.currency,
            estimated=gauges.estimated,
        )

    def reset_usage(self) -> None:
        self.update_state(
            context_tokens=0,
            last_cache_pct=None,
            cache_hit_tokens=0,
            prompt_tokens=0,
            cost=0.0,
            unpriced=False,
            estimated=False,
        )

    def _line(self, left: Content, right: Content) -> Content:
        width = max(0, self.content_size.width)
        gap = max(1, width - left.cell_length - right.cell_length)
        return left + Content(" " * gap) + right

    def _fitted(self, lefts: list[Content], rights: list[Content]) -> Content:
        """The first left/right pair (fullest first) that fits one line; past the
        last, the right side is cut, then the left: a status line never wraps."""
        width = max(0, self.content_size.width)
        for left in lefts:
            for right in rights:
                if left.cell_length + right.cell_length + (1 if right else 0) <= width:
                    return self._line(left, right)
        left, right = lefts[-1], rights[-1]
        room = width - left.cell_length - 1
        if room >= 8:
            return self._line(left, right.truncate(room, ellipsis=True))
        return left.truncate(width, ellipsis=True)

    def render(self) -> Content:
        s = self.state
        mode = Content.styled(f"● {s.mode}", MODE_STYLE.get(s.mode, "$text-primary"))
        if s.busy_since is not None and s.now is not None:
            elapsed = fmt.duration((s.now - s.busy_since).total_seconds())
            spin = SPINNER[s.frame % len(SPINNER)]
            state = Content.styled(f"{spin} working {elapsed} · Esc cancels", "$text-accent")
            short_state = Content.styled(f"{spin} {elapsed}", "$text-accent")
        else:
            state = Content.styled("starting…" if s.starting else "ready", "$text-muted")
            short_state = state
        # "auto" is also a permission mode: the effort of that name says what it is.
        effort = f"effort {s.effort}" if s.effort == "auto" else s.effort
        model = Content.assemble((s.model, "bold"), (f" · {effort}" if effort else "", ""))
        bare_model = Content.styled(s.model, "bold")
        left = Content.assemble(mode, "  ", state)
        if s.goal is not None:
            room = self.content_size.width - left.cell_length - model.cell_length - 4
            left = Content.assemble(left, "  ", goal_segment(s.goal, room, s.currency))
        # Narrow: the effort goes first, then the state's words, then the model is cut.
        line1 = self._fitted(
            [left, Content.assemble(mode, "  ", short_state), mode],
            [model, bare_model],
        )

        window = s.context_window
        guess = "~" if s.estimated else ""
        ctx = f"ctx {guess}{fmt.tokens(s.context_tokens)}/{fmt.tokens(window)}"
        ctx += f" {fmt.percent(s.context_tokens, window)}"
        last = "-" if s.last_cache_pct is None else f"{s.last_cache_pct:.0f}%"
        avg = fmt.percent(s.cache_hit_tokens, s.prompt_tokens)
        money = f"{guess}{fmt.cost(s.cost, s.currency, s.unpriced)}"
        # Narrow: the cache average goes first, then the cache figure.
        usages = [
            f"{ctx} · cache {last} (avg {avg}) · {money}",
            f"{ctx} · cache {last} · {money}",
            f"{ctx} · {money}",
        ]
        extra = []
        if s.budget_left:
            extra.append((f"budget {s.budget_left}", "$text-muted"))
        if s.queued:
            extra.append(((" · " if extra else "") + f"{s.queued} queued", "$text-warning"))
        if s.hint:
            extra.append(((" · " if extra else "") + s.hint, "$text-warning"))
        line2 = self._fitted(
            [Content.styled(usage, "$text-muted") for usage in usages], [Content.assemble(*extra)]
        )
        shown = line2.plain
        cache_at = shown.find(" · cache ")
        if cache_at >= 0 and shown.startswith(ctx):
            end = shown.find(" · ", cache_at + 3)
            self._cache_span = (cache_at + 3, end if end > 0 else len(shown))
        else:
            self._cache_span = (0, 0)
        return Content("\n").join([line1, line2])
