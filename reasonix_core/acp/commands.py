"""The slash commands an ACP client offers (``available_commands_update``): the
session's built-ins (``reasonix_core.command.builtin``: /compact, /effort,
/status, /plan, /goal), the custom commands and the skills a user may type. The
built-ins run on the session (``session_commands.py``), the rest through the
session's expander exactly as the terminal app's input. The terminal app's
screen commands (``/model``'s picker, ``/rewind``...) are not offered: model and
effort are config options."""

from __future__ import annotations

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from reasonix_core.command.builtin import SESSION_COMMANDS
from reasonix_core.session.core import Session


def available_commands(session: Session) -> list[AvailableCommand]:
    from reasonix_core.command.custom import load_custom_commands

    commands, _problems = load_custom_commands(session.workspace, session.home)
    offered: dict[str, AvailableCommand] = {}
    for name, description, hint in session.skills.commands():
        offered[name] = _command(name, description or f"the {name} skill", hint)
    for command in commands:  # a custom command wins a clash, as in the expander
        offered[command.name] = _command(
            command.name, command.description or f"/{command.name}", command.argument_hint
        )
    for builtin in SESSION_COMMANDS:  # a built-in wins, as in the terminal app
        offered[builtin.name] = _command(builtin.name, builtin.description, builtin.argument_hint)
    return [offered[name] for name in sorted(offered)]


def _command(name: str, description: str, hint: str) -> AvailableCommand:
    return AvailableCommand(
        name=name,
        description=description,
        input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
    )
