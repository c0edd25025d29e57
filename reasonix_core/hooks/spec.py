"""One configured command hook: what every part of the hooks package shares.

Its own module, importing nothing of Reasonix, so that the engine and the runner do
not import the settings reader (which reads trust and permission rules): the session
environment names the engine, and the tool layer sits below the permission rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One configured command hook."""

    event: str
    matcher: str
    command: str
    timeout: float
    source: str  # the file it came from, as shown to the user

    def matches(self, names: Sequence[str]) -> bool:
        """Whether the matcher takes any of ``names`` (a tool's spellings, or a
        source such as ``startup``). Empty and ``*`` match everything; otherwise a
        regular expression over the whole name, as in Claude Code."""
        if self.matcher in ("", "*"):
            return True
        pattern = re.compile(self.matcher)
        return any(pattern.fullmatch(n) for n in names)
