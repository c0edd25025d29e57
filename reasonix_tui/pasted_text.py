"""Large pastes collapse to one chip, ``[Pasted text #1 +400 lines]``.

The composer shows the chip and keeps the pasted text behind it; the turn sends
the text in the chip's place, byte for byte (newlines normalised to ``\\n`` as the
terminal's carriage returns would be by an inline paste). The chips are numbered
per prompt (#1, #2, ...). A prompt in the history (Up, Ctrl+R, the saved prompt
history) is a :class:`PromptText`: the text as shown, with the pastes its chips
stand for, so a recalled prompt is shown collapsed and still sends everything.

Thresholds, after Claude Code's (800 characters): a paste collapses when it has
more than :data:`MAX_INLINE_CHARS` characters or more than
:data:`MAX_INLINE_LINES` lines (what the composer shows at once; Claude Code
collapses from 3 lines, which its users find too eager). Smaller pastes stay
inline. Nothing here imports Textual.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Self

from reasonix_core.pasted import PastedSpan, chip_label, line_count

MAX_INLINE_CHARS = 800
MAX_INLINE_LINES = 8

# Any chip's shape; :meth:`PromptText.expanded` only expands a chip whose label is
# exactly the one its paste would get (number and size), so typed look-alikes stay.
CHIP = re.compile(r"\[Pasted text #(\d+) \+\d+ (?:lines|chars)\]")


def normalise(text: str) -> str:
    """A paste's newlines as ``\\n`` (terminals and tmux send carriage returns)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def collapses(text: str) -> bool:
    """Whether a paste of ``text`` (normalised) collapses to a chip."""
    return len(text) > MAX_INLINE_CHARS or line_count(text) > MAX_INLINE_LINES


class PromptText(str):
    """A prompt as shown (chips in place) that knows the pastes its chips stand for.

    A ``str``, so the prompt history, the queue and the Ctrl+R picker carry it
    unchanged; equal to any string with the same shown text."""

    pastes: Mapping[int, str]

    def __new__(cls, shown: str, pastes: Mapping[int, str] | None = None) -> Self:
        prompt = super().__new__(cls, shown)
        prompt.pastes = dict(pastes or {})
        return prompt

    def expanded(self) -> tuple[str, tuple[PastedSpan, ...]]:
        """The text the model gets (each chip replaced by its paste) and where
        each paste sits in it (so the transcript can collapse it again)."""
        return expand(str(self), self.pastes)


def expand(shown: str, pastes: Mapping[int, str]) -> tuple[str, tuple[PastedSpan, ...]]:
    """``shown`` with each of its chips of ``pastes`` replaced by the pasted text
    (plain slicing: a paste's backslashes and ``$`` stay as they are)."""
    if not pastes:
        return shown, ()
    parts: list[str] = []
    spans: list[PastedSpan] = []
    at = length = 0
    for match in CHIP.finditer(shown):
        number = int(match.group(1))
        text = pastes.get(number)
        if text is None or match.group(0) != chip_label(number, text):
            continue
        parts.append(shown[at : match.start()])
        length += match.start() - at
        spans.append(PastedSpan(start=length, length=len(text), number=number))
        parts.append(text)
        length += len(text)
        at = match.end()
    parts.append(shown[at:])
    return "".join(parts), tuple(spans)


def full_text(prompt: str) -> str:
    """``prompt`` with its chips' pastes in place (a plain string as it is)."""
    return prompt.expanded()[0] if isinstance(prompt, PromptText) else prompt


def join(prompts: Iterable[str], separator: str = "\n\n") -> PromptText:
    """Several prompts (queued, put back in the composer) as one, their chips
    renumbered #1, #2, ... so each still finds its paste."""
    shown: list[str] = []
    pastes: dict[int, str] = {}
    for prompt in prompts:
        own = prompt.pastes if isinstance(prompt, PromptText) else {}
        text = str(prompt)

        def renumber(match: re.Match[str], own: Mapping[int, str] = own) -> str:
            number = int(match.group(1))
            pasted = own.get(number)
            if pasted is None or match.group(0) != chip_label(number, pasted):
                return match.group(0)
            new = len(pastes) + 1
            pastes[new] = pasted
            return chip_label(new, pasted)

        shown.append(CHIP.sub(renumber, text) if own else text)
    return PromptText(separator.join(shown), pastes)


__all__ = [
    "CHIP",
    "MAX_INLINE_CHARS",
    "MAX_INLINE_LINES",
    "PromptText",
    "chip_label",
    "collapses",
    "expand",
    "full_text",
    "join",
    "line_count",
    "normalise",
]
