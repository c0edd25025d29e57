"""Large pastes a user saw collapsed: where each sits in a prompt, and the chip that
names it (``[Pasted text #1 +400 lines]``).

The TUI's composer shows a large paste as its chip and sends the text whole
(reasonix_tui/pasted_text.py); the user message keeps, in its local ``meta``
(:data:`reasonix_core.messages.PASTED`, never sent), ``[[start, length, number], ...]``,
so every place that shows the prompt again (the resumed transcript, ``/rewind``'s
list, the sessions' titles) shows the same chips. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PastedSpan:
    """Where one large paste sits in a prompt (characters), and its chip number:
    the user saw it collapsed, the model gets it whole."""

    start: int
    length: int
    number: int

    def to_record(self) -> list[int]:
        return [self.start, self.length, self.number]


def line_count(text: str) -> int:
    return len(text.splitlines()) or 1


def chip_label(number: int, text: str) -> str:
    """The chip for paste ``number`` holding ``text``: its lines, or its characters
    when it is one long line."""
    lines = line_count(text)
    size = f"+{lines} lines" if lines > 1 else f"+{len(text)} chars"
    return f"[Pasted text #{number} {size}]"


def spans_from_meta(raw: object) -> list[PastedSpan]:
    """The spans a saved message's ``meta`` holds: each item three integers (a
    hand-edited file may say anything; anything else is skipped)."""
    if not isinstance(raw, list):
        return []
    spans: list[PastedSpan] = []
    for item in raw:
        if isinstance(item, list) and len(item) == 3 and all(type(v) is int for v in item):
            start, length, number = item
            spans.append(PastedSpan(start=start, length=length, number=number))
    return spans


def collapse(text: str, spans: Iterable[PastedSpan]) -> str:
    """``text`` (a saved turn) with each paste span back to its chip; a span that
    does not fit the text (a hand-edited transcript) is left expanded."""
    out: list[str] = []
    at = 0
    for span in sorted(spans, key=lambda s: s.start):
        end = span.start + span.length
        if span.start < at or end > len(text) or span.length <= 0:
            continue
        out.append(text[at : span.start])
        out.append(chip_label(span.number, text[span.start : end]))
        at = end
    out.append(text[at:])
    return "".join(out)


__all__ = ["PastedSpan", "chip_label", "collapse", "line_count", "spans_from_meta"]
