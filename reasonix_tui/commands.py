"""The one slash-command registry shared by completion, ``/help`` and execution.

Built-ins are declared with their handlers in
:mod:`reasonix_tui.screens.builtin_commands` and passed in; custom Markdown commands come from
:mod:`reasonix_core.command.custom`; MCP prompts (``/mcp__server__prompt``)
and skills (``/<skill>``) join through :meth:`CommandRegistry.with_extra` once
the services know them; neither shadows a built-in or custom command.
No Textual import: this module is plain data.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reasonix_core.command.custom import (
    CustomCommand,
    LoadProblem,
    command_name,
    load_custom_commands,
)

CommandKind = Literal["builtin", "custom", "mcp", "skill"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SlashCommand:
    name: str  # without "/"
    description: str
    argument_hint: str = ""
    kind: CommandKind = "builtin"
    aliases: tuple[str, ...] = ()
    custom: CustomCommand | None = None

    @property
    def takes_arguments(self) -> bool:
        return bool(self.argument_hint)


class CommandRegistry:
    def __init__(
        self,
        commands: Iterable[SlashCommand],
        problems: Iterable[LoadProblem] = (),
    ) -> None:
        self._commands: dict[str, SlashCommand] = {}
        self._aliases: dict[str, str] = {}
        for command in commands:
            if command.name in self._commands and command.kind != "builtin":
                continue
            self._commands.setdefault(command.name, command)
            for alias in command.aliases:
                self._aliases[alias] = command.name
        self.problems = list(problems)

    @classmethod
    def load(
        cls,
        builtins: Iterable[SlashCommand],
        workspace: Path | None,
        config_home: Path | None,
    ) -> CommandRegistry:
        """Built-ins plus custom commands; a custom command never shadows a built-in."""
        custom, problems = load_custom_commands(workspace, config_home)
        problems = list(problems)
        entries = list(builtins)
        builtin_names = {c.name for c in entries}
        for command in custom:
            if command.name in builtin_names:
                problems.append(
                    LoadProblem(path=command.source, message=f"/{command.name} is a built-in")
                )
                continue
            entries.append(
                SlashCommand(
                    name=command.name,
                    description=command.description or f"({command.scope} command)",
                    argument_hint=command.argument_hint,
                    kind="custom",
                    custom=command,
                )
            )
        return cls(entries, problems)

    def with_extra(self, commands: Iterable[SlashCommand]) -> CommandRegistry:
        return CommandRegistry([*self._commands.values(), *commands], self.problems)

    def all(self, kind: CommandKind | None = None) -> list[SlashCommand]:
        return [c for c in self._commands.values() if kind is None or c.kind == kind]

    def get(self, name: str) -> SlashCommand | None:
        name = self._aliases.get(name, name)
        found = self._commands.get(name)
        if found is not None:
            return found
        # Codex's /prompts:NAME: the custom command /NAME (never a built-in).
        custom = self._commands.get(command_name(name, self._is_custom))
        return custom if custom is not None and custom.kind == "custom" else None

    def _is_custom(self, name: str) -> bool:
        command = self._commands.get(name)
        return command is not None and command.kind == "custom"

    def match(self, query: str) -> list[SlashCommand]:
        """Commands whose name starts with ``query``, then those containing it."""
        query = query.lower()
        prefix = [c for c in self._commands.values() if c.name.lower().startswith(query)]
        inner = [
            c
            for c in self._commands.values()
            if query and query in c.name.lower() and c not in prefix
        ]
        return prefix + inner

    def parse(self, text: str) -> tuple[SlashCommand | None, str, str]:
        """Split ``/name args`` into (command or None, name, args)."""
        head, _, args = text.strip().removeprefix("/").partition(" ")
        return self.get(head), head, args.strip()
