"""The session screen's built-in slash commands: ``handler(screen, args)`` each.

:mod:`reasonix_tui.screens.builtin_commands` names them, with their help text; the
plan and goal commands are in :mod:`reasonix_tui.screens.mode_commands`.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

from reasonix_tui import format as fmt
from reasonix_tui.screens.cache import CacheScreen, rebill_text
from reasonix_tui.screens.confirm import ConfirmScreen
from reasonix_tui.screens.help import HelpScreen
from reasonix_tui.screens.mcp_status import McpStatusScreen
from reasonix_tui.screens.picker import PickerItem, PickerScreen
from reasonix_tui.screens.rewind import open_rewind

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from reasonix_tui.screens.session_host import SessionHost
    from reasonix_tui.services import AppServices

log = logging.getLogger(__name__)


async def fresh_session(screen: SessionHost, note: str) -> None:
    screen.cancel_turn()
    screen.queue.clear()
    screen.runner = screen.services.new_runner(screen.approver)
    await screen.transcript.clear()
    screen.status.reset_usage()
    screen.refresh_status()
    await screen.welcome()
    await screen.notice(note)


async def show_help(screen: SessionHost, args: str) -> None:
    screen.app.push_screen(HelpScreen(screen.registry))


async def new_session(screen: SessionHost, args: str) -> None:
    await fresh_session(screen, "New session started.")


async def clear_session(screen: SessionHost, args: str) -> None:
    async def confirmed(ok: bool | None) -> None:
        if ok:
            await fresh_session(screen, "Conversation cleared.")

    screen.app.push_screen(
        ConfirmScreen(
            "Clear the conversation?",
            "A new, empty session starts. This one stays saved (/resume reopens it); "
            "memory is untouched.",
        ),
        confirmed,
    )


async def compact(screen: SessionHost, args: str) -> None:
    try:
        nothing = await screen.runner.nothing_to_compact()
    except Exception as exc:  # the session could not start: say why
        await screen.notice(f"/compact: {exc}", "error")
        return
    if nothing:  # no question about a cache nothing would break
        await screen.notice(nothing)
        return

    async def fold() -> None:
        screen.run_events(screen.runner.compact(args))

    await unless_cache_loss(screen, "compact", "", "Compact the conversation now?", fold)


async def unless_cache_loss(
    screen: SessionHost,
    change: str,
    target: str,
    title: str,
    act: Callable[[], Awaitable[None]],
) -> None:
    """Do ``act`` at once when nothing cached would be lost; otherwise first ask,
    saying how many cached tokens it re-bills and what that costs now."""
    preview = screen.runner.rebill_preview(change, target)
    if preview is None:
        await act()
        return

    async def confirmed(ok: bool | None) -> None:
        if ok:
            await act()

    body = f"This breaks the prompt cache: {rebill_text(preview)}."
    screen.app.push_screen(ConfirmScreen(title, body), confirmed)


async def show_cache(screen: SessionHost, args: str) -> None:
    screen.app.push_screen(CacheScreen(screen.runner.cache_report()))


async def effort(screen: SessionHost, args: str) -> None:
    """``/effort LEVEL`` sets it (any name the provider accepts); ``/effort`` alone
    picks from the model's levels, one name each (reasonix_core/efforts.py)."""
    if not args:
        await pick_effort(screen)
        return
    levels = screen.services.efforts()

    async def switch() -> None:
        try:
            screen.services.set_effort(args)
        except ValueError as exc:
            await screen.notice(str(exc), "warning")
            return
        screen.refresh_status()
        await screen.notice(f"Reasoning effort set to {args}.")

    if args == screen.runner.effort or args not in levels:
        await switch()  # no change, or an error to show: nothing to confirm
        return
    await unless_cache_loss(screen, "effort", args, f"Set reasoning effort to {args}?", switch)


async def pick_effort(screen: SessionHost) -> None:
    from reasonix_core.efforts import AUTO, OFF, effort_level

    levels = screen.services.effort_choices()
    if not levels:
        await screen.notice(
            f"{screen.runner.model} has no reasoning-effort setting here: none is sent."
        )
        return
    current = effort_level(screen.runner.effort, levels)
    said = {AUTO: "the provider's default", OFF: "no thinking"}
    items = [
        PickerItem(
            value=level.name,
            label=level.name,
            detail=said.get(level.name)
            or (f"also: {', '.join(level.aliases)}" if level.aliases else ""),
        )
        for level in levels
    ]

    async def picked(level: str | None) -> None:
        if level and level != current:
            await effort(screen, level)

    screen.app.push_screen(
        PickerScreen("Reasoning effort", items, current=current, filtered=False), picked
    )


