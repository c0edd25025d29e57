"""The front matter block of a Markdown prompt file (custom commands, ``SKILL.md``).

A file may open with ``---``, ``key: value`` lines and a closing ``---``. This
reads the small YAML subset such files use in practice (Claude Code's commands
and skills among them), without a YAML dependency:

- ``key: value``, the value optionally quoted; `` #`` starts a comment in an
  unquoted value, as in YAML;
- a value continued on indented lines (folded into one line);
- lists, ``key: [a, b]`` or indented ``- item`` lines;
- block text, ``key: |`` (lines kept) or ``key: >`` (folded);
- anything else indented under a key (a nested map such as ``metadata:``) is kept
  as that key's raw text, so an unknown block never stops a file from loading.

Keys are case-insensitive (``runAs`` is ``runas``). Every value remembers the
line it starts on, so a caller can name the line of a bad value. A line that is
not ``key: value`` or a block that is never closed raises
:class:`FrontMatterError` with its line.
"""

from __future__ import annotations

from dataclasses import dataclass

FrontMatterValue = str | tuple[str, ...]


class FrontMatterError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class FrontMatterEntry:
    value: FrontMatterValue
    line: int  # 1-based line of the key in the file


@dataclass(frozen=True, slots=True)
class FrontMatter:
    entries: dict[str, FrontMatterEntry]
    # 1-based line of the body's first line (1 when the file has no front matter).
    body_line: int = 1

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def text(self, key: str, default: str = "") -> str:
        """The value as one line of text (a list is joined with ``", "``)."""
        entry = self.entries.get(key)
        if entry is None:
            return default
        value = entry.value
        return value if isinstance(value, str) else ", ".join(value)

    def line(self, key: str) -> int | None:
        entry = self.entries.get(key)
        return entry.line if entry is not None else None


def split_front_matter(text: str) -> tuple[FrontMatter, str]:
    """``(front matter, body)``; a file without an opening ``---`` is all body."""
    text = text.removeprefix("\ufeff")
    if not text.startswith("---\n"):
        return FrontMatter({}), text
    lines = text.split("\n")
    try:
        end = next(i for i, line in enumerate(lines[1:], start=1) if line.rstrip() == "---")
    except StopIteration:
        raise FrontMatterError(1, "front matter is not closed with '---'") from None
    entries: dict[str, FrontMatterEntry] = {}
    index = 1
    while index < end:
        line = lines[index]
        number = index + 1
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise FrontMatterError(number, "indented line outside a value")
        key, sep, rest = line.partition(":")
        if not sep or not key.strip():
            raise FrontMatterError(number, "front matter line is not 'key: value'")
        block: list[str] = []
        while index < end and (not lines[index].strip() or lines[index][0] in " \t"):
            block.append(lines[index])
            index += 1
        entries[key.strip().lower()] = FrontMatterEntry(_value(rest.strip(), block), number)
    return FrontMatter(entries, body_line=end + 2), "\n".join(lines[end + 1 :])


def _value(head: str, block: list[str]) -> FrontMatterValue:
    indented = [line.strip() for line in block if line.strip()]
    if head[:1] in ("|", ">"):
        return _block_text(head[0], block)
    if not head and indented and all(item.startswith("-") for item in indented):
        return tuple(_scalar(item[1:].strip()) for item in indented)
    inner = head[1:-1].strip()
    # A flow list is one bracket pair; Claude Code's ``argument-hint: [pr] [priority]``
    # is text, not the list "pr] [priority".
    if (
        head.startswith("[")
        and head.endswith("]")
        and not indented
        and "[" not in inner
        and "]" not in inner
    ):
        return tuple(_scalar(item.strip()) for item in inner.split(",")) if inner else ()
    if not head:  # a nested map or other structure: kept as text
        return "\n".join(indented)
    return " ".join([_scalar(head), *indented]) if indented else _scalar(head)


def _block_text(style: str, block: list[str]) -> str:
    present = [line for line in block if line.strip()]
    margin = min((len(line) - len(line.lstrip()) for line in present), default=0)
    kept = [line[margin:].rstrip() for line in block]
    while kept and not kept[-1]:
        kept.pop()
    if style == "|":
        return "\n".join(kept)
    paragraphs = "\n".join(kept).split("\n\n")
    return "\n".join(" ".join(p.split()) for p in paragraphs)


def _scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    comment = text.find(" #")
    return text[:comment].rstrip() if comment >= 0 else text
