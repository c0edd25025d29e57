"""Assistant text: Markdown written through a batching ``MarkdownStream``."""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownStream


class AssistantBlock(Markdown):
    DEFAULT_CSS = """
    AssistantBlock {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        background: transparent;
        & > MarkdownBlock:last-child { margin-bottom: 0; }
    }
    """

    def __init__(self) -> None:
        super().__init__("")
        self._stream: MarkdownStream | None = None
        self.text = ""

    async def write(self, fragment: str) -> None:
        """Append a fragment; rapid fragments are coalesced by the stream."""
        self.text += fragment
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(fragment)

    async def finish(self) -> None:
        """Flush what is pending and stop the background updater."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()
