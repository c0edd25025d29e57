"""The session screen's built-in slash commands: the one table that names each.

Every row gives a command's name, aliases, help text, argument hint, handler and
whether it may run while a turn runs. Dispatch, ``/help`` and the ``/`` menu all
read these rows (through :class:`~reasonix_tui.commands.CommandRegistry`); the
order here is the order ``/help`` and the menu show.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reasonix_core.command.builtin import COMPACT, EFFORT, GOAL, PLAN, STATUS
from reasonix_tui.commands import CommandRegistry, SlashCommand
from reasonix_tui.screens import mode_commands as modes
from reasonix_tui.screens import session_commands as session

if TYPE_CHECKING:
    from reasonix_tui.screens.session_host import SessionHost

Handler = Callable[["SessionHost", str], Awaitable[None]]


def never(args: str) -> bool:
    return False


def always(args: str) -> bool:
    return True


def without_arguments(args: str) -> bool:
    """``/effort`` alone only shows the level."""
    return not args


def goal_records(args: str) -> bool:
    """The goal's records are safe between two rounds; ``/goal pause`` stops the
    driver's next admission while a round runs."""
    return args.strip() in ("status", "pause", "clear")


@dataclass(frozen=True, slots=True, kw_only=True)
class BuiltinCommand(SlashCommand):
    handler: Handler
    # Given its arguments, whether it runs at once while a turn runs (else it is queued).
    runs_while_busy: Callable[[str], bool] = never


BUILTIN_COMMANDS: tuple[BuiltinCommand, ...] = (
    BuiltinCommand(
        name="help",
        description="Show commands and keys",
        handler=session.show_help,
        runs_while_busy=always,
    ),
    BuiltinCommand(name="new", description="Start a fresh session", handler=session.new_session),
    BuiltinCommand(
        name="clear",
        description="Discard the conversation (asks first)",
        handler=session.clear_session,
    ),
    # No argument hint: Enter in the menu runs it; words after it steer the summary.
    BuiltinCommand(name=COMPACT.name, description=COMPACT.description, handler=session.compact),
    BuiltinCommand(
        name=EFFORT.name,
        description=EFFORT.description,
        argument_hint=EFFORT.argument_hint,
        handler=session.effort,
        runs_while_busy=without_arguments,
    ),
    BuiltinCommand(name="model", description="Pick the model", handler=session.pick_model),
    BuiltinCommand(
        name="mcp",
        description="MCP server status",
        handler=session.show_mcp,
        runs_while_busy=always,
    ),
    BuiltinCommand(name="resume", description="Resume a saved session", handler=session.resume),
    BuiltinCommand(
        name="fork",
        description="Continue in a copy of this session",
        handler=session.fork_session,
    ),
    BuiltinCommand(
        name="rewind",
        description="Put code and/or conversation back to a turn",
        handler=session.rewind,
    ),
    BuiltinCommand(
        name=STATUS.name,
        description=STATUS.description,
        handler=session.show_status,
        runs_while_busy=always,
    ),
    BuiltinCommand(
        name="cache",
        description="Prompt cache: hits, breaks and what they cost",
        handler=session.show_cache,
        runs_while_busy=always,
    ),
    BuiltinCommand(
        name="quit",
        description="Leave Reasonix",
        aliases=("exit",),
        handler=session.quit_app,
        runs_while_busy=always,
    ),
    BuiltinCommand(
        name="login",
        description="Set or replace the provider's API key",
        aliases=("key",),
        handler=session.login,
    ),
    BuiltinCommand(
        name="copy",
        description="Copy the last answer to the clipboard",
        handler=session.copy_answer,
        runs_while_busy=always,
    ),
    BuiltinCommand(name=PLAN.name, description=PLAN.description, handler=modes.review_plan),
    BuiltinCommand(
        name=GOAL.name,
        description=GOAL.description,
        argument_hint=GOAL.argument_hint,
        handler=modes.goal_command,
        runs_while_busy=goal_records,
    ),
    BuiltinCommand(
        name="hooks",
        description="Configured hooks and the files they come from",
        handler=session.show_hooks,
        runs_while_busy=always,
    ),
)


def runs_while_busy(registry: CommandRegistry, text: str) -> bool:
    """Whether ``text`` is a built-in command that runs at once while a turn runs."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return False
    command, _, args = registry.parse(stripped)
    return isinstance(command, BuiltinCommand) and command.runs_while_busy(args)
