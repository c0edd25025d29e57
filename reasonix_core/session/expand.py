"""A prompt as the session expands it: ``/command args`` (a custom command, a
skill, an MCP prompt), ``@path`` and ``@server:uri``, the same for every surface."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_core.command.expander import Expanded, PromptExpander
    from reasonix_core.mcp.host import McpHost
    from reasonix_core.permission.policy import Policy
    from reasonix_core.skills import SkillCatalog


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpansionSources:
    """What a session's prompts expand from."""

    workspace: Path
    home: Path
    skills: SkillCatalog
    mcp: McpHost | None
    policy: Policy


async def expand_prompt(session: ExpansionSources, prompt: str) -> Expanded:
    """``prompt`` through the session's expander; a prompt with neither a leading
    ``/`` nor an ``@`` has nothing to expand, so a plain run never scans the command
    folders or imports the expander (the expander alone decides the rest)."""
    if not prompt.lstrip().startswith("/") and "@" not in prompt:
        from reasonix_core.command.expander import Expanded

        return Expanded(text=prompt)
    return await prompt_expander(session).expand(prompt)


def prompt_expander(session: ExpansionSources) -> PromptExpander:
    """The session's expander: its custom commands, its MCP host, its read rules."""
    from reasonix_core.command.custom import load_custom_commands
    from reasonix_core.command.expander import PromptExpander

    commands, problems = load_custom_commands(session.workspace, session.home)
    mcp = session.mcp
    return PromptExpander(
        session.workspace,
        commands=commands,
        problems=problems,
        skills=session.skills,
        mcp_prompt=mcp.render_prompt if mcp is not None else None,
        mcp_resources=mcp.expand_resource_references if mcp is not None else None,
        protected=session.policy.forbid_read,
        denied=functools.partial(session.policy.read_denied, "read_file"),
    )