async def pick_model(screen: SessionHost, args: str) -> None:
    current = _current_model(screen.services.models(), screen.runner.model)
    discovered: list[str] = []  # what the probe added to the picker

    async def picked(model: str | None) -> None:
        # A model picked earlier from the probe's list is named by it, not the config.
        now = _current_model([*screen.services.models(), *discovered], screen.runner.model)
        if not model or model in (screen.runner.model, now):
            if model:
                await screen.notice(f"Already using {screen.runner.model}.")
            return

        async def switch() -> None:
            try:
                screen.services.set_model(model)
            except ValueError as exc:
                await screen.notice(str(exc), "warning")
                return
            screen.refresh_status()
            unpriced = (
                ""
                if screen.services.priced(screen.runner.model)
                else "; no price is known for it, so the cost shows as unknown ($?)"
            )
            await screen.notice(f"Model switched to {model} (the prompt cache restarts){unpriced}.")

        await unless_cache_loss(screen, "model", model, f"Switch the model to {model}?", switch)

    if args:
        await picked(args)
        return
    items = [PickerItem(value=m, label=m) for m in screen.services.models()]
    picker = PickerScreen(
        "Model",
        items,
        current=current,
        more=functools.partial(discovered_models, screen, discovered),
        note="Asking the provider for its models…",
    )
    screen.app.push_screen(picker, picked)


async def discovered_models(
    screen: SessionHost, discovered: list[str]
) -> tuple[list[PickerItem], str]:
    """The provider's ``/models`` for the open picker: ids the config does not
    list, marked (and added to ``discovered``), or a muted line saying why there
    are none."""
    try:
        probe = await screen.services.probe_models()
    except Exception as exc:  # the services promise never to raise: still no crash
        log.warning("the model probe failed: %s", type(exc).__name__)
        return [], f"couldn't list models: {type(exc).__name__}"
    if probe is None:
        return [], ""
    if probe.error:
        return [], f"couldn't list models: {probe.error}"
    configured = set(screen.services.models())
    found = [m for m in probe.models if m not in configured]
    discovered.extend(found)
    note = f"{len(probe.models)} listed by the provider"
    if found:
        note += f"; {len(found)} not in your config, marked discovered"
    return [PickerItem(value=m, label=m, detail="discovered") for m in found], note


async def show_mcp(screen: SessionHost, args: str) -> None:
    """``/mcp``; ``/mcp add …`` / ``remove NAME`` / ``auth NAME`` act on the screen."""
    status = McpStatusScreen(screen.services)
    await screen.app.push_screen(status)
    action, _, rest = args.strip().partition(" ")
    rest = rest.strip()
    if action == "add":
        status.add_server(rest)
    elif action == "remove" and rest:
        status.remove_server(rest)
    elif action in ("auth", "login") and rest:
        status.run_worker(status.authenticate(rest), exclusive=True, group="mcp-login")
    elif action:
        status.notify("usage: /mcp [add NAME URL | add NAME -- CMD ARGS | remove NAME | auth NAME]",
                      severity="error")  # fmt: skip


async def show_hooks(screen: SessionHost, args: str) -> None:
    """Each configured hook (docs/HOOKS.md) with its event, matcher and file; a
    project's that wait for trust are listed as not applied."""
    from reasonix_core.errors import ConfigError
    from reasonix_core.hooks.settings import hooks_listing

    services = screen.services
    try:
        text = hooks_listing(
            services.workspace,
            services.config_home,
            extra=services.settings_files,
        )
    except ConfigError as exc:
        await screen.notice(str(exc), "error")
        return
    await screen.notice(text)


async def rewind(screen: SessionHost, args: str) -> None:
    open_rewind(screen)


