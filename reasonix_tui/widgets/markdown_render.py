"""Markdown to Textual ``Content`` at a given width, through Rich.

An answer is shown as a few ``Static`` widgets holding pre-rendered Markdown
rather than Textual's ``Markdown`` widget, which builds a widget tree per block
(a list item is a row, a bullet and a column) and rebuilds the last block on
every appended fragment. While a 20,000-token answer streamed, that meant
about 5,000 widgets made and thrown away; the garbage collector's passes over
them were the longest stalls of the event loop (``bench/bench_tui.py stream``,
figures in ``docs/PERFORMANCE.md``). Rendering through Rich keeps one widget
per segment of the answer, and the result is ``Content``, so text selection
works as in any other ``Static``.

Styles follow the app's theme: headings in the primary colour, inline code
and links in the accent colour. Code fences do not go through Rich: Textual's
own highlighter is about ten times faster than Rich's ``Syntax`` (35 ms for
300 lines against 380 ms) and uses the theme's colours, and a long fence is
highlighted in cached chunks so it does not get slower as it grows. Blocks are
rendered one by one and reused while unchanged, so a streamed piece costs the
rendering of the last block only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, HorizontalRule, ListItem, Markdown
from rich.rule import Rule
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from rich.theme import Theme
from textual.color import Color
from textual.content import Content

NESTED_CODE_THEME = "monokai"  # Pygments style for a fence inside a list or quote


class _LeftHeading(Heading):
    """Headings start at the left margin (Rich centres ``#``), as in a chat."""

    LEVEL_ALIGN: ClassVar = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")


class _CodeBlock(CodeBlock):
    """A fence on the theme's surface colour rather than the Pygments style's own."""

    background = ""

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> CodeBlock:
        block = super().create(markdown, token)
        block.background = getattr(markdown, "code_background", "")  # type: ignore[attr-defined]
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Syntax(
            str(self.text).rstrip(),
            self.lexer_name,
            theme=self.theme,
            word_wrap=True,
            padding=1,
            background_color=self.background or None,
        )


class _ListItem(ListItem):
    """Ordered items numbered "1." (Rich writes a bare "1")."""

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        width = len(str(last_number)) + 3
        lines = console.render_lines(
            self.elements, options.update(width=options.max_width - width), style=self.style
        )
        style = console.get_style("markdown.item.number", default="none")
        numeral = Segment(f"{number}.".rjust(width - 1) + " ", style)
        padding = Segment(" " * width, style)
        for index, line in enumerate(lines):
            yield numeral if index == 0 else padding
            yield from line
            yield Segment("\n")


class _Rule(HorizontalRule):
    """A rule drawn with a box-drawing line (Rich's Markdown draws dashes)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Rule(style=console.get_style("markdown.hr", default="none"))


class AnswerMarkdown(Markdown):
    elements: ClassVar = {
        **Markdown.elements,
        "hr": _Rule,
        "list_item_open": _ListItem,
        "heading_open": _LeftHeading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }

    def __init__(self, source: str, *, code_background: str, **kwargs: Any) -> None:
        super().__init__(source, code_theme=NESTED_CODE_THEME, **kwargs)
        self.code_background = code_background


def theme_colors(variables: Mapping[str, str]) -> dict[str, str]:
    """The colours :func:`markdown_theme` needs, from an app's ``theme_variables``
    (Rich has no alpha: translucent ones are blended onto the background)."""
    background = Color.parse(variables.get("background", "#000000"))

    def solid(name: str, default: str) -> str:
        return (background + Color.parse(variables.get(name, default))).hex

    return {
        "primary": solid("primary", "#0178D4"),
        "secondary": solid("secondary", "#004578"),
        "accent": solid("accent", "#FEA62B"),
        "surface": solid("surface", "#1E1E1E"),
        "muted": solid("foreground-muted", "#A0A0A0"),
    }


def markdown_theme(colors: Mapping[str, str]) -> Theme:
    """Rich styles for Markdown from the colours of :func:`theme_colors`."""
    primary = colors["primary"]
    accent = colors["accent"]
    muted = colors["muted"]
    surface = colors["surface"]
    return Theme(
        {
            "markdown.h1": Style(color=primary, bold=True),
            "markdown.h2": Style(color=primary, bold=True),
            "markdown.h3": Style(color=primary, bold=True),
            "markdown.h4": Style(color=primary, italic=True),
            "markdown.h5": Style(italic=True),
            "markdown.h6": Style(italic=True, dim=True),
            "markdown.h1.border": Style(color=primary),
            "markdown.code": Style(color=accent, bgcolor=surface),
            "markdown.code_block": Style(bgcolor=surface),
            "markdown.block_quote": Style(color=muted, italic=True),
            "markdown.list": Style(color=colors["secondary"]),
            "markdown.item.bullet": Style(color=primary, bold=True),
            "markdown.item.number": Style(color=primary),
            "markdown.hr": Style(color=muted),
            "markdown.link": Style(color=accent, underline=True),
            "markdown.link_url": Style(color=muted, underline=True),
            "markdown.table.border": Style(color=muted),
            "markdown.table.header": Style(color=primary, bold=True),
        },
        inherit=True,
    )


def _top_level(source: str) -> list[Token]:
    """Parsed once per text: a streamed piece asks twice (where to cut the segment,
    then what to render), with the same text."""
    global _parser, _last_parse
    if _last_parse is not None and _last_parse[0] == source:
        return _last_parse[1]
    if _parser is None:
        from markdown_it import MarkdownIt

        _parser = MarkdownIt().enable("strikethrough").enable("table")  # as Rich parses
    tokens = [
        token
        for token in _parser.parse(source)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]
    _last_parse = (source, tokens)
    return tokens


def top_level_blocks(source: str) -> list[Token]:
    """The top-level block tokens of ``source`` (type, line ``map``, fence ``info``)."""
    return _top_level(source)


_parser: Any = None
_last_parse: tuple[str, list[Token]] | None = None


@dataclass(frozen=True)
class Block:
    """One top-level block of Markdown: its source lines and what the parser made of them."""

    kind: str  # the token type: "paragraph_open", "fence", "hr", ...
    text: str
    code: str = ""  # fences and indented code
    language: str = ""


def split_blocks(source: str) -> list[Block]:
    lines = source.splitlines(keepends=True)
    blocks = []
    for token in _top_level(source):
        assert token.map is not None
        start, end = token.map
        text = "".join(lines[start:end])
        if token.type in ("fence", "code_block"):
            language = token.info.split()[0] if token.info.strip() else ""
            blocks.append(Block(token.type, text, token.content.rstrip("\n"), language))
        else:
            blocks.append(Block(token.type, text))
    return blocks


class BlockRenderer:
    """Renders Markdown at a width block by block, reusing the blocks that did not
    change since the last call (while an answer streams only its last block does)."""

    def __init__(self) -> None:
        self._width = 0
        self._blocks: dict[str, Content] = {}
        # What each line of the last rendering is, for copying: "text", "code" (a code
        # line, one cell of padding on its left) or "pad" (a code block's padding row).
        self.line_kinds: list[str] = []
        self.drafted = False  # a fence was drawn plain by the last call (see drafting)

    def clear(self) -> None:
        """Forget the rendered blocks (a parked segment renders again from its text)."""
        self._blocks, self.line_kinds = {}, []

    def render(
        self,
        source: str,
        width: int,
        console: Console,
        theme: Theme,
        *,
        surface: str = "",
        open_top: bool = False,
        open_bottom: bool = False,
    ) -> Content:
        """``open_top`` / ``open_bottom``: a code block first / last in ``source``
        continues one in the segment above / below (no padding row on that side)."""
        width = max(width, 4)
        if width != self._width:
            self._blocks, self._width = {}, width
        rendered: dict[str, Content] = {}
        pieces: list[Content | str] = []
        kinds: list[str] = []
        blocks = split_blocks(source)
        self.drafted = False
        for index, block in enumerate(blocks):
            top = not (open_top and index == 0)
            bottom = not (open_bottom and index == len(blocks) - 1)
            key = f"{int(top)}{int(bottom)}{block.text}"
            content = rendered.get(key) or self._blocks.get(key)
            if content is None:
                if block.kind in ("fence", "code_block"):
                    language = lexer_name(block.language) if block.language else "text"
                    plain = _drafting and not _lexer_compiled(language)
                    content = render_code(
                        block.code, language, width, surface, top=top, bottom=bottom, plain=plain
                    )
                    if plain:  # not kept: rendered again, highlighted
                        self.drafted = True
                        key = f"draft{key}"
                else:
                    content = _render_rich(block.text, width, console, theme, surface)
            rendered[key] = content
            if pieces:
                pieces.append("\n\n")  # one blank line between blocks
                kinds.append("text")
            pieces.append(content)
            rows = content.plain.count("\n") + 1
            if block.kind in ("fence", "code_block"):
                kinds += ["pad"] * top + ["code"] * (rows - top - bottom) + ["pad"] * bottom
            else:
                kinds += ["text"] * rows
        self._blocks = rendered
        self.line_kinds = kinds
        return Content.assemble(*pieces) if pieces else Content()


def render_markdown(
    source: str, width: int, console: Console, theme: Theme, *, surface: str = ""
) -> Content:
    """``source`` laid out ``width`` cells wide, as one ``Content`` of lines."""
    return BlockRenderer().render(source, width, console, theme, surface=surface)


FENCE_CHUNK = 64  # lines highlighted (and cached) together in a long fence
_CHUNK_CACHE_SIZE = 256
_chunks: dict[tuple[str, str], list[Content]] = {}


_aliases: frozenset[str] | None = None


def lexer_name(language: str) -> str:
    """``language`` if Pygments has a lexer of that name, else "text". Checked against
    its built-in names: a failed lookup scans the installed plugins (30-60 ms), and
    while an answer streams the fence line is often cut short ("```pyth")."""
    global _aliases
    if _aliases is None:
        from pygments.lexers import get_all_lexers

        _aliases = frozenset(
            alias for _, aliases, _, _ in get_all_lexers(plugins=False) for alias in aliases
        )
    name = language.lower()
    return name if name in _aliases else "text"


_drafting = False  # see drafting()


@contextlib.contextmanager
def drafting() -> Iterator[None]:
    """Within it, a fence whose Pygments lexer has not been compiled yet is drawn
    plain and the renderer says so (:attr:`BlockRenderer.drafted`): compiling a lexer's
    rules the first time (Python's: ~25 ms of ``re.compile``) is then not in the way of
    the first frame of a resumed session. Rendered again outside, it is highlighted;
    the plain draft has the same rows, so nothing moves."""
    global _drafting
    _drafting = True
    try:
        yield
    finally:
        _drafting = False


def _lexer_compiled(language: str) -> bool:
    from pygments.lexer import RegexLexer
    from pygments.lexers import find_lexer_class_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = find_lexer_class_by_name(language)
    except ClassNotFound:
        return True
    # A RegexLexer compiles its rules when the first one is made (kept on the class).
    return not issubclass(lexer, RegexLexer) or "_tokens" in lexer.__dict__


def _highlight_lines(code: str, language: str) -> list[Content]:
    """One ``Content`` per line. A long fence is highlighted in chunks of
    ``FENCE_CHUNK`` lines and full chunks are cached, so a growing fence costs the
    same per piece at line 1,000 as at line 10 (a construct spanning a chunk boundary,
    like a long docstring, may be coloured as if it started there)."""
    from textual.highlight import highlight

    language = lexer_name(language) if language else "text"
    lines = code.split("\n")
    out: list[Content] = []
    for start in range(0, len(lines), FENCE_CHUNK):
        chunk = lines[start : start + FENCE_CHUNK]
        full = len(chunk) == FENCE_CHUNK
        key = (language, "\n".join(chunk))
        highlighted = _chunks.get(key) if full else None
        if highlighted is None:
            highlighted = highlight(key[1], language=language).split("\n")
            if full:
                if len(_chunks) >= _CHUNK_CACHE_SIZE:
                    _chunks.clear()
                _chunks[key] = highlighted
        out.extend(highlighted[: len(chunk)])
    return out


def render_code(
    code: str,
    language: str,
    width: int,
    surface: str = "",
    *,
    top: bool = True,
    bottom: bool = True,
    plain: bool = False,
) -> Content:
    """A code block: highlighted by Textual (its theme's colours), one cell of padding
    around (``top``/``bottom``: the padding rows), long lines folded, on ``surface``."""
    inner = max(width - 2, 2)
    blank = Content(" " * width)
    rows = [blank] if top else []
    lines = [Content(line) for line in code.split("\n")] if plain else None
    for line in lines or _highlight_lines(code, language):
        for piece in line.fold(inner) if line.cell_length > inner else [line]:
            rows.append(Content.assemble(" ", piece.pad_right(inner - piece.cell_length), " "))
    if bottom:
        rows.append(blank)
    body = Content("\n").join(rows)
    return body.stylize_before(f"on {surface}") if surface else body


def _render_rich(source: str, width: int, console: Console, theme: Theme, surface: str) -> Content:
    """A block rendered by Rich (a fence nested in a list or quote uses Pygments)."""
    markdown = AnswerMarkdown(source.rstrip("\n"), code_background=surface, hyperlinks=False)
    options = console.options.update(width=width, height=None)
    with console.use_theme(theme):
        lines = console.render_lines(markdown, options, pad=False, new_lines=False)
    # Rich opens some blocks with a blank line (a list) and ends some with one (a rule,
    # a table): the spacing between blocks is the renderer's.
    while lines and _blank(lines[0]):
        del lines[0]
    while lines and _blank(lines[-1]):
        del lines[-1]
    text = Text("\n").join(_line_text(line) for line in lines)
    return Content.from_rich_text(text, console)


def copy_text(shown: str, kinds: list[str], first_line: int, from_column: int) -> str:
    """Selected text as a user wants it pasted: ``shown`` is what the selection covers,
    starting at ``first_line`` / ``from_column`` of a rendering whose lines are
    ``kinds`` (see :attr:`BlockRenderer.line_kinds`). Padding is dropped: trailing
    spaces, a code block's padding rows and the cell before each code line."""
    out = []
    for index, line in enumerate(shown.split("\n")):
        number = first_line + index
        kind = kinds[number] if number < len(kinds) else "text"
        if kind == "pad":
            continue
        if kind == "code" and (index > 0 or from_column == 0):
            line = line[1:]
        out.append(line.rstrip())
    return "\n".join(out)


def _blank(line: list[Segment]) -> bool:
    """Empty and unpainted (a fence's padding line is blank but has a background)."""
    return all(
        not segment.text.strip() and (segment.style is None or segment.style.bgcolor is None)
        for segment in line
    )


def _line_text(line: list[Segment]) -> Text:
    text = Text(end="", no_wrap=True)
    for segment in line:
        if not segment.control:
            text.append(segment.text, segment.style)
    return text
