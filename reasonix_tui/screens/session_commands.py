# pyright: reportGeneralTypeIssues=false
# (until the mixins stop annotating self as SessionScreen, issue 24 item 6)
"""Slash-command execution for the session screen (a mixin over SessionScreen)."""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from reasonix_core.errors import CommandError, SkillError
from reasonix_tui import format as fmt
from reasonix_tui.screens.cache import CacheScreen, idle_text, rebill_text
from reasonix_tui.screens.confirm import ConfirmScreen
from reasonix_tui.screens.help import HelpScreen
from reasonix_tui.screens.mcp_status import McpStatusScreen
from reasonix_tui.screens.picker import PickerItem, PickerScreen
from reasonix_tui.screens.rewind import open_rewind

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from reasonix_tui.screens.session import SessionScreen
    from reasonix_tui.services import AppServices
    from reasonix_tui.widgets.status_bar import StatusBar

log = logging.getLogger(__name__)

# Commands that are safe while a turn runs; everything else is queued.
RUNS_WHILE_BUSY = frozenset({"help", "status", "mcp", "cache", "quit", "exit", "copy"})
# /goal pause stops the driver's next admission while a round runs.
GOAL_WHILE_BUSY = frozenset({"status", "pause", "clear"})


class SessionCommands:
    """``/name`` handlers: ``cmd_<name>(args)``; custom commands become user turns."""

    def runs_while_busy(self: SessionScreen, text: str) -> bool:
        stripped = text.strip()
        if not stripped.startswith("/"):
            return False
        command, _, args = self.registry.parse(stripped)
        if command is None:
            return False
        if command.name == "goal":  # the goal's records: safe between two rounds
            return args.strip() in GOAL_WHILE_BUSY
        return command.name in RUNS_WHILE_BUSY or (command.name == "effort" and not args)

    async def run_slash(self: SessionScreen, text: str) -> None:
        self._refresh_mcp_commands()
        command, name, args = self.registry.parse(text)
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
                await self.start_turn(text, rendered)
                return
            if command.kind == "skill":
                await self.notice(f"/{command.name} is no longer a skill.", "warning")
                return
        handler = getattr(self, f"cmd_{command.name}", None)
        if handler is None:
            await self.notice(f"/{command.name} is not available yet.", "warning")
            return
        await handler(args)

    async def welcome(self: SessionScreen) -> None:
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

    async def _fresh_session(self: SessionScreen, note: str) -> None:
        self.cancel_turn()
        self.queue.clear()
        self.runner = self.services.new_runner(self.approver)
        await self.transcript.clear()
        self.status.reset_usage()
        self.refresh_status()
        await self.welcome()
        await self.notice(note)

    async def cmd_help(self: SessionScreen, args: str) -> None:
        self.app.push_screen(HelpScreen(self.registry))

    async def cmd_new(self: SessionScreen, args: str) -> None:
        await self._fresh_session("New session started.")

    async def cmd_clear(self: SessionScreen, args: str) -> None:
        async def confirmed(ok: bool | None) -> None:
            if ok:
                await self._fresh_session("Conversation cleared.")

        self.app.push_screen(
            ConfirmScreen(
                "Clear the conversation?",
                "A new, empty session starts. This one stays saved (/resume reopens it); "
                "memory is untouched.",
            ),
            confirmed,
        )

    async def cmd_compact(self: SessionScreen, args: str) -> None:
        async def compact() -> None:
            self.run_events(self.services.compact(self.runner, args))

        await self._unless_cache_loss("compact", "", "Compact the conversation now?", compact)

    async def _unless_cache_loss(
        self: SessionScreen,
        change: str,
        target: str,
        title: str,
        act: Callable[[], Awaitable[None]],
    ) -> None:
        """Do ``act`` at once when nothing cached would be lost; otherwise first ask,
        saying how many cached tokens it re-bills and what that costs now."""
        preview = self.services.rebill_preview(self.runner, change, target)
        if preview is None:
            await act()
            return

        async def confirmed(ok: bool | None) -> None:
            if ok:
                await act()

        body = f"This breaks the prompt cache: {rebill_text(preview)}."
        self.app.push_screen(ConfirmScreen(title, body), confirmed)

    async def warn_if_idle(self: SessionScreen) -> None:
        """A resumed session idle longer than the provider keeps its cache: say
        that its first request will miss, and what that costs."""
        preview = self.services.idle_preview(self.runner)
        if preview is not None:
            await self.notice(idle_text(preview), "warning")

    async def cmd_cache(self: SessionScreen, args: str) -> None:
        self.app.push_screen(CacheScreen(self.services.cache_report(self.runner)))

    async def on_status_bar_cache_clicked(
        self: SessionScreen, message: StatusBar.CacheClicked
    ) -> None:
        await self.cmd_cache("")

    async def cmd_effort(self: SessionScreen, args: str) -> None:
        levels = self.services.efforts()
        if not args:
            choices = ", ".join(levels) if levels else "not adjustable for this model"
            await self.notice(f"Reasoning effort: {self.runner.effort} (levels: {choices})")
            return

        async def switch() -> None:
            try:
                self.services.set_effort(args)
            except ValueError as exc:
                await self.notice(str(exc), "warning")
                return
            self.refresh_status()
            await self.notice(f"Reasoning effort set to {args}.")

        if args == self.runner.effort or args not in levels:
            await switch()  # no change, or an error to show: nothing to confirm
            return
        await self._unless_cache_loss("effort", args, f"Set reasoning effort to {args}?", switch)

    async def cmd_model(self: SessionScreen, args: str) -> None:
        current = _current_model(self.services.models(), self.runner.model)
        discovered: list[str] = []  # what the probe added to the picker

        async def picked(model: str | None) -> None:
            # A model picked earlier from the probe's list is named by it, not the config.
            now = _current_model([*self.services.models(), *discovered], self.runner.model)
            if not model or model in (self.runner.model, now):
                if model:
                    await self.notice(f"Already using {self.runner.model}.")
                return

            async def switch() -> None:
                try:
                    self.services.set_model(model)
                except ValueError as exc:
                    await self.notice(str(exc), "warning")
                    return
                self.refresh_status()
                unpriced = (
                    ""
                    if self.services.priced(self.runner.model)
                    else "; no price is known for it, so the cost shows as unknown ($?)"
                )
                await self.notice(
                    f"Model switched to {model} (the prompt cache restarts){unpriced}."
                )

            await self._unless_cache_loss("model", model, f"Switch the model to {model}?", switch)

        if args:
            await picked(args)
            return
        items = [PickerItem(value=m, label=m) for m in self.services.models()]
        picker = PickerScreen(
            "Model",
            items,
            current=current,
            more=functools.partial(self._discovered_models, discovered),
            note="Asking the provider for its models…",
        )
        self.app.push_screen(picker, picked)

    async def _discovered_models(
        self: SessionScreen, discovered: list[str]
    ) -> tuple[list[PickerItem], str]:
        """The provider's ``/models`` for the open picker: ids the config does not
        list, marked (and added to ``discovered``), or a muted line saying why there
        are none."""
        try:
            probe = await self.services.probe_models()
        except Exception as exc:  # the services promise never to raise: still no crash
            log.warning("the model probe failed: %s", type(exc).__name__)
            return [], f"couldn't list models: {type(exc).__name__}"
        if probe is None:
            return [], ""
        if probe.error:
            return [], f"couldn't list models: {probe.error}"
        configured = set(self.services.models())
        found = [m for m in probe.models if m not in configured]
        discovered.extend(found)
        note = f"{len(probe.models)} listed by the provider"
        if found:
            note += f"; {len(found)} not in your config, marked discovered"
        return [PickerItem(value=m, label=m, detail="discovered") for m in found], note

    async def cmd_mcp(self: SessionScreen, args: str) -> None:
        self.app.push_screen(McpStatusScreen(self.services))

    async def continue_session(self: SessionScreen, session_id: str) -> bool:
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
        return True

    async def cmd_rewind(self: SessionScreen, args: str) -> None:
        open_rewind(self)

    async def cmd_resume(self: SessionScreen, args: str) -> None:
        async def picked(session_id: str | None) -> None:
            if session_id and await self.continue_session(session_id):
                self.show_saved_session(f"Resumed session {session_id}.")
                await self.warn_if_idle()

        sessions = self.services.list_sessions()
        items = [
            PickerItem(
                value=s.session_id,
                label=s.title or s.session_id,
                detail=f"{s.updated:%Y-%m-%d %H:%M} · {s.turns} turns",
            )
            for s in sessions
        ]
        self.app.push_screen(
            PickerScreen("Resume a session", items, empty="No saved sessions yet."), picked
        )

    async def cmd_status(self: SessionScreen, args: str) -> None:
        s = self.status.state
        last = "-" if s.last_cache_pct is None else f"{s.last_cache_pct:.0f}%"
        lines = [
            f"session {self.runner.session_id} · {self.services.workspace}",
            f"model {self.runner.model} · effort {self.runner.effort} · mode {s.mode}",
            f"context {fmt.tokens(s.context_tokens)} / {fmt.tokens(s.context_window)}"
            f" ({fmt.percent(s.context_tokens, s.context_window)})"
            + _compaction_note(self.services, s.context_window),
            f"cache last {last} · avg {fmt.percent(s.cache_hit_tokens, s.prompt_tokens)}"
            f" · cost {fmt.cost(s.cost, s.currency, s.unpriced)}",
        ]
        await self.notice("\n  ".join(lines))

    async def cmd_login(self: SessionScreen, args: str) -> None:
        from reasonix_tui.screens.setup import SetupScreen

        async def saved(ok: bool | None) -> None:
            if not ok:
                return
            info = self.services.api_key_info()
            try:  # an open session holds the old key: reopen it with the new one
                runner = self.services.resume_runner(self.runner.session_id, self.approver)
            except (KeyError, OSError, ValueError):
                pass  # not opened yet: it reads the new key when it opens
            else:
                self.runner = runner
            await self.notice(f"API key for {info.provider} saved to {info.stored_in}.")

        self.app.push_screen(SetupScreen(self.services, replacing=True), saved)

    def key_hint(self: SessionScreen, status: int | None) -> str:
        """Where the key comes from, after a 401/402 (shown under the failure)."""
        if status not in (401, 402, 403):
            return ""
        info = self.services.api_key_info()
        where = (
            f"${info.variable} in your environment"
            if info.from_environment
            else f"{info.variable} in {info.stored_in}"
        )
        if status == 402:
            return (
                f"The {info.provider} account behind the key ({where}) has no balance left: "
                "top it up, or /login to use another key."
            )
        return f"The {info.provider} API key comes from {where}; /login replaces it."

    async def cmd_copy(self: SessionScreen, args: str) -> None:
        """The last answer as the model wrote it (Markdown), through OSC 52."""
        from reasonix_tui.widgets.assistant_block import AssistantBlock

        answers = [b for b in self.transcript.blocks if isinstance(b, AssistantBlock)]
        text = answers[-1].text.strip() if answers else ""
        if not text:
            await self.notice("There is no answer to copy yet.")
            return
        self.app.copy_to_clipboard(text)
        self.status.update_state(hint=f"Copied the last answer ({len(text):,} characters)")

    async def cmd_quit(self: SessionScreen, args: str) -> None:
        self.app.exit(0)


def _current_model(names: list[str], model: str) -> str:
    """The picker's name for ``model`` ("provider/model" names end with it)."""
    return next((n for n in names if n == model or n.endswith(f"/{model}")), model)


def _compaction_note(services: AppServices, window: int) -> str:
    """ " · compacts at N% (T tokens)" when the services know the effective ratio."""
    ratio = services.compact_ratio
    if ratio is None or not window:
        return ""
    return f" · compacts at {ratio:.0%} ({fmt.tokens(int(window * ratio))})"
