"""The editor's files over ACP (``fs/read_text_file``, ``fs/write_text_file``):
the session's :class:`~reasonix_core.tool.text_files.TextFiles` when the client
advertises them, so the file tools see unsaved buffers and edits land in the
editor. The checks (sandbox, gate, observations) stay in the file tools."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import anyio
from acp import Client, RequestError

from reasonix_core.tool.text_files import TextFilesError

log = logging.getLogger(__name__)


class AcpTextFiles:
    """Reads and writes through the client (given only when it advertises both:
    one text of a file, the editor's, or the disk's). Remembers each write's
    text before and after, so the turn's ``tool_call_update`` shows the
    editor's diff (the disk may not have it yet)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.session_id = ""  # known once the session is built
        self._seen: dict[Path, str] = {}
        self._written: dict[Path, tuple[str | None, str]] = {}

    async def read_text(self, path: Path) -> str | None:
        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError as exc:
            if not await anyio.Path(path).exists():
                self._seen.pop(path, None)
                return None  # the editor's "not found", however it words it
            raise TextFilesError(_reason(exc)) from None
        self._seen[path] = response.content
        return response.content

    async def write_text(self, path: Path, text: str) -> None:
        try:
            await self.client.write_text_file(
                session_id=self.session_id, path=str(path), content=text
            )
        except RequestError as exc:
            raise TextFilesError(_reason(exc)) from None
        self._written[path] = (self._seen.get(path), text)
        self._seen[path] = text
        log.info("wrote %s through the editor", path)

    def take_write(self, path: Path) -> tuple[str | None, str] | None:
        """The text before and after the last write to ``path`` since last asked."""
        return self._written.pop(Path(os.path.realpath(path)), None)


def _reason(exc: RequestError) -> str:
    data = exc.data
    detail = (data.get("details") or data.get("message")) if isinstance(data, dict) else data
    return str(exc) + (f" ({detail})" if detail else "")
