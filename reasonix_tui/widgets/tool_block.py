"""A tool call card: name, key argument, status and a bounded, expandable result.

A click or Ctrl+O (on the latest expandable block) expands the result."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from reasonix_tui import format as fmt
from reasonix_tui.widgets.diff_view import DiffView

if TYPE_CHECKING:
    from reasonix_core.events import ToolCallFinished

PREVIEW_LINES = 6
DIFF_PREVIEW_LINES = 24
EXPANDED_LINES = 400
STATUS_LABEL = {
    "running": "running…",
    "ok": "✓ ok",
    "error": "✗ error",
    "denied": "⊘ denied",
    "cancelled": "⊘ cancelled",
    "kept": "↺ keep planning",
    "declined": "⊘ declined",
    "unknown": "? unknown",
}

#: The bash tool's last line for the model ("[exit code 1]"): the card says it in the
#: header instead (nothing for success, "exit code N" for a failure).
_EXIT_LINE = re.compile(r"(?:\n|\A)\[exit code (-?\d+)\]\n?\Z")


class ToolBlock(Widget):
    DEFAULT_CSS = """
    ToolBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $secondary;
        & > .header { height: 1; }
        & > .result { color: $text-muted; padding-left: 2; height: auto; }
        & > .live { color: $text-muted; padding-left: 2; height: auto; text-style: italic; }
        & > DiffView { margin-left: 2; }
        &.-ok { border-left: thick $success; }
        &.-error { border-left: thick $error; & > .result { color: $text-error; } }
        /* The core's account: the header's status carries the colour. */
        & > .result.summary, &.-error > .result.summary { color: $text-muted; }
        &.-denied, &.-cancelled, &.-declined { border-left: thick $warning; }
    }
    """

    def __init__(self, call_id: str, name: str, arguments: str) -> None:
        super().__init__(classes="-running")
        self.call_id = call_id
        self.tool_name = name
        self.arguments = arguments
        self.status = "running"
        self.result = ""
        self.diff: str | None = None
        self.expanded = False
        self.progress = ""
        # The core's account of the call for people (ToolCallFinished.summary), and
        # whether the result is the model's alone (then only the summary shows).
        self.summary = ""
        self.for_model = False
        self.exit_code: int | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="header", markup=False)

    def _header(self) -> Content:
        """Name, key argument and status on one line that always ends with the status:
        at a narrow width the key argument (then the progress) is cut with "…"."""
        key = fmt.terminal_safe(fmt.key_argument(self.arguments, 1000, self.tool_name))
        status_style = {
            "running": "$text-secondary",
            "ok": "$text-success",
            "error": "$text-error",
            "kept": "$text-muted",
        }.get(self.status, "$text-warning")
        label = STATUS_LABEL.get(self.status, self.status)
        if self.status == "error" and self.exit_code:
            label = f"✗ exit code {self.exit_code}"
        status = Content.styled(label, status_style)
        if self.status == "running" and self.progress:
            status = status + Content("  ") + Content.styled(self.progress, "$text-muted")
        name = Content.styled(self.tool_name, "bold") + Content("  ")
        width = self._header_width()
        if width:
            # The status first: the name and the key argument give way to it.
            status = status.truncate(max(width - name.cell_length, 1), ellipsis=True)
            room = width - name.cell_length - status.cell_length - 2
            key = Content(key).truncate(room, ellipsis=True).plain if room >= 2 else ""
        head = name
        if key:
            head = head + Content.styled(key, "$text-muted") + Content("  ")
        return head + status

    def _header_width(self) -> int:
        """The header's width in cells once laid out (0 before: no cut yet)."""
        return self.content_region.width if self.is_mounted else 0

    def on_resize(self) -> None:
        self.query_one(".header", Static).update(self._header())

    def set_progress(
        self, progress: float, total: float | None, message: str, output: str = ""
    ) -> None:
        """Live progress reported by the tool (e.g. MCP notifications/progress), or the
        last lines of a running command's output (bounded by the tool), shown below."""
        if output:
            if self.status == "running":
                self._show_live(output)
            return
        amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        self.progress = f"{amount} {message}".strip()
        self.query_one(".header", Static).update(self._header())

    def _show_live(self, output: str) -> None:
        from reasonix_core.permission.summary import visible  # off the first frame's path

        live = self.query(".live")
        # A command's output is the command's to write, not the terminal's to obey: an
        # escape sequence in it (a title, a screen clear) is shown, never sent.
        body = Content(visible(output))
        if live:
            live.first(Static).update(body)
        else:
            self.mount(Static(body, classes="live", markup=False))

    async def finish(
        self,
        result: str,
        outcome: str,
        is_error: bool = False,
        diff: str = "",
        *,
        summary: str = "",
        for_model: bool = False,
    ) -> None:
        """Show how the call ended. ``summary`` stands for the result until the card
        is expanded (a read file's "Read 42 lines"); with ``for_model`` the result is
        addressed to the model (a refusal, a fleet's XML) and never shown."""
        self.summary, self.for_model = summary, for_model
        status = "error" if is_error and outcome == "ok" else outcome
        self.status = status if status in STATUS_LABEL else "unknown"
        if self.tool_name == "exit_plan_mode":
            from reasonix_core.coordinator.plan_mode import APPROVED, KEEP_PLANNING

            # The user's own answer, said in the user's words (the result is the model's
            # instruction); keep planning is a choice, not a refusal.
            if status == "denied" and result.startswith(KEEP_PLANNING):
                self.status, result = "kept", "You chose to keep planning: plan mode stays on."
            elif status == "ok" and result.startswith(APPROVED):
                result = "You approved the plan: plan mode is off."
        exit_line = _EXIT_LINE.search(result) if self.tool_name == "bash" else None
        if exit_line:
            self.exit_code = int(exit_line.group(1))
            result = result[: exit_line.start()] or "(no output)"
        if self.tool_name == "ask" and for_model and self.status == "ok":
            # The only answer the ask tool keeps from people is the user's own Esc.
            self.status = "declined"
        self.result = result
        self.set_classes(f"-{self.status}")
        self.query_one(".header", Static).update(self._header())
        found = diff or fmt.find_diff(result)
        self.diff = found if self.status == "ok" and found else None
        await self._render_body()

    async def finish_with(self, event: ToolCallFinished) -> None:
        await self.finish(
            event.full_result or event.result,  # the kept whole, not the model's bounded copy
            event.outcome,
            event.is_error,
            event.diff,
            summary=event.summary,
            for_model=event.for_model,
        )

    async def _render_body(self) -> None:
        await self.query(".result, .live, DiffView").remove()
        if self.diff is not None:
            limit = EXPANDED_LINES if self.expanded else DIFF_PREVIEW_LINES
            await self.mount(DiffView(self.diff, max_lines=limit))
            return
        if self.summary and not self.for_model and not self.expanded:
            # Collapsed to the account ("Read 42 lines"); expanding shows the result.
            body = Content(fmt.terminal_safe(self.summary))
            if self.expandable:
                body = body + Content.styled(" · click to expand", "italic")
            await self.mount(Static(body, classes="result summary", markup=False))
            return
        lines = self.shown.rstrip("\n").splitlines()
        if not lines:
            return
        from reasonix_core.permission.summary import visible  # off the first frame's path

        limit = EXPANDED_LINES if self.expanded else PREVIEW_LINES
        shown = lines[:limit]
        body = Content(visible("\n".join(shown)))  # escapes shown, never sent (see above)
        if len(lines) > limit:
            hint = "" if self.expanded else " · click to expand"
            more = Content.styled(f"\n… {len(lines) - limit} more lines{hint}", "italic")
            body = body + more
        classes = "result summary" if self.for_model else "result"
        await self.mount(Static(body, classes=classes, markup=False))

    @property
    def shown(self) -> str:
        """What people read of the result: the summary that stands for a result
        addressed to the model, else the result."""
        return self.summary if self.for_model else self.result

    @property
    def expandable(self) -> bool:
        """Finished, with more result or diff than the preview shows."""
        if self.status == "running":
            return False
        if self.diff is not None:
            return len(self.diff.splitlines()) > DIFF_PREVIEW_LINES
        lines = len(self.shown.rstrip("\n").splitlines())
        return lines > (0 if self.summary and not self.for_model else PREVIEW_LINES)

    async def toggle(self) -> None:
        if self.status != "running":
            self.expanded = not self.expanded
            await self._render_body()

    async def on_click(self) -> None:
        await self.toggle()