async def fork_session(screen: SessionHost, args: str) -> None:
    """``/fork``: a new session copied from this one whole; the screen goes on in it."""
    import anyio.to_thread

    from reasonix_core.errors import ReasonixError
    from reasonix_core.session.fork import fork_saved_session

    original = screen.runner.session_id
    services = screen.services
    try:
        forked = await anyio.to_thread.run_sync(
            fork_saved_session, services.config_home, services.workspace, original
        )
    except (ReasonixError, OSError) as exc:
        await screen.notice(f"Nothing to fork yet ({exc}): send a first prompt.", "warning")
        return
    if await screen.continue_session(forked):
        screen.show_saved_session(
            f"Forked into session {forked}; {original} is unchanged (/resume reopens it)."
        )


async def resume(screen: SessionHost, args: str) -> None:
    async def picked(session_id: str | None) -> None:
        if session_id and await screen.continue_session(session_id):
            screen.show_saved_session(f"Resumed session {session_id}.")
            await screen.warn_if_idle()

    sessions = screen.services.list_sessions()
    items = [
        PickerItem(
            value=s.session_id,
            label=s.title or s.session_id,
            detail=f"{s.updated:%Y-%m-%d %H:%M} · {s.turns} turn{'' if s.turns == 1 else 's'}",
        )
        for s in sessions
    ]
    screen.app.push_screen(
        PickerScreen("Resume a session", items, empty="No saved sessions yet."), picked
    )


def _cost_phrase(money: str) -> str:
    return money if money == fmt.UNKNOWN_COST else f"cost {money}"


async def show_status(screen: SessionHost, args: str) -> None:
    s = screen.status.state
    last = "-" if s.last_cache_pct is None else f"{s.last_cache_pct:.0f}%"
    lines = [
        f"session {screen.runner.session_id} · {screen.services.workspace}",
        f"model {screen.runner.model} · effort {screen.runner.effort} · mode {s.mode}",
        f"context {fmt.tokens(s.context_tokens)} / {fmt.tokens(s.context_window)}"
        f" ({fmt.percent(s.context_tokens, s.context_window)})"
        + _compaction_note(screen.services, s.context_window),
        f"cache last {last} · avg {fmt.percent(s.cache_hit_tokens, s.prompt_tokens)}"
        f" · {_cost_phrase(fmt.cost(s.cost, s.currency, s.unpriced))}",
    ]
    await screen.notice("\n  ".join(lines))


async def login(screen: SessionHost, args: str) -> None:
    from reasonix_tui.screens.setup import LoginScreen

    async def saved(ok: bool | None) -> None:
        if not ok:
            return
        info = screen.services.api_key_info()
        try:  # an open session holds the old key: reopen it with the new one
            runner = screen.services.resume_runner(screen.runner.session_id, screen.approver)
        except (KeyError, OSError, ValueError):
            pass  # not opened yet: it reads the new key when it opens
        else:
            screen.runner = runner
        await screen.notice(f"API key for {info.provider} saved to {info.stored_in}.")

    screen.app.push_screen(LoginScreen(screen.services), saved)


def key_hint(services: AppServices, status: int | None) -> str:
    """Where the key comes from, after a 401/402 (shown under the failure)."""
    if status not in (401, 402, 403):
        return ""
    info = services.api_key_info()
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


async def copy_answer(screen: SessionHost, args: str) -> None:
    """The last answer as the model wrote it (Markdown), through OSC 52."""
    from reasonix_tui.widgets.assistant_block import AssistantBlock

    answers = [b for b in screen.transcript.blocks if isinstance(b, AssistantBlock)]
    text = answers[-1].text.strip() if answers else ""
    if not text:
        await screen.notice("There is no answer to copy yet.")
        return
    screen.app.copy_to_clipboard(text)
    screen.status.update_state(hint=f"Copied the last answer ({len(text):,} characters)")


async def quit_app(screen: SessionHost, args: str) -> None:
    screen.app.exit(0)


def _current_model(names: list[str], model: str) -> str:
    """The picker's name for ``model`` ("provider/model" names end with it)."""
    return next((n for n in names if n == model or n.endswith(f"/{model}")), model)


def _compaction_note(services: AppServices, window: int) -> str:
    """ " · compacts at N% (T tokens)" when the services know the effective ratio."""
    ratio = services.compact_ratio
    if ratio is None or not window:
        return ""
    return f" · compacts at {ratio:.0%} ({fmt.tokens(int(window * ratio))})"
