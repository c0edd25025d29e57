"""Standard input piped beside a prompt: ``git diff | reasonix run "Review this diff"``.

The piped text is appended to the prompt inside a Markdown fence longer than any
backtick run in it, so a diff that itself holds a fenced block cannot close the
fence early. The input is capped: a run never reads an unbounded stream into a
request (the CLI reads at most one byte over the cap and refuses beyond it).
"""

from __future__ import annotations

import re

#: The largest standard input appended to a prompt (or taken as the prompt).
PIPED_INPUT_CAP = 1 << 20
_BACKTICKS = re.compile(r"`{3,}")


def cap_words(cap: int = PIPED_INPUT_CAP) -> str:
    """The cap as a user reads it (``1 MiB``)."""
    if cap % (1 << 20) == 0:
        return f"{cap >> 20} MiB"
    if cap % 1024 == 0:
        return f"{cap >> 10} KiB"
    return f"{cap} bytes"


def with_piped_input(prompt: str, piped: str) -> str:
    """``prompt`` followed by ``piped`` in a fence; the prompt alone when nothing
    (or only whitespace) was piped."""
    if not piped.strip():
        return prompt
    longest = max((len(run) for run in _BACKTICKS.findall(piped)), default=0)
    fence = "`" * max(3, longest + 1)
    body = piped.rstrip("\n")
    return f"{prompt.rstrip()}\n\n{fence}\n{body}\n{fence}"
