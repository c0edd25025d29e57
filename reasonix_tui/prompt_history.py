"""Prompts sent in a workspace, kept across restarts (Up/Down, Ctrl+R).

One file per workspace, ``<config_home>/prompt-history/<workspace key>.jsonl``,
one JSON string per line, mode 0600 (prompts may quote secrets). Appending is
one ``write`` to a file opened ``O_APPEND``; once it holds twice ``LIMIT`` lines
it is rewritten atomically with the newest ``LIMIT``. Unreadable lines are
skipped; a history that cannot be read or written never stops a prompt.
Nothing here imports Textual.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

LIMIT = 500
FOLDER = "prompt-history"


def history_path(config_home: Path, workspace: Path) -> Path:
    from reasonix_core.agent.session import workspace_key

    return config_home / FOLDER / f"{workspace_key(workspace)}.jsonl"


class PromptHistory:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lines = 0

    def load(self) -> list[str]:
        """The newest ``LIMIT`` prompts, oldest first."""
        try:
            raw = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("cannot read the prompt history %s: %s", self.path, exc)
            return []
        self._lines = len(raw)
        prompts: list[str] = []
        for line in raw:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, str) and value.strip():
                prompts.append(value)
        return prompts[-LIMIT:]

    def append(self, prompt: str) -> None:
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (json.dumps(prompt, ensure_ascii=False) + "\n").encode("utf-8"))
            finally:
                os.close(fd)
            self._lines += 1
            if self._lines > 2 * LIMIT:
                self._rewrite()
        except OSError as exc:
            log.warning("cannot save to the prompt history %s: %s", self.path, exc)

    def _rewrite(self) -> None:
        from reasonix_core.fsutil import atomic_write_text

        kept = self.load()
        text = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in kept)
        atomic_write_text(self.path, text, mode=0o600)
        self._lines = len(kept)
