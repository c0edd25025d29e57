"""The session screen: transcript, completion menu, composer and status bar.

It owns the runner, the :class:`TurnController` and the exclusive ``turn``
worker; it dispatches slash commands to the handlers that
:mod:`reasonix_tui.screens.builtin_commands` names.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static, TextArea
from textual.worker import Worker, WorkerState

from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.command.expander import PromptExpander, Provenance, split_command
from reasonix_core.errors import CommandError, SkillError
from reasonix_tui import format as fmt
from reasonix_tui.approver import TuiApprover
from reasonix_tui.commands import CommandRegistry, SlashCommand
from reasonix_tui.completion import mention_at_cursor, mention_items, slash_items
from reasonix_tui.pasted_text import PromptText, full_text, join
from reasonix_tui.prompt_history import PromptHistory
from reasonix_tui.screens.builtin_commands import (
    BUILTIN_COMMANDS,
    BuiltinCommand,
    runs_while_busy,
)
from reasonix_tui.screens.cache import idle_text
from reasonix_tui.screens.dialog_requests import DialogRequests
from reasonix_tui.screens.picker import PickerItem, PickerScreen
from reasonix_tui.screens.rewind import open_rewind
from reasonix_tui.screens.session_commands import key_hint, show_cache
from reasonix_tui.screens.transcript_keys import TranscriptKeys
from reasonix_tui.services import AppServices
from reasonix_tui.widgets.blocks import NoticeBlock, NoticeLevel, UserBlock
from reasonix_tui.widgets.completion_menu import CompletionMenu
from reasonix_tui.widgets.composer import Composer
from reasonix_tui.widgets.status_bar import StatusBar
from reasonix_tui.widgets.transcript import NewOutputMarker, Transcript

# Not needed for the first frame, so imported on first use: the turn controller (the
# core's event classes), the approval dialog and the permission package.
if TYPE_CHECKING:
    from textual.timer import Timer

    from reasonix_core.events import Event
    from reasonix_tui.controller import TurnController
    from reasonix_tui.replay import Entry

TICK_SECONDS = 0.25
MODE_TOAST_SECONDS = 4.0
MODE_TOAST_DELAY = 0.2
# The mode hint covers the status bar's gauges (cache, cost) while it shows: briefly.
MODE_HINT_SECONDS = 3.0

log = logging.getLogger(__name__)


class SessionScreen(TranscriptKeys, DialogRequests, Screen[None]):
    CSS_PATH = "session.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "escape", "Cancel", show=False, priority=True),
        Binding("ctrl+c", "interrupt", "Interrupt", show=False, priority=True),
        Binding("ctrl+d", "quit", "Quit", show=False, priority=True),
        Binding("shift+tab", "cycle_mode", "Mode", show=False, priority=True),
        Binding("ctrl+o", "toggle_details", "Details", show=False, priority=True),
        Binding("ctrl+r", "search_history", show=False, priority=True),
        Binding("alt+up", "select_block(-1)", show=False, priority=True),
        Binding("alt+down", "select_block(1)", show=False, priority=True),
        # The transcript scrolls while the composer keeps the focus (screens/transcript_keys.py).
        *(
            Binding(key, action, show=False, priority=True)
            for key, action in (
                ("pageup", "scroll_page(-1)"),
                ("pagedown", "scroll_page(1)"),
                ("ctrl+up", "scroll_line_up"),
                ("ctrl+down", "scroll_line_down"),
                ("shift+up", "scroll_line_up('if_empty')"),
                ("shift+down", "scroll_line_down('if_empty')"),
                ("ctrl+home", "scroll_home"),
                ("ctrl+end", "scroll_end"),
                ("home", "scroll_home('if_empty')"),
                ("end", "scroll_end('if_empty')"),
            )
        ),
    ]

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        self.services = services
        self.registry = CommandRegistry.load(
            BUILTIN_COMMANDS, services.workspace, services.config_home
        )
        self.approver = TuiApprover(self)
        self.runner = services.new_runner(self.approver)
        self.busy = False
        self.queue: list[str] = []
        self.ctrl_c_armed = False
        self.ctrl_d_armed = False
        # The user cancelled the turn: what was queued behind it waits, back in the composer.
        self._hold_queue = False
        self.escape_armed = False
        self._menu_dismissed_text: str | None = None
        self.approval_lock = asyncio.Lock()  # one dialog at a time (dialog_requests.py)
        self.prompt_history: PromptHistory | None = None  # loaded after the first frame
        self._controller: TurnController | None = None
        self._busy_started = time.monotonic()
        self._skills_announced = False
        self._mode_toast_until = 0.0  # while the last Shift+Tab toast is up
        self._mode_toast: Timer | None = None  # the toast waiting for the keys to settle
        self._mode_hint = ""  # the Shift+Tab hint in the status bar, while it shows
        # Set once the launch's saved session (if any) has its newest blocks on screen:
        # the app builds the engine after that (see ReasonixApp._await_services).
        self.saved_drawn = asyncio.Event()

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield NewOutputMarker(id="new-output")
        yield CompletionMenu(id="menu")
        yield Composer(id="composer")
        room = Static(id="dialog-room")  # what a docked dialog covers (make_room)
        room.display = False
        yield room
        yield StatusBar(id="status")

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def composer(self) -> Composer:
        return self.query_one(Composer)

    @property
    def menu(self) -> CompletionMenu:
        return self.query_one(CompletionMenu)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def controller(self) -> TurnController:
        if self._controller is None:
            from reasonix_tui.controller import TurnController

            # Looked up per usage event: the services may still be being built now.
            self._controller = TurnController(
                self.transcript,
                self.status,
                self.services.clock,
                lambda model: self.services.priced(model),
            )
            self._controller.failure_hint = lambda status: key_hint(self.services, status)
        return self._controller

    async def on_mount(self) -> None:
        self.composer.cursor_blink = bool(getattr(self.app, "cursor_blink", True))
        self._ticker = self.set_interval(TICK_SECONDS, self._tick, pause=True)
        self.refresh_status()
        self.screen_layout_refresh_signal.subscribe(self, self._toasts_above, immediate=True)
        await self.welcome()
        for note in self.services.startup_notes:
            await self.notice(note, "warning")
        for problem in self.registry.problems:
            await self.notice(f"Skipped command {problem.path.name}: {problem.message}", "warning")
        await self.announce_skills()
        if self.services.is_ready:  # else the app calls it once they are
            await self.warn_if_idle()
        self.composer.focus()
        self.show_saved_session()
        # Its thread imports part of the core: not while the first frame is being drawn.
        self.call_after_refresh(self.load_prompt_history)

    def _toasts_above(self, _screen: object) -> None:
        """Toasts (the Shift+Tab mode's) rise above the composer, its menu and the
        status bar instead of covering them: after each layout, the toast rack's
        bottom margin is what lies below the transcript."""
        below = self.size.height - self.transcript.region.bottom
        margin = (0, 0, below, 0)
        for rack in self.query_children("#textual-toastrack"):
            if below > 0 and tuple(rack.styles.margin) != margin:
                rack.styles.margin = margin

    @work(group="history", exit_on_error=False)
    async def load_prompt_history(self) -> None:
        path = await asyncio.to_thread(lambda: self.services.prompt_history_path)
        if path is None:
            return
        self.prompt_history = PromptHistory(path)
        loaded = await asyncio.to_thread(self.prompt_history.load)
        recalled = self.composer.prompt_history
        recalled[:0] = loaded  # before anything sent meanwhile

    def action_search_history(self) -> None:
        """Ctrl+R: pick an earlier prompt (type to search), newest first."""
        prompts = list(dict.fromkeys(reversed(self.composer.prompt_history)))
        items = [
            PickerItem(value=p, label=p.strip().splitlines()[0][:90] if p.strip() else p)
            for p in prompts
        ]

        def picked(prompt: str | None) -> None:
            if prompt:
                self.composer.set_text(prompt)

        self.app.push_screen(
            PickerScreen("Search prompt history", items, empty="No prompts yet."), picked
        )

    @work(group="history", exit_on_error=False)
    async def show_saved_session(self, note: str = "") -> None:
        """Draw the conversation the runner reopens (``reasonix -c``, ``/resume``)."""
        try:
            await self._show_saved_session(note)
        finally:
            self.saved_drawn.set()

    async def _show_saved_session(self, note: str) -> None:
        runner = self.runner

        def read() -> list[Entry] | None:
            messages = runner.saved_messages()
            if not messages:
                return None
            # In the thread too: the core modules the entries need load there, not on
            # the loop that draws them.
            from reasonix_tui.replay import replay_entries

            return replay_entries(messages)

        try:
            entries = await asyncio.to_thread(read)
        except Exception as exc:
            await self.notice(f"Could not draw the saved session: {exc}", "warning")
            return
        if runner is not self.runner:  # /new or /resume meanwhile
            return
        if entries is not None:
            await self.transcript.show_saved(entries, self.services.clock())
        if note:
            await self.notice(note)
        else:  # the launch's -c or -r: say at once if another process has it open
            pid = await asyncio.to_thread(self.services.saved_session_busy)
            if pid is not None and runner is self.runner:
                who = f"pid {pid}" if pid else "pid unknown"
                await self.notice(
                    f"This session is open in another Reasonix process ({who}): prompts "
                    "here are refused until it quits. /new starts a new session.",
                    "warning",
                )
        self.refresh_status()
        # After the newest blocks are on screen: reading the records (a thread) must
        # not compete with drawing the last answer.
        history = self.transcript.history
        if history is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(history.on_screen.wait(), 5)
        self.saved_drawn.set()
        await self.restore_gauges()

    async def restore_gauges(self) -> None:
        """The gauges (ctx, cache, cost) of the session as saved, before any new request:
        from its request records (the core's cache report)."""
        runner = self.runner
        try:
            report = await asyncio.to_thread(runner.cache_report)
        except Exception:  # a bad record file: the gauges stay empty, /cache says why
            log.warning("cannot read the saved session's usage", exc_info=True)
            return
        gauges = report.gauges() if report is not None else None
        if runner is self.runner and gauges is not None and self.status.state.prompt_tokens == 0:
            self.status.restore_usage(gauges)

    def on_unmount(self) -> None:
        """The app is closing: remember the session for the line printed after it."""
        session_id = self.runner.session_id
        if session_id and not session_id.startswith("("):  # "(new session)": nothing saved
            self.app.session_id = session_id  # type: ignore[attr-defined]

    # ---- modal overlays hide the composer --------------------------------
    def on_screen_suspend(self) -> None:
        self.close_menu()
        # Kept while a dialog lets the keys typed go on into it (Overlay.typing_through).
        self.composer.display = bool(getattr(self.app.screen, "typing_through", False))
        self._drop_mode_toast()  # it would be drawn over the dialog's text

    def on_screen_resume(self) -> None:
        self.make_room(0)
        self.composer.display = True
        self.composer.focus()

    def make_room(self, rows: int) -> None:
        """A dialog docked at the bottom covers ``rows``: the transcript ends above
        it, so the lines the user decides about stay in view (0: no dialog)."""
        room = self.query_one("#dialog-room")
        cover = max(0, rows - self.status.outer_size.height)
        room.styles.height = cover
        room.display = cover > 0
        if not self.transcript.reading_above:  # the end stays in view
            self.transcript.call_after_refresh(self.transcript.follow)
        # Once laid out anew, the transcript checks that again (Transcript.on_resize).

    # ---- status ----------------------------------------------------------
    @property
    def rendering(self) -> bool:
        """The last answer is still being painted (it may lag behind a fast stream)."""
        blocks = self.transcript.blocks
        return bool(blocks) and bool(getattr(blocks[-1], "rendering", False))

    def refresh_status(self) -> None:
        model = self.runner.model
        state = self.status.state
        # Before any request, a model without prices costs "unknown", not $0.0000;
        # after one, the requests' own prices say it (StatusBar.add_usage).
        unpriced = state.unpriced if state.prompt_tokens else not self.services.priced(model)
        self.status.update_state(
            mode=self.services.permission_mode,
            model=model,
            unpriced=unpriced,
            effort=self.runner.effort,
            context_window=self.services.context_window,
            queued=len(self.queue),
            starting=not self.services.is_ready,
        )

    def _tick(self) -> None:
        animate = self.app.animation_level != "none"
        frame = self.status.state.frame + 1 if animate else 0
        left = self.runner.budget_left()
        self.status.update_state(now=self.services.clock(), frame=frame, budget_left=left)

    def _set_busy(self, busy: bool) -> None:
        if busy != self.busy:
            if busy:
                self._busy_started = time.monotonic()
            else:
                self._notify_turn_end(time.monotonic() - self._busy_started)
        self.busy = busy
        self.composer.busy = busy
        now = self.services.clock()
        self.status.update_state(busy_since=now if busy else None, now=now, hint="")
        if busy:
            self._ticker.resume()
        else:
            self._ticker.pause()

    def _notify_turn_end(self, seconds: float) -> None:
        after = self.services.notify_after
        if after is not None and seconds >= after:
            from reasonix_tui.notify import notify

            notify(self.app, "Reasonix", f"the turn finished after {fmt.duration(seconds)}")

    async def notice(self, text: str, level: NoticeLevel = "info") -> None:
        await self.transcript.add(NoticeBlock(text, level))

    async def welcome(self) -> None:
        workspace = str(self.services.workspace)
        body = Content.assemble(
            ("Reasonix", "bold $text-primary"),
            ("  ·  ", "$text-muted"),
            (workspace, "$text"),
            ("\nType a request and press Enter.  ", "$text-muted"),
            ("/", "bold"),
            (" commands  ·  ", "$text-muted"),
            ("@", "bold"),
            (" files  ·  ", "$text-muted"),
            ("Shift+Tab", "bold"),
            (" permission mode", "$text-muted"),
        )
        await self.transcript.add(Static(body, classes="welcome"))

    async def warn_if_idle(self) -> None:
        """A resumed session idle longer than the provider keeps its cache: say
        that its first request will miss, and what that costs."""
        preview = self.runner.idle_preview()
        if preview is not None:
            await self.notice(idle_text(preview), "warning")

    async def on_status_bar_cache_clicked(self, message: StatusBar.CacheClicked) -> None:
        await show_cache(self, "")

    async def continue_session(self, session_id: str) -> bool:
        """Switch to saved session ``session_id`` (``/resume``, a chat rewind, a fork)."""
        try:
            runner = self.services.resume_runner(session_id, self.approver)
        except (KeyError, OSError, ValueError) as exc:
            await self.notice(f"Could not resume {session_id}: {exc}", "error")
            return False
        self.cancel_turn()
        self.queue.clear()
        self.runner = runner
        await self.transcript.clear()
        self.status.reset_usage()
        self.refresh_status()
        await self.restore_gauges()  # a rewind or /resume: that session's figures
        return True

    # ---- input -----------------------------------------------------------
    async def on_composer_paste_problem(self, message: Composer.PasteProblem) -> None:
        await self.notice(message.text, "warning")

    async def on_composer_submitted(self, message: Composer.Submitted) -> None:
        self.ctrl_c_armed = False
        self.status.update_state(hint="")
        text = message.text
        if self.prompt_history is not None:
            self.prompt_history.append(text)
        if self.busy and not runs_while_busy(self.registry, text):
            self.queue.append(text)
            self.refresh_status()
            return
        await self.handle_input(text)

    def _refresh_mcp_commands(self) -> None:
        """MCP prompts join the registry as servers become ready, and skills once the
        services are built (cheap to repeat)."""
        extra = [
            SlashCommand(name=name, description=description, argument_hint=hint, kind="mcp")
            for name, description, hint in self.services.mcp_prompts()
        ]
        skills = self.services.skills
        if skills is not None:
            extra += [
                SlashCommand(name=name, description=description, argument_hint=hint, kind="skill")
                for name, description, hint in skills.commands()
            ]
        base = [c for c in self.registry.all() if c.kind not in ("mcp", "skill")]
        self.registry = CommandRegistry(base, self.registry.problems).with_extra(extra)

    async def announce_skills(self) -> None:
        """Once: skill files skipped or warned about, hidden duplicates."""
        skills = self.services.skills
        if skills is None or self._skills_announced:
            return
        self._skills_announced = True
        for text in skills.notices():
            await self.notice(text, "warning")

    async def handle_input(self, text: str) -> None:
        if split_command(text) is not None:
            # A command's arguments get the pastes whole (it renders its own prompt).
            await self.run_slash(full_text(text).strip())
        else:
            await self.start_turn(text, text)

    async def run_slash(self, text: str, waited_for_mcp: bool = False) -> None:
        self._refresh_mcp_commands()
        command, name, args = self.registry.parse(text)
        if command is None and name.startswith("mcp__") and not waited_for_mcp:
            # Its server may still be starting: wait for it, as `reasonix run` does.
            self.run_after_mcp_start(text)
            return
        if command is None:
            await self.notice(f"Unknown command /{name}. /help lists commands.", "warning")
            return
        if command.kind in ("custom", "skill", "mcp"):
            # The core's expander renders all three, as it does for `reasonix run`.
            try:
                rendered = await self.expander().expand_command(command.name, args)
            except (CommandError, SkillError) as exc:
                await self.notice(str(exc), "error")
                return
            if rendered is not None:
                provenance = self.expander().provenance(command.name, args)
                await self.start_turn(text, rendered, provenance)
                return
            if command.kind == "skill":
                await self.notice(f"/{command.name} is no longer a skill.", "warning")
                return
        if not isinstance(command, BuiltinCommand):
            await self.notice(f"/{command.name} is not available yet.", "warning")
            return
        await command.handler(self, args)

    @work(group="mcp-wait", exit_on_error=False)
    async def run_after_mcp_start(self, text: str) -> None:
        """An MCP prompt typed before its server is ready runs once the servers have
        started: the prompt shows at once as a pending user message, and the status
        bar says "starting…" (not "ready") with why."""
        pending = UserBlock(text)
        pending.add_class("-pending")
        await self.transcript.add(pending)
        was_starting = self.status.state.starting
        self.status.update_state(starting=True, hint="waiting for MCP servers to start…")
        try:
            await self.services.wait_mcp()
        finally:
            self.status.update_state(starting=was_starting, hint="")
            # The turn (or the queue) shows the prompt from here: no second copy.
            await pending.remove()
        if self.busy:  # a turn started meanwhile: the prompt queues behind it
            self.queue.append(text)
            self.refresh_status()
            return
        await self.run_slash(text, waited_for_mcp=True)

    def expander(self) -> PromptExpander:
        """The core's expander (the same as ``reasonix run``'s) over this session's
        custom commands and services."""
        return PromptExpander(
            self.services.workspace,
            commands=[c.custom for c in self.registry.all("custom") if c.custom is not None],
            skills=self.services.skills,
            mcp_prompt=self.services.render_mcp_prompt,
            mcp_resources=self.services.expand_mcp_resources,
            # Looked up in the worker thread: it may wait for the services.
            denied=lambda path: self.services.mention_refused(path),
            approve_outside=self._approve_outside_mention,
        )

    async def _approve_outside_mention(self, label: str, author: str) -> bool:
        """Ask before a command file's ``@label`` reads outside the workspace."""
        from reasonix_core.permission.approver import ApprovalDecision, ApprovalRequest

        request = ApprovalRequest(
            tool="read_file",
            arguments={"path": label},
            call_id="",
            read_only=True,
            scope="",
            summary=f"Attach @{label}, outside the workspace, named by {author}",
        )
        answer = await self.approver.decide(request)
        return answer in (ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_SESSION)

    async def start_turn(
        self, display: str, prompt: str, provenance: Provenance | None = None
    ) -> None:
        await self.transcript.add(UserBlock(display))
        self.transcript.select(None)
        self.transcript.follow()  # a new prompt shows its turn, wherever the view was
        self._set_busy(True)
        self.run_turn(prompt, provenance)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, prompt: str, provenance: Provenance | None = None) -> None:
        # @ references are read from what the user typed, not from a large paste
        # (a pasted log's "@name" attaches nothing); the paste then takes its chip's
        # place, whole: the expansion only appends after the typed text.
        expanded = await self.expander().expand_references(prompt, provenance)
        for text in expanded.notices:
            await self.notice(text, "warning")
        images = (*self.composer.images_in(prompt), *expanded.images)  # Ctrl+V chips
        sent, pasted = expanded.text, ()
        if isinstance(prompt, PromptText) and prompt.pastes:
            typed, pasted = prompt.expanded()
            sent = typed + expanded.text[len(prompt) :]
        meta = TurnMeta(images=images, pasted=pasted) if images or pasted else None
        await self.controller.drive(self.runner.run(sent, meta))

    def run_events(self, events: AsyncIterator[Event]) -> None:
        """Drive a non-prompt stream (e.g. ``/compact``) as a turn."""
        self._set_busy(True)
        self._drive_events(events)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _drive_events(self, events: AsyncIterator[Event]) -> None:
        await self.controller.drive(events)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "turn" or not event.worker.is_finished:
            return
        if event.state is WorkerState.ERROR:
            await self.notice(f"Internal error: {event.worker.error}", "error")
        if any(w.group == "turn" and not w.is_finished for w in self.workers):
            return
        self._set_busy(False)
        self.refresh_status()  # the turn may have changed the mode (an approved plan)
        if self.queue and self._hold_queue:
            await self._return_queue()
        self._hold_queue = False
        if self.queue:
            text = self.queue.pop(0)
            self.refresh_status()
            await self.handle_input(text)

    def cancel_turn(self) -> None:
        self.workers.cancel_group(self, "turn")

    def cancel_by_user(self) -> None:
        """Esc / Ctrl+C: cancel the turn; the prompts queued behind it do not run."""
        self._hold_queue = bool(self.queue)
        self.cancel_turn()

    async def _return_queue(self) -> None:
        """Put the queued prompts back in the composer, to edit or send."""
        held, self.queue = self.queue, []
        self.refresh_status()
        draft = self.composer.prompt()
        self.composer.set_text(join([*held, *([draft] if draft.strip() else [])]))
        count = f"{len(held)} queued prompt{'s' if len(held) > 1 else ''}"
        await self.notice(f"{count} put back in the prompt box: edit, then Enter sends.")

    # ---- keys ------------------------------------------------------------
    def action_escape(self) -> None:
        if self.menu.is_open:
            self._menu_dismissed_text = self.composer.text
            self.close_menu()
        elif self.busy:
            self.cancel_by_user()
        elif not self.composer.text:
            # Esc Esc on an empty composer: /rewind (any keystroke between disarms).
            if self.escape_armed:
                self.escape_armed = False
                self.status.update_state(hint="")
                open_rewind(self)
            else:
                self.escape_armed = True
                self.status.update_state(hint="Press Esc again to rewind")

    def action_interrupt(self) -> None:
        if self._copy_selection():
            return
        if self.busy:
            self.cancel_by_user()
        elif self.composer.text:
            self.composer.clear()
        elif self.ctrl_c_armed:
            self.app.exit(0)
        else:
            self.ctrl_c_armed = True
            self.status.update_state(hint="Press Ctrl+C again to quit")

    def _copy_selection(self) -> bool:
        """Ctrl+C with text selected (in the transcript or the composer) copies it, as in
        any terminal program, instead of interrupting."""
        text = self.get_selected_text() or self.composer.selected_text
        if not text:
            return False
        self.app.copy_to_clipboard(text)  # OSC 52: the terminal puts it on the clipboard
        self.clear_selection()
        self.ctrl_c_armed = False
        self.status.update_state(hint=f"Copied {len(text):,} characters")
        return True

    def action_quit(self) -> None:
        """Ctrl+D quits at once with an empty composer; with a draft, on a second press."""
        if self.composer.text.strip() and not self.ctrl_d_armed:
            self.ctrl_d_armed = True
            self.status.update_state(hint="Press Ctrl+D again to quit and lose the draft")
            return
        self.app.exit(0)

    def action_select_block(self, step: int) -> None:
        """Alt+Up/Alt+Down: move among the blocks Ctrl+O can expand."""
        if self.transcript.select_expandable(step) is None:
            self.status.update_state(hint="Nothing to expand")

    async def action_toggle_details(self) -> None:
        """Expand or collapse the selected block (Alt+Up/Down), else the latest reasoning
        block or tool card with more to show."""
        block = self.transcript.selected or self.transcript.latest_expandable()
        if block is None:
            self.status.update_state(hint="Nothing to expand")
            return
        toggled = block.toggle()  # type: ignore[attr-defined]
        if inspect.isawaitable(toggled):
            await toggled
        if getattr(block, "expanded", False):
            # Show the expanded block from its top (scrolling back down re-anchors).
            self.transcript.reveal(block)
            self.call_after_refresh(
                self.transcript.scroll_to_widget, block, animate=False, top=True
            )

    def action_cycle_mode(self) -> None:
        modes = list(self.services.permission_modes)
        current = self.services.permission_mode
        index = modes.index(current) if current in modes else -1
        mode = modes[(index + 1) % len(modes)]
        self.services.permission_mode = mode
        self.refresh_status()
        from reasonix_core.permission_modes import PLAN_MODE, PLAN_MODE_SUMMARY, PRESET_SUMMARY

        summary = PLAN_MODE_SUMMARY if mode == PLAN_MODE else PRESET_SUMMARY.get(mode, mode)
        explanation = f"{mode}: {summary}"
        self.status.update_state(hint=explanation)
        self._mode_hint = explanation
        self.set_timer(MODE_HINT_SECONDS, lambda: self._clear_mode_hint(explanation))
        # The hint goes at the next keystroke or after MODE_HINT_SECONDS; the toast says it a little longer, once
        # the keys settle: Shift+Tab pressed twice in a row shows one toast, the mode
        # reached (a toast cleared in the frame the last one is mounted would stay).
        if self._mode_toast is not None:
            self._mode_toast.stop()
        self._mode_toast = self.set_timer(MODE_TOAST_DELAY, lambda: self._toast_mode(explanation))

    def _clear_mode_hint(self, explanation: str | None = None) -> None:
        """Clear the mode hint (only ``explanation``'s, when given: a later one stays)."""
        if self._mode_hint and explanation in (None, self._mode_hint):
            if self.status.state.hint == self._mode_hint:  # not another hint since
                self.status.update_state(hint="")
            self._mode_hint = ""

    def _drop_mode_toast(self) -> None:
        """A dialog opened: the Shift+Tab toast (shown or on its way) goes."""
        if self._mode_toast is not None:
            self._mode_toast.stop()
            self._mode_toast = None
        if time.monotonic() < self._mode_toast_until:
            self.app.clear_notifications()
            self._mode_toast_until = 0.0

    def _toast_mode(self, explanation: str) -> None:
        # A new mode's toast replaces the last one's rather than stacking on it.
        if time.monotonic() < self._mode_toast_until:
            self.app.clear_notifications()
        self._mode_toast_until = time.monotonic() + MODE_TOAST_SECONDS
        self.notify(explanation, title="Mode", timeout=MODE_TOAST_SECONDS)

    # ---- completion menu ---------------------------------------------------
    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.ctrl_c_armed = self.ctrl_d_armed = False
        self._clear_mode_hint()
        if self.escape_armed:
            self.escape_armed = False
            self.status.update_state(hint="")
        self.update_menu()

    def update_menu(self) -> None:
        composer = self.composer
        text = composer.text
        if text != self._menu_dismissed_text:
            self._menu_dismissed_text = None
        else:
            return
        self._refresh_mcp_commands()
        items = slash_items(self.registry, text)
        if items is not None:
            self.open_menu("slash", items)
            return
        row, column = composer.cursor_location
        line = composer.document.get_line(row)[:column]
        found = mention_at_cursor(line)
        if found is not None:
            self.open_menu("mention", mention_items(self.services.workspace, found[1]))
            return
        self.close_menu()

    def open_menu(self, kind: str, items: list) -> None:  # type: ignore[type-arg]
        self.menu.open(kind, items)  # type: ignore[arg-type]
        self.composer.menu_open = self.menu.is_open

    def close_menu(self) -> None:
        self.menu.close()
        self.composer.menu_open = False

    def on_composer_menu_key_pressed(self, message: Composer.MenuKeyPressed) -> None:
        if not self.menu.is_open:
            # The menu closed after the key was pressed: the text changed under it (a
            # space typed just before Enter was still queued here when the composer
            # read its flag). The key is the composer's again, so Enter is not lost.
            self.composer.menu_open = False
            if message.key == "enter":
                self.composer.action_submit()
            return
        if message.key in ("up", "down"):
            self.menu.move(-1 if message.key == "up" else 1)
            return
        item, kind = self.menu.selected, self.menu.kind
        if item is None:
            self.close_menu()
            return
        composer = self.composer
        if kind == "slash":
            command = self.registry.get(item.value)
            self.close_menu()
            composer.set_text(f"/{item.value} ")
            if message.key == "enter" and command is not None and not command.takes_arguments:
                composer.action_submit()
            return
        row, column = composer.cursor_location
        found = mention_at_cursor(composer.document.get_line(row)[:column])
        if found is None:
            self.close_menu()
            return
        insert = "@" + item.value + ("" if item.descend else " ")
        self.close_menu()
        composer.replace(insert, (row, found[0]), (row, column))
