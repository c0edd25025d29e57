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
and links in the accent colour, code fences highlighted by Pygments with a
dark or light style to match.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from rich.theme import Theme
from textual.color import Color
from textual.content import Content

DARK_CODE_THEME = "monokai"
LIGHT_CODE_THEME = "friendly"


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


class AnswerMarkdown(Markdown):
    elements: ClassVar = {
        **Markdown.elements,
        "heading_open": _LeftHeading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
    }

    def __init__(self, source: str, *, code_background: str, **kwargs: Any) -> None:
        super().__init__(source, **kwargs)
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
    from markdown_it import MarkdownIt

    global _parser
    if _parser is None:
        _parser = MarkdownIt().enable("strikethrough").enable("table")  # as Rich parses
    return [
        token
        for token in _parser.parse(source)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]


def top_level_starts(source: str) -> list[int]:
    """The first line of each top-level block, as Rich's parser sees them."""
    return [token.map[0] for token in _top_level(source) if token.map is not None]


def gap_after(source: str) -> bool:
    """Whether Rich leaves a blank line after the last block of ``source`` (not after
    a horizontal rule), i.e. whether a segment that follows starts with one."""
    blocks = _top_level(source)
    return not blocks or blocks[-1].type != "hr"


_parser: Any = None


def render_markdown(
    source: str,
    width: int,
    console: Console,
    theme: Theme,
    *,
    dark: bool = True,
    code_background: str = "",
) -> Content:
    """``source`` laid out ``width`` cells wide, as one ``Content`` of lines."""
    markdown = AnswerMarkdown(
        source.rstrip("\n"),
        code_background=code_background,
        code_theme=DARK_CODE_THEME if dark else LIGHT_CODE_THEME,
        hyperlinks=False,
    )
    options = console.options.update(width=max(width, 1), height=None)
    with console.use_theme(theme):
        lines = console.render_lines(markdown, options, pad=False, new_lines=False)
    while lines and _blank(lines[0]):
        del lines[0]  # Rich opens some blocks (a list) with a blank line
    text = Text("\n").join(_line_text(line) for line in lines)
    return Content.from_rich_text(text, console)


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


WARM_UP_SAMPLE = (
    "".join(f"```{language}\nx\n```\n\n" for language in ("python", "bash", "json", "diff", "text"))
    + "# h\n\n- *a* `b` [c](d)\n\n> e\n\n| f | g |\n|---|---|\n| 1 | 2 |\n"
)


def warm_up() -> None:
    """Import and exercise what the first answer needs (any thread): the widget
    module, Rich's Markdown, Pygments and the lexers an answer most often uses."""
    import io

    import reasonix_tui.widgets.assistant_block  # noqa: F401

    console = Console(file=io.StringIO(), width=80, color_system="truecolor")
    theme = markdown_theme(
        {
            "primary": "#000001",
            "secondary": "#000002",
            "accent": "#000003",
            "surface": "#000004",
            "muted": "#000005",
        }
    )
    render_markdown(WARM_UP_SAMPLE, 80, console, theme, code_background="#000004")
