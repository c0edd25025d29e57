"""edit_file: replace one exact string in an observed file."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._fs import ToolFailure, line_of, split_lines
from reasonix_core.tool.builtin._writes import run_structured_edit
from reasonix_core.tool.builtin.specs import EDIT_FILE as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool

_PREFIX = re.compile(r"^\s*\d+\t")
_SIMILAR_SCAN_LINES = 20_000


class EditError(Exception):
    """One edit cannot be applied; the message explains why to the model (what to do
    next), ``summary`` says what happened in people's words (the card shows it)."""

    def __init__(self, message: str, summary: str) -> None:
        super().__init__(message)
        self.summary = summary


class EditFileArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(min_length=1)
    old_string: str
    new_string: str
    replace_all: bool = False


def _find_all(text: str, needle: str) -> list[int]:
    hits = []
    start = 0
    while True:
        idx = text.find(needle, start)
        if idx < 0:
            return hits
        hits.append(idx)
        start = idx + len(needle)


def _to_crlf(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\n", "\r\n")


def _norm(s: str) -> str:
    return " ".join(s.split())


def not_found_message(text: str, old: str, display: str) -> str:
    """Why ``old`` was not found, with the nearest similar lines."""
    msg = [f"old_string was not found in {display}."]
    lines = split_lines(text)
    old_lines = split_lines(old) or [old]
    if any(_PREFIX.match(ln) for ln in old_lines[:3]):
        msg.append(
            "It seems to include read_file line-number prefixes (spaces, number, tab); "
            "copy only the text after the tab."
        )
    target = [_norm(ln) for ln in old_lines]
    while target and not target[0]:
        target.pop(0)
    while target and not target[-1]:
        target.pop()
    if target:
        normed = [_norm(ln) for ln in lines]
        k = len(target)
        for i in range(len(normed) - k + 1):
            if normed[i] == target[0] and normed[i : i + k] == target:
                where = f"Line {i + 1}" if k == 1 else f"Lines {i + 1}-{i + k}"
                msg.append(
                    f"{where} match it when whitespace is ignored: copy the exact indentation, "
                    "spacing and line breaks from the read_file output."
                )
                break
    anchor = next((ln.strip() for ln in old_lines if ln.strip()), "")
    if anchor and lines:
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(anchor[:500])
        scored: list[tuple[float, int]] = []
        for i, line in enumerate(lines[:_SIMILAR_SCAN_LINES]):
            candidate = line.strip()[:500]
            if not candidate:
                continue
            matcher.set_seq1(candidate)
            if matcher.real_quick_ratio() < 0.5 or matcher.quick_ratio() < 0.5:
                continue
            ratio = matcher.ratio()
            if ratio >= 0.5:
                scored.append((ratio, i))
        scored.sort(key=lambda t: (-t[0], t[1]))
        if scored:
            shown = "\n".join(
                f"{i + 1:>6}\t{lines[i][:200]}" for _, i in sorted(scored[:3], key=lambda t: t[1])
            )
            msg.append(f"Most similar lines to {anchor[:80]!r}:\n{shown}")
        else:
            msg.append("No similar lines found; the file may differ from what you expect.")
    msg.append("Read the relevant part again with read_file and retry with the exact text.")
    return "\n".join(msg)


def apply_edit(
    text: str, old: str, new: str, replace_all: bool, display: str
) -> tuple[str, int, int]:
    """Apply one replacement; returns (new text, replacements, first line)."""
    if old == "":
        raise EditError(
            "old_string is empty; give the exact existing text to replace "
            "(to create a new file use write_file)",
            "Not changed: no text to replace was given.",
        )
    if old == new:
        raise EditError(
            "old_string and new_string are identical; there is nothing to change",
            "Not changed: the new text is the same as the old.",
        )
    candidates = [(old, new)]
    if "\r\n" in text and "\n" in old and "\r\n" not in old:
        # The file uses CRLF; the model writes LF.
        candidates.append((_to_crlf(old), _to_crlf(new)))
    hits: list[int] = []
    for o, n in candidates:
        hits = _find_all(text, o)
        if hits:
            old, new = o, n
            break
    if not hits:
        raise EditError(
            not_found_message(text, old, display),
            "Not changed: the text to replace is not in the file.",
        )
    if len(hits) > 1 and not replace_all:
        lines = sorted({line_of(text, h) for h in hits})
        shown = ", ".join(str(n) for n in lines[:20]) + (", …" if len(lines) > 20 else "")
        raise EditError(
            f"old_string matches {len(hits)} times in {display} (at lines {shown}); include "
            "more surrounding context to make it unique, or set replace_all=true to replace "
            "every occurrence",
            f"Not changed: the text to replace occurs {len(hits)} times in the file.",
        )
    first = line_of(text, hits[0])
    if replace_all:
        return text.replace(old, new), len(hits), first
    h = hits[0]
    return text[:h] + new + text[h + len(old) :], 1, first


def _where(count: int, first: int) -> str:
    if count == 1:
        return f"1 replacement at line {first}"
    return f"{count} replacements, first at line {first}"


def edit_transform(a: EditFileArgs) -> Callable[[str, str], tuple[str, str]]:
    """The edit as a transform of the file's text (the tool's, and the approval's
    precheck: an edit sure to fail fails before anyone is asked to approve it)."""

    def transform(text: str, display: str) -> tuple[str, str]:
        try:
            new_text, count, first = apply_edit(
                text, a.old_string, a.new_string, a.replace_all, display
            )
        except EditError as exc:
            raise ToolFailure(str(exc), summary=exc.summary) from None
        return new_text, _where(count, first)

    return transform


class EditFile(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: EditFileArgs = validate_args(EditFileArgs, args)
        return await run_structured_edit(ctx, a.path, edit_transform(a))
