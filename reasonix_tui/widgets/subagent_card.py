"""A subagent's card: one child (or one fleet item) under the tool call that spawned it.

The header is live: the state, the child's current step and tool, its own tokens,
cache-hit ratio and cost, and at the end its adjudicated status. The body lists
the child's tool calls (and holds the cards of its own children); it shows the
last few lines while the child runs and folds away when it ends. A click toggles
the body."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.events import Click
from textual.widget import Widget
from textual.widgets import Static

from reasonix_tui import format as fmt

LIVE_LINES = 4
MAX_LINES = 200
MARKER = {
    "waiting": ("○", "$text-muted"),
    "running": ("◐", "$text-accent"),
    "done": ("✓", "$text-success"),
    "failed": ("✗", "$text-error"),
    "skipped": ("⊘", "$text-warning"),
    "cancelled": ("⊘", "$text-warning"),
}
CALL_MARK = {"running": "…", "ok": "✓", "error": "✗", "denied": "⊘", "cancelled": "⊘"}


class SubagentCard(Widget):
    DEFAULT_CSS = """
    SubagentCard {
        height: auto;
        margin: 0 0 0 2;
        padding: 0 0 0 1;
        border-left: outer $accent;
        & > .header { height: auto; }
        & > .body { height: auto; padding-left: 2; }
        & > .body > .calls { color: $text-muted; height: auto; }
        &.-collapsed > .body { display: none; }
        &.-waiting, &.-skipped, &.-cancelled { border-left: outer $warning; }
        &.-waiting { border-left: outer $panel-lighten-2; }
        &.-done { border-left: outer $success; }
        &.-failed { border-left: outer $error; }
    }
    """

    def __init__(
        self, label: str, *, depends_on: tuple[str, ...] = (), state: str = "running"
    ) -> None:
        super().__init__(classes=f"-{state}")
        self.label = label
        self.depends_on = depends_on
        self.state = state
        self.profile = ""
        self.reason = ""
        self.status = ""
        self.step = 0
        self.tool = ""
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cache_hit_tokens = 0
        self.cost = 0.0
        self.currency = "USD"
        self.calls: dict[str, int] = {}  # call id -> line index
        self.lines: list[tuple[str, str]] = []  # (text, mark)
        self.expanded: bool | None = None  # None: automatic (open while running)

    def compose(self) -> ComposeResult:
        yield Static(self.header(), classes="header", markup=False)
        with Vertical(classes="body"):
            yield Static("", classes="calls", markup=False)

    # -- what the child did --------------------------------------------------

    def bind(self, profile: str) -> None:
        """The child for this card started (a fleet item's card exists before)."""
        self.profile = profile
        self.set_state("running")

    def set_state(self, state: str, reason: str = "", status: str = "") -> None:
        # A reason belongs to its state (waiting for a slot is no reason to be cancelled).
        if reason or state != self.state:
            self.reason = reason
        self.state = state
        self.status = status or self.status
        if state != "running":
            self.tool = ""
        self.set_classes(f"-{state}")
        self._refresh()

    def step_started(self, step: int) -> None:
        self.step = step
        self._refresh()

    def retrying(self, reason: str) -> None:
        """The child's request is being retried: shown where its current tool goes."""
        self.tool = f"retrying: {reason}"
        self._refresh()

    def tool_started(self, call_id: str, name: str, arguments: str) -> None:
        key = fmt.key_argument(arguments, width=48)
        text = f"{name} {key}".strip()
        self.tool = text
        self.calls[call_id] = len(self.lines)
        self.lines.append((text, "running"))
        if len(self.lines) > MAX_LINES:
            self.lines = self.lines[-MAX_LINES:]
            self.calls = {c: i - 1 for c, i in self.calls.items() if i > 0}
        self._refresh()

    def tool_finished(self, call_id: str, outcome: str, is_error: bool) -> None:
        index = self.calls.pop(call_id, None)
        if index is not None and index < len(self.lines):
            text = self.lines[index][0]
            self.lines[index] = (text, "error" if is_error and outcome == "ok" else outcome)
        self.tool = ""
        self._refresh()

    def add_usage(
        self, prompt: int, completion: int, cache_hit: int, cost: float, currency: str
    ) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cache_hit_tokens += cache_hit
        self.cost += cost
        self.currency = currency
        self._refresh()

    async def add_card(self, card: SubagentCard) -> None:
        """A child of this child: its card goes into this card's body."""
        await self.query_one(".body", Vertical).mount(card)

    # -- display ---------------------------------------------------------------

    @property
    def collapsed(self) -> bool:
        if self.expanded is not None:
            return not self.expanded
        return self.state != "running" or not self.lines

    def header(self) -> Content:
        mark, style = MARKER.get(self.state, ("?", "$text-warning"))
        safe = fmt.terminal_safe  # the model names items and gives reasons
        parts: list[tuple[str, str] | str] = [(mark, style), " ", (safe(self.label), "bold")]
        if self.profile and self.profile != self.label:
            parts += [" · ", (safe(self.profile), "$text-secondary")]
        if self.depends_on:
            parts.append((safe(f" (after {', '.join(self.depends_on)})"), "$text-muted"))
        parts += ["  ", (safe(self._state_text()), style)]
        if self.prompt_tokens or self.completion_tokens:
            total = self.prompt_tokens + self.completion_tokens
            cache = fmt.percent(self.cache_hit_tokens, self.prompt_tokens)
            money = fmt.cost(self.cost, self.currency)
            parts.append((f"  {fmt.tokens(total)} tok · cache {cache} · {money}", "$text-muted"))
        return Content.assemble(*parts)

    def _state_text(self) -> str:
        if self.state == "running":
            live = [f"step {self.step}" if self.step else "starting"]
            if self.tool:
                live.append(self.tool)
            return " · ".join(live)
        if self.state in ("done", "failed") and self.status:
            return self.status
        if self.reason and self.state in ("waiting", "skipped", "failed", "cancelled"):
            return (
                self.reason
                if self.reason.startswith(self.state)
                else f"{self.state}: {self.reason}"
            )
        return self.state

    def _calls_text(self) -> Content:
        lines = self.lines if self.expanded else self.lines[-LIVE_LINES:]
        hidden = len(self.lines) - len(lines)
        rows = [f"{text}  {CALL_MARK.get(mark, '?')}" for text, mark in lines]
        if hidden:
            rows.insert(0, f"… {hidden} earlier calls")
        return Content(fmt.terminal_safe("\n".join(rows)))

    def _refresh(self) -> None:
        # The class first, mounted or not: a resumed card is built finished, and its
        # body must be folded from its first frame, as the live card's ends up.
        self.set_class(self.collapsed, "-collapsed")
        if not self.is_mounted:
            return
        self.query_one(".header", Static).update(self.header())
        self.query_one(".calls", Static).update(self._calls_text())

    def on_mount(self) -> None:
        self._refresh()

    def toggle(self) -> None:
        self.expanded = self.collapsed
        self._refresh()

    def on_click(self, event: Click) -> None:
        event.stop()  # the tool card around it must not toggle too
        self.toggle()
