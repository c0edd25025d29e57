"""Approval dialog: tool, arguments, diff preview; allow once / session / deny.

A write-scope request (``bash`` asking for ``additional_write_dirs``) shows as
the grant dialog: the folders, the model's justification and the command; the
same three answers grant the folders for this call, for this session (kept in
memory only, never saved) or refuse them.

A subagent's request says so under the title (which child: its fleet item and
profile or kind, the subagents that spawned it, its task), so a child's ``bash`` is never approved as the main
agent's."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from reasonix_core.permission.approver import ApprovalDecision, ApprovalRequest, Requester
from reasonix_core.permission.summary import detail_lines, visible
from reasonix_tui.format import exact_line, one_line
from reasonix_tui.screens.overlay import DialogBox, DockedOverlay
from reasonix_tui.widgets.diff_view import DiffView

ARG_LINES = 6
ARG_WIDTH = 80
CHOICES = (ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_SESSION, ApprovalDecision.DENY)


#: Arguments the edit's diff already shows (the dialog draws the diff, not them).
DIFF_SHOWN = frozenset({"old_string", "new_string", "content", "edits"})


def _flat(value: object) -> str:
    """A value on one line in people's terms: text as it is (made visible), yes/no,
    a list as "a, b", a mapping as "key: value, …"; never a Python repr."""
    if isinstance(value, str):
        return visible(" ".join(value.split()))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, dict):
        return ", ".join(f"{visible(str(k))}: {_flat(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_flat(v) for v in value)
    return visible(str(value))


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[: max(0, room - 1)] + "…"


def _value_lines(key: str, value: object) -> list[str]:
    """``key: value`` on one line; a list or mapping as ``key:`` with one indented
    line per item (a bullet per list item) below."""
    if isinstance(value, list | tuple) and value:
        return [f"{key}:", *(_cut(f"  • {_flat(v)}", ARG_WIDTH) for v in value)]
    if isinstance(value, dict) and value:
        items = (f"  {visible(str(k))}: {_flat(v)}" for k, v in value.items())
        return [f"{key}:", *(_cut(line, ARG_WIDTH) for line in items)]
    text = visible(value) if isinstance(value, str) else _flat(value)
    first, *rest = text.splitlines() or [""]
    more = f" (+{len(rest)} lines)" if rest else ""
    return [f"{key}: {_cut(first, ARG_WIDTH - len(key) - 2 - len(more))}{more}"]


def _argument_lines(
    arguments: dict[str, object], summary: str = "", diff: bool = False
) -> list[str]:
    """The arguments, less those the summary already shows whole (the command of
    "Run: <command>", the path of "Edit <path>") and, with a ``diff``, the texts the
    diff shows: nothing is said twice."""
    lines: list[str] = []
    for key, value in arguments.items():
        if diff and key in DIFF_SHOWN:
            continue
        if isinstance(value, str) and value and "\n" not in value and visible(value) in summary:
            continue
        lines += _value_lines(key, value)
    if len(lines) > ARG_LINES:
        lines = [*lines[: ARG_LINES - 1], f"… {len(lines) - ARG_LINES + 1} more lines"]
    return lines


#: The most characters of the model's justification the grant dialog shows.
WHY_CHARS = 300


#: The most characters of a subagent's name, path or task the dialog shows.
REQUESTER_CHARS = 200


def requester_lines(requester: Requester) -> list[str]:
    """Who asks: the subagent (by its fleet item and profile or kind, after the
    subagents that spawned it; never by tool call ids), its task; each the model's
    words, so one line each and inert (a task cannot fake "Asked by the main agent"
    on a line of its own)."""
    chain = requester.lineage or (requester.name,)
    who = " › ".join(one_line(label, REQUESTER_CHARS) for label in chain)
    lines = [f"Asked by a subagent, not the main agent: {who}"]
    if requester.task:
        lines.append(f"its task: {one_line(requester.task, REQUESTER_CHARS)}")
    return lines


class ApprovalScreen(DockedOverlay[ApprovalDecision | None]):
    """Dismisses with a decision, or None when the user cancels the whole turn."""

    opens_unasked = True  # keys typed for the composer stay there (overlay.py)

    DEFAULT_CSS = """
    ApprovalScreen {
        & > #dialog { border: round $warning; }
        & #title { color: $text-warning; }
        & #requester { color: $text-error; text-style: bold; margin-bottom: 1; }
        & #folders-scroll { margin-bottom: 1; }
        & #arguments { color: $text-muted; }
        & #preview { margin-top: 1; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1,y", "choose(0)", "Allow once", show=False),
        Binding("2,a", "choose(1)", "Allow for session", show=False),
        Binding("3,n,escape", "choose(2)", "Deny", show=False),
        Binding("ctrl+c", "cancel_turn", "Cancel turn", show=False, priority=True),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        if self.request.write_dirs:
            yield from self._compose_grant()
            return
        request = self.request
        with DialogBox(id="dialog"):
            if request.requester is not None:
                yield Static(Content(f"Allow {request.tool} for a subagent?"), id="title")
            else:
                yield Static(Content(f"Allow {request.tool}?"), id="title")
            # What is asked scrolls (a long diff, many arguments); the answers under
            # it stay on screen.
            with VerticalScroll(id="body", classes="body"):
                yield from self._compose_requester()
                if request.summary:
                    yield Static(Content(request.summary), id="summary")
                lines = detail_lines(request.tool, request.arguments)
                if lines is None:
                    lines = _argument_lines(
                        request.arguments, request.summary, diff=bool(request.preview)
                    )
                if lines:
                    yield Static(Content("\n".join(lines)), id="arguments")
                if request.preview:
                    yield DiffView(request.preview, id="preview")
            session = "Allow for this session"
            if request.scope:
                session += f"  ({request.scope})"
            yield OptionList(
                Option(Content.assemble(("1  ", "bold"), "Allow once")),
                Option(Content.assemble(("2  ", "bold"), session)),
                Option(Content.assemble(("3  ", "bold"), "Deny")),
                id="choices",
            )
            yield Static(
                "1/y allow once · 2/a this session · 3/n/Esc deny · Ctrl+C cancel turn",
                classes="hint",
            )

    def _compose_grant(self) -> ComposeResult:
        request = self.request
        count = len(request.write_dirs)
        folders = "this folder" if count == 1 else f"these {count} folders"
        with DialogBox(id="dialog"):
            yield Static(
                Content(f"Let {request.tool} write to {folders} outside the workspace?"),
                id="title",
            )
            yield from self._compose_requester()
            # In a scroll of its own: thousands of folders, or one 60,000 characters
            # long, cannot push the command and the answers off the screen.
            with VerticalScroll(id="folders-scroll", classes="body"):
                # A folder's name may hold a newline or tab too: one line per folder, in
                # full (its spaces are real: it is escaped, never flattened nor cut).
                folders = (exact_line(d) for d in request.write_dirs)
                yield Static(Content("\n".join(f"  {d}" for d in folders)), id="folders")
            why = one_line(request.justification, WHY_CHARS) or "(no reason given)"
            yield Static(Content(f"Why: {why}"), id="summary")
            command = request.arguments.get("command")
            if isinstance(command, str):
                yield Static(
                    Content("\n".join(_argument_lines({"command": command}))), id="arguments"
                )
            yield OptionList(
                Option(Content.assemble(("1  ", "bold"), "Allow for this command only")),
                Option(
                    Content.assemble(
                        ("2  ", "bold"), "Allow for this session (not saved to any file)"
                    )
                ),
                Option(Content.assemble(("3  ", "bold"), "Deny")),
                id="choices",
            )
            yield Static(
                "1/y this command · 2/a this session · 3/n/Esc deny · Ctrl+C cancel turn",
                classes="hint",
            )

    def _compose_requester(self) -> ComposeResult:
        requester = self.request.requester
        if requester is not None:
            yield Static(Content("\n".join(requester_lines(requester))), id="requester")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(event.option_index)

    def action_choose(self, index: int) -> None:
        self.dismiss(CHOICES[index])

    def action_cancel_turn(self) -> None:
        self.dismiss(None)
