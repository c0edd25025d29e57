"""What a user types, turned into the user turn the model sees: one expander for
the TUI and ``reasonix run``.

In order:

1. a slash command as the first token, ``/name args``: a custom Markdown command
   (:mod:`reasonix_core.command.custom`), a skill (:mod:`reasonix_core.skills`) or an
   MCP prompt (``/mcp__server__prompt``) becomes its rendered text, in that order;
2. ``@path`` references in that text attach files and listings
   (:mod:`reasonix_core.command.mentions`). A reference the user did not type
   comes from a file: one in a skill body is never expanded (docs/SKILLS.md); one
   in a project command or an MCP prompt attaches only inside the workspace
   unless the user approves it (``approve_outside``; a headless run has no one to
   ask, so it is refused with a notice). See :class:`Provenance`;
3. ``@server:uri`` references attach MCP resources.

The surfaces differ only in what they do with a name this expander does not know:
the TUI runs its built-in commands (``/help``, ``/model``...), ``reasonix run``
refuses it. Problems with references are notices; a command that cannot be
expanded raises :class:`~reasonix_core.errors.CommandError`.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from reasonix_core.command.custom import CustomCommand, LoadProblem, command_name
from reasonix_core.command.mentions import (
    expand_mentions,
    find_mentions,
    outside_workspace,
    user_named,
)
from reasonix_core.errors import CommandError

if TYPE_CHECKING:
    from reasonix_core.images import ImagePart
    from reasonix_core.skills import SkillCatalog

#: ``/mcp__server__prompt args`` -> the prompt's text (the MCP host's ``render_prompt``).
PromptRenderer = Callable[[str, str], Awaitable[str]]
#: text -> (text with ``<resource>`` blocks, notices) (``expand_resource_references``).
ResourceExpander = Callable[[str], Awaitable[tuple[str, list[str]]]]
#: (label, author) -> may this reference outside the workspace be attached? (asks the user)
OutsideApprover = Callable[[str, str], Awaitable[bool]]

MCP_PROMPT_PREFIX = "mcp__"


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Whose words a command's text holds: ``typed`` (the arguments) are the
    user's own; every other ``@`` reference in it is ``author``'s, a file's."""

    typed: str
    author: str  # "the project command /review", for notices and the approval
    # A skill body: its references are never expanded.
    skill: bool = False

    def foreign(self, text: str) -> set[str]:
        """The raw ``@`` tokens of ``text`` the user did not name."""
        return {t for t in find_mentions(text) if not user_named(t, self.typed)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Expanded:
    text: str
    notices: tuple[str, ...] = ()
    # The ``@`` image files among the references (sent as images: see TurnMeta).
    images: tuple[ImagePart, ...] = ()


def split_command(text: str) -> tuple[str, str] | None:
    """``(name, arguments)`` when the first token is a slash command, else None.

    ``/usr/bin/env is missing`` starts with a path, not a command: a name holds
    no further ``/``."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    head, *rest = stripped.split(maxsplit=1)
    name = head[1:]
    if "/" in name:
        return None
    return name, rest[0].strip() if rest else ""


class PromptExpander:
    """Expands user input for one session; see the module docstring for the order."""

    def __init__(
        self,
        workspace: Path,
        *,
        commands: Iterable[CustomCommand] = (),
        problems: Iterable[LoadProblem] = (),
        skills: SkillCatalog | None = None,
        mcp_prompt: PromptRenderer | None = None,
        mcp_resources: ResourceExpander | None = None,
        protected: Sequence[Path | str] = (),
        denied: Callable[[str], bool] | None = None,
        approve_outside: OutsideApprover | None = None,
    ) -> None:
        self.workspace = workspace
        self.commands = {c.name: c for c in commands}
        self._clashes = [p for p in problems if p.name]
        self._skills = skills
        self._mcp_prompt = mcp_prompt
        self._mcp_resources = mcp_resources
        self._protected = tuple(protected)
        self._denied = denied
        self._approve_outside = approve_outside

    def _custom_name(self, name: str) -> str:
        """``name``, or the custom command Codex's ``prompts:NAME`` spells."""
        return command_name(name, self.commands.__contains__)

    def knows(self, name: str) -> bool:
        """Whether ``/name`` is a command this expander renders (without rendering it)."""
        return (
            self._custom_name(name) in self.commands
            or (self._skills is not None and name in self._skills)
            or (self._mcp_prompt is not None and name.startswith(MCP_PROMPT_PREFIX))
        )

    async def expand_command(self, name: str, arguments: str) -> str | None:
        """The user turn for ``/name arguments``; None when no command has that name."""
        custom = self.commands.get(self._custom_name(name))
        if custom is not None:
            return custom.render(arguments)
        if self._skills is not None:
            # A skill (docs/SKILLS.md); SkillError when its file can no longer be used.
            skill = self._skills.render_command(name, arguments)
            if skill is not None:
                return skill
        if self._mcp_prompt is not None and name.startswith(MCP_PROMPT_PREFIX):
            try:
                return await self._mcp_prompt(name, arguments)
            except CommandError:
                raise
            except Exception as exc:
                raise CommandError(f"/{name} failed: {_reason(exc)}") from exc
        return None

    def provenance(self, name: str, arguments: str) -> Provenance | None:
        """Who wrote the text ``/name`` renders to besides the user: None for the
        user's own command file (``~/.claude/commands``...), whose references are
        as trusted as typed ones."""
        custom = self.commands.get(self._custom_name(name))
        if custom is not None:
            if custom.scope != "project":
                return None
            return Provenance(typed=arguments, author=f"the project command /{custom.name}")
        if self._skills is not None and name in self._skills:
            return Provenance(typed=arguments, author=f"the skill /{name}", skill=True)
        if name.startswith(MCP_PROMPT_PREFIX):
            return Provenance(typed=arguments, author=f"the MCP prompt /{name}")
        return None

    async def expand_references(
        self, text: str, provenance: Provenance | None = None
    ) -> Expanded:
        """``text`` with its ``@path`` and ``@server:uri`` references attached;
        ``provenance``: whose words they are, when ``text`` is a command's."""
        if "@" not in text:
            return Expanded(text=text)
        notices: list[str] = []
        images: tuple[ImagePart, ...] = ()
        foreign = provenance.foreign(text) if provenance is not None else set()
        skipped = foreign if provenance is not None and provenance.skill else set()
        confined = foreign - skipped
        why = ""
        if confined and provenance is not None:
            why = f"named by {provenance.author}, not by you"
            if self._approve_outside is None:
                why += "; nobody can approve that in a headless run: name the file yourself"
            else:
                outside = await anyio.to_thread.run_sync(
                    outside_workspace, text, self.workspace, confined
                )
                for token, label in outside:
                    if await self._approve_outside(label, provenance.author):
                        confined.discard(token)
                why += "; you declined it"
        try:
            expansion = await anyio.to_thread.run_sync(
                functools.partial(
                    expand_mentions,
                    text,
                    self.workspace,
                    protected=self._protected,
                    denied=self._denied,
                    confined=confined,
                    skipped=skipped,
                    confined_why=why,
                )
            )
        except Exception as exc:
            notices.append(f"Could not read @ references: {_reason(exc)}")
        else:
            notices.extend(expansion.notices)
            images = tuple(expansion.images)
            text = expansion.apply(text)
        if self._mcp_resources is not None:
            # A skill body's @server:uri stays text too: only the user's words are read.
            source = provenance.typed if skipped and provenance is not None else text
            try:
                read, problems = await self._mcp_resources(source)
                text += read[len(source) :]  # the <resource> blocks it appended
            except Exception as exc:
                problems = [f"Could not read MCP resources: {_reason(exc)}"]
            notices.extend(problems)
        return Expanded(text=text, notices=tuple(notices), images=images)

    async def expand(self, text: str) -> Expanded:
        """Command, then references; an unknown ``/name`` raises :class:`CommandError`."""
        command = split_command(text)
        if command is not None:
            name, arguments = command
            rendered = await self.expand_command(name, arguments)
            if rendered is None:
                skills = [n for n, _, _ in self._skills.commands()] if self._skills else []
                known = ", ".join(f"/{n}" for n in sorted({*self.commands, *skills})) or "none"
                raise CommandError(
                    f"unknown command /{name} (custom commands and skills: {known}; MCP "
                    f"prompts are /{MCP_PROMPT_PREFIX}<server>__<prompt>)"
                )
            text = rendered
            # Said when the command is used: which file won a name two agents' folders share.
            custom = self._custom_name(name)
            clashes = tuple(f"{p.path}: {p.message}" for p in self._clashes if p.name == custom)
            expanded = await self.expand_references(text, self.provenance(name, arguments))
            return Expanded(
                text=expanded.text, notices=clashes + expanded.notices, images=expanded.images
            )
        return await self.expand_references(text)


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
