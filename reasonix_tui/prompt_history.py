"""Prompts sent in a workspace, kept across restarts (Up/Down, Ctrl+R).

One file per workspace, ``<config_home>/prompt-history/<workspace key>.jsonl``,
one JSON string per line (a prompt with collapsed pastes: an object,
``{"prompt": shown, "pastes": {"1": text}}``, so a recalled prompt still sends
them; older versions skip such lines), mode 0600 (prompts may quote secrets). Appending is
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

from reasonix_tui.pasted_text import PromptText

log = logging.getLogger(__name__)

LIMIT = 500
# A prompt whose pastes hold more characters than this is not saved (Up still
# recalls it until the app exits), so the file stays quick to load at start-up.
MAX_SAVED_PASTES = 100_000
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
            prompt = _prompt(value)
            if prompt is not None and prompt.strip():
                prompts.append(prompt)
        return prompts[-LIMIT:]

    def append(self, prompt: str) -> None:
        if (
            isinstance(prompt, PromptText)
            and sum(map(len, prompt.pastes.values())) > MAX_SAVED_PASTES
        ):
            return  # recalled in this session only: the file stays small to load
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (_line(prompt) + "\n").encode("utf-8"))
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
        text = "".join(_line(p) + "\n" for p in kept)
        atomic_write_text(self.path, text, mode=0o600)
        self._lines = len(kept)


def _line(prompt: str) -> str:
    if isinstance(prompt, PromptText) and prompt.pastes:
        pastes = {str(number): text for number, text in prompt.pastes.items()}
        return json.dumps({"prompt": str(prompt), "pastes": pastes}, ensure_ascii=False)
    return json.dumps(str(prompt), ensure_ascii=False)


def _prompt(value: object) -> str | None:
    """A saved line's prompt; None for one that is neither shape (skipped)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return None
    shown, raw = value.get("prompt"), value.get("pastes")
    if not isinstance(shown, str) or not isinstance(raw, dict):
        return None
    pastes = {
        int(number): text
        for number, text in raw.items()
        if isinstance(number, str)
        and number.isascii()
        and number.isdigit()
        and isinstance(text, str)
    }
    return PromptText(shown, pastes)
