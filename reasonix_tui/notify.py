"""Terminal notifications: a turn that took long has ended, or an approval waits.

Written as OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty), OSC 777 (rxvt-unicode,
foot, VTE/GNOME Terminal, Ghostty) and a bell (everywhere else; tmux passes it on as
an alert). Terminals ignore the sequences they do not know. The text is stripped of
control characters so that what a model wrote can never end the sequence early.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f;]")
MAX_CHARS = 120


def sequences(title: str, body: str) -> str:
    title, body = (_CONTROL.sub(" ", s).strip()[:MAX_CHARS] for s in (title, body))
    return f"\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07\x07"


def notify(app: App[object], title: str, body: str) -> None:
    # Textual has no public way to write a raw sequence (App.bell writes only BEL);
    # copy_to_clipboard writes its OSC 52 through the same driver.
    driver = app._driver
    if driver is not None and not app.is_headless:
        driver.write(sequences(title, body))
