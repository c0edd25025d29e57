"""The one slash-command registry shared by completion, ``/help`` and execution.

Built-ins are declared here; custom Markdown commands come from
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

from reasonix_core.command.custom import CustomCommand, LoadProblem, load_custom_commands

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


BUILTINS: tuple[SlashCommand, ...] = (
    SlashCommand(name="help", description="Show commands and keys"),
    SlashCommand(name="new", description="Start a fresh session"),
    SlashCommand(name="clear", description="Discard the conversation (asks first)"),
    # No argument hint: Enter in the menu runs it; words after it steer the summary.
    SlashCommand(name="compact", description="Fold the history now (words after it: what to keep)"),
    SlashCommand(
        name="effort", description="Show or set reasoning effort", argument_hint="[level]"
    ),
    SlashCommand(name="model", description="Pick the model"),
    SlashCommand(name="mcp", description="MCP server status"),
    SlashCommand(name="resume", description="Resume a saved session"),
    SlashCommand(name="rewind", description="Put code and/or conversation back to a turn"),
    SlashCommand(name="status", description="Model, effort, mode, usage and cost"),
    SlashCommand(name="cache", description="Prompt cache: hits, breaks and what they cost"),
    SlashCommand(name="quit", description="Leave Reasonix", aliases=("exit",)),
    SlashCommand(
        name="login", description="Set or replace the provider's API key", aliases=("key",)
    ),
    SlashCommand(name="copy", description="Copy the last answer to the clipboard"),
    SlashCommand(name="plan", description="Show the plan waiting for approval (approve it)"),
    SlashCommand(
        name="goal",
        description="Start a goal the app drives in rounds; status, pause, resume, clear",
        argument_hint="<objective> | status | pause | resume | clear",
    ),
)


class CommandRegistry:
    def __init__(
        self,
        commands: Iterable[SlashCommand] = BUILTINS,
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
    def load(cls, workspace: Path | None, config_home: Path | None) -> CommandRegistry:
        """Built-ins plus custom commands; a custom command never shadows a built-in."""
        custom, problems = load_custom_commands(workspace, config_home)
        problems = list(problems)
        entries = list(BUILTINS)
        builtin_names = {c.name for c in BUILTINS}
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
        return self._commands.get(name)

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
