"""File logging for the TUI: never a stream handler while the screen is live."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from reasonix_core.fsutil import open_private, private_dir

_MARK = "_reasonix_file_handler"


def setup_file_logging(home: Path, level: int = logging.INFO) -> Path | None:
    """Send all ``logging`` records to ``<home>/logs/reasonix.log`` (rotating).

    Existing stream handlers on the root logger are removed so nothing paints
    over the UI. Returns the log path, or None if the directory is unusable
    (logging then goes nowhere rather than to the terminal).
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, logging.StreamHandler) and not isinstance(
            handler, logging.FileHandler
        ):
            root.removeHandler(handler)
    path = home / "logs" / "reasonix.log"
    try:
        private_dir(path.parent)
        open_private(path).close()  # 0600 before the handler opens it (fsutil)
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=2_000_000, backupCount=3, encoding="utf-8"
        )
    except OSError:
        root.addHandler(logging.NullHandler())
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    setattr(handler, _MARK, True)
    for old in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)
    return path
