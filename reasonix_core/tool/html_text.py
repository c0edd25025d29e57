"""Readable text from an HTML page (``web_fetch``): headings, paragraphs, list
items, ``text (url)`` links; scripts, styles and navigation left out.

A module of its own so ``html.parser`` is imported when a page is fetched, not
when the tool registry is built at start-up.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

SKIP_TAGS = frozenset(
    {"script", "style", "nav", "noscript", "template", "svg", "iframe", "object", "canvas"}
)
BLOCK_TAGS = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "aside", "table",
        "blockquote", "dl", "dt", "dd", "figure", "figcaption", "title", "form",
        "fieldset", "details", "summary", "hr", "address",
    }
)  # fmt: skip
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_SPACE = re.compile(r"\s+")


class _TextExtractor(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.parts: list[str] = []
        self.skip = 0
        self.pre = 0
        self.lists = 0
        self.links: list[tuple[str | None, int]] = []
        self.line_start = True

    def _emit(self, text: str) -> None:
        if text:
            self.parts.append(text)
            self.line_start = text.endswith("\n")

    def _break(self, blank: bool) -> None:
        """End the current line; ``blank`` also leaves an empty line."""
        tail = "".join(self.parts[-2:])[-2:] if self.parts else "\n\n"
        have = len(tail) - len(tail.rstrip("\n"))
        want = 2 if blank else 1
        if have < want:
            self._emit("\n" * (want - have))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIP_TAGS:
            self.skip += 1
            return
        if self.skip:
            return
        if tag in HEADINGS:
            self._break(True)
            self._emit("#" * int(tag[1]) + " ")
        elif tag == "li":
            self._break(False)
            self._emit("  " * max(self.lists - 1, 0) + "- ")
        elif tag in ("ul", "ol"):
            self.lists += 1
            self._break(False)
        elif tag == "pre":
            self.pre += 1
            self._break(True)
        elif tag in ("br", "tr"):
            self._break(False)
        elif tag in BLOCK_TAGS:
            self._break(True)
        elif tag == "a":
            self.links.append((dict(attrs).get("href"), len(self.parts)))
        elif tag in ("td", "th") and not self.line_start:
            self._emit(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIP_TAGS:
            self.skip = max(self.skip - 1, 0)
            return
        if self.skip:
            return
        if tag in HEADINGS or tag in BLOCK_TAGS:
            self._break(True)
        elif tag in ("ul", "ol"):
            self.lists = max(self.lists - 1, 0)
            self._break(self.lists == 0)
        elif tag == "pre":
            self.pre = max(self.pre - 1, 0)
            self._break(True)
        elif tag == "tr":
            self._break(False)
        elif tag == "a" and self.links:
            href, start = self.links.pop()
            text = _SPACE.sub(" ", "".join(self.parts[start:])).strip()
            del self.parts[start:]
            url = self._resolve(href)
            if text and url and text != url:
                self._emit(f"{text} ({url})")
            else:
                self._emit(text or url or "")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.pre:
            self._emit(data)
            return
        text = _SPACE.sub(" ", data)
        if self.line_start:
            text = text.lstrip()
        self._emit(text)

    def _resolve(self, href: str | None) -> str | None:
        if not href:
            return None
        href = href.strip()
        if href.startswith("#") or href.lower().startswith(("javascript:", "data:")):
            return None
        return urljoin(self.base_url, href)

    def text(self) -> str:
        out = "".join(self.parts)
        out = re.sub(r"[ \t]+\n", "\n", out)
        out = re.sub(r"\n{3,}", "\n\n", out)
        return out.strip()


def readable_text(html: str, base_url: str = "") -> str:
    """Readable text from HTML: headings, paragraphs, list items, ``text (url)`` links."""
    parser = _TextExtractor(base_url)
    parser.feed(html)
    parser.close()
    return parser.text()
