"""Markdown to Content: block splitting, code blocks, lexer names (no app needed)."""

from __future__ import annotations

import io

from rich.console import Console

from reasonix_tui.widgets.markdown_render import (
    BlockRenderer,
    lexer_name,
    markdown_theme,
    render_code,
    split_blocks,
)

COLORS = {
    "primary": "#0178d4",
    "secondary": "#004578",
    "accent": "#fea62b",
    "surface": "#1e1e1e",
    "muted": "#909090",
}


def console() -> Console:
    return Console(file=io.StringIO(), width=60, color_system="truecolor")


def test_blocks_keep_their_source_and_fence_language() -> None:
    blocks = split_blocks("# Title\n\nSome text.\n\n```python\nx = 1\n```\n\n---\n")
    assert [b.kind for b in blocks] == ["heading_open", "paragraph_open", "fence", "hr"]
    fence = blocks[2]
    assert fence.code == "x = 1" and fence.language == "python"
    assert fence.text == "```python\nx = 1\n```\n"


def test_unknown_or_half_written_languages_fall_back_to_text() -> None:
    assert lexer_name("Python") == "python"
    assert lexer_name("pyth") == "text"  # the fence line as it streams in
    assert lexer_name("no-such-language") == "text"


def test_code_block_padding_folding_and_background() -> None:
    code = render_code("print('hello')\n" + "x" * 30, "pyth", 20, "#1e1e1e")
    lines = code.plain.split("\n")
    assert lines[0] == " " * 20 and lines[-1] == " " * 20  # padding rows
    assert all(len(line) == 20 for line in lines)  # padded to the width
    assert lines[2].strip() == "x" * 18 and lines[3].strip() == "x" * 12  # folded
    assert code.spans[0].style == "on #1e1e1e"
    open_both = render_code("a\nb", "text", 20, top=False, bottom=False)
    assert open_both.plain.split("\n") == [" a" + " " * 18, " b" + " " * 18]


def test_unchanged_blocks_are_reused_and_a_rule_gets_one_blank_line() -> None:
    renderer = BlockRenderer()
    theme = markdown_theme(COLORS)
    first = renderer.render("One.\n\n---\nTwo.\n", 40, console(), theme)
    lines = [line.rstrip() for line in first.plain.split("\n")]
    # Rich ends a rule with its own blank line, so nothing is added after it.
    assert lines[:2] == ["One.", ""] and len(set(lines[2])) == 1 and lines[3:] == ["", "Two."]
    kept = dict(renderer._blocks)
    renderer.render("One.\n\n---\nTwo, longer now.\n", 40, console(), theme)
    assert renderer._blocks["11One.\n"] is kept["11One.\n"]  # the same object: not re-rendered


def test_ordered_items_are_numbered_with_a_dot_and_hang_when_wrapped() -> None:
    theme = markdown_theme(COLORS)
    text = BlockRenderer().render(
        "1. one\n2. a longer item that has to wrap\n", 24, console(), theme
    )
    lines = [line.rstrip() for line in text.plain.split("\n")]
    assert lines[0] == " 1. one"
    assert lines[1].startswith(" 2. a longer")
    assert lines[2].startswith("    ") and lines[2].strip()  # continuation under the text
