"""Slash-command and ``@`` reference helpers shared by every surface (no UI imports).

``custom`` loads user-defined Markdown commands and expands their templates;
``mentions`` resolves ``@path`` references and lists one directory level for
completion.
"""

from reasonix_core.command.custom import (
    CustomCommand,
    LoadProblem,
    expand_template,
    load_custom_commands,
)
from reasonix_core.command.mentions import (
    MentionExpansion,
    PathCandidate,
    expand_mentions,
    find_mentions,
    path_candidates,
)

__all__ = [
    "CustomCommand",
    "LoadProblem",
    "MentionExpansion",
    "PathCandidate",
    "expand_mentions",
    "expand_template",
    "find_mentions",
    "load_custom_commands",
    "path_candidates",
]
