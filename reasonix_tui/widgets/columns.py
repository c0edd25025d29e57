"""Two columns of text, a name and what it does, that keep their shape at any width.

``/help`` and the ``/`` menu list commands (and keys) with a description each. Drawn
as plain text, a description longer than the line wraps back to column 0 and one long
name (``/goal <objective> | status | …``) pushes every description off to the right.
:class:`Columns` is a Textual ``Visual``: it is laid out at the width it is drawn at
(again after a resize), the names in one column sized for the usual name, a longer
name on a line of its own, and every description wrapped under its own column (a
hanging indent). When the descriptions would get too narrow to read, each goes under
its name instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

GAP = 2  # between the name column and the descriptions
NAME_SHARE = 0.4  # of the width the name column may take
MIN_NAME_COLUMN = 12
MAX_NAME_COLUMN = 28  # a longer name (an argument hint) takes a line of its own
MIN_DETAIL = 20  # narrower than this, a description goes under its name
STACKED_INDENT = 4  # where a description under its name starts


@dataclass(frozen=True, slots=True)
class Row:
    name: Content
    detail: Content


Line = Row | Content  # a row, or a line of its own (a heading, a blank line)


def _fit(line: Content, width: int) -> Content:
    return line if line.cell_length <= width else line.truncate(width, ellipsis=True)


class Columns(Visual):
    """Rows of (name, detail), headings between them, ``indent`` cells in."""

    def __init__(self, lines: Sequence[Line], *, indent: int = 0) -> None:
        self.lines = list(lines)
        self.indent = indent
        self._laid_out: tuple[int, list[list[Content]]] = (-1, [])

    @property
    def rows(self) -> list[Row]:
        return [line for line in self.lines if isinstance(line, Row)]

    def name_column(self, width: int) -> int:
        """The name column's width at ``width``: the longest name that fits within
        its share (a longer one takes a line of its own)."""
        share = int((width - self.indent) * NAME_SHARE)
        cap = min(MAX_NAME_COLUMN, max(MIN_NAME_COLUMN, share))
        fitting = [r.name.cell_length for r in self.rows if r.name.cell_length <= cap]
        return max(fitting, default=min(cap, MIN_NAME_COLUMN))

    def layout(self, width: int) -> list[Content]:
        """The lines at ``width``, none longer than it."""
        return [part for group in self.groups(width) for part in group]

    def groups(self, width: int) -> list[list[Content]]:
        """The lines at ``width`` of each of :attr:`lines` (a row may take several)."""
        if self._laid_out[0] == width:
            return self._laid_out[1]
        requested, width = width, max(width, 1)
        column = self.name_column(width)
        pad = " " * self.indent
        room = width - self.indent - column - GAP
        stacked = room < MIN_DETAIL
        out: list[list[Content]] = []
        for line in self.lines:
            group: list[Content] = []
            out.append(group)
            if not isinstance(line, Row):
                group.extend(_fit(part, width) for part in line.wrap(width) or [Content()])
                continue
            name = _fit(line.name, max(1, width - self.indent))
            if stacked:
                hang = min(self.indent + STACKED_INDENT, width - 1)
                group.append(Content(pad) + name)
                group.extend(Content(" " * hang) + part for part in line.detail.wrap(width - hang))
                continue
            hang = " " * (self.indent + column + GAP)
            parts = line.detail.wrap(room) if line.detail else []
            if name.cell_length > column:  # too long for the column: a line of its own
                group.append(Content(pad) + name)
                group.extend(Content(hang) + part for part in parts)
                continue
            first = Content(pad) + name.pad_right(column - name.cell_length)
            if parts:
                first = first + Content(" " * GAP) + parts[0]
            group.append(first)
            group.extend(Content(hang) + part for part in parts[1:])
        self._laid_out = (requested, out)
        return out

    def single(self, index: int) -> Visual:
        """Line ``index`` alone (an option of a list), laid out with all the others."""
        return _OneOf(self, index)

    def content(self, width: int) -> Content:
        """All of it as one ``Content`` laid out at ``width``."""
        return Content("\n").join(self.layout(width))

    # ---- the Visual protocol --------------------------------------------------
    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        return self.content(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        widest = 0
        column = max((r.name.cell_length for r in self.rows), default=0)
        for line in self.lines:
            if isinstance(line, Row):
                widest = max(widest, self.indent + column + GAP + line.detail.cell_length)
            else:
                widest = max(widest, max((cell_len(p) for p in line.plain.split("\n")), default=0))
        return widest

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.layout(width))


class _OneOf(Visual):
    """One line of a :class:`Columns`, drawn on its own (an ``OptionList`` option)."""

    def __init__(self, columns: Columns, index: int) -> None:
        self.columns = columns
        self.index = index

    def _content(self, width: int) -> Content:
        return Content("\n").join(self.columns.groups(width)[self.index])

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        return self._content(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.columns.get_optimal_width(rules, container_width)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.columns.groups(width)[self.index])
