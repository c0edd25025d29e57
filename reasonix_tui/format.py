"""Display formatting in one place, so snapshots only depend on inputs."""

from __future__ import annotations

import json
from typing import Any

KEY_ARGUMENTS = ("path", "file_path", "command", "cmd", "pattern", "query", "url", "glob", "name")


def tokens(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M"


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


UNKNOWN_COST = "cost unknown"


def cost(amount: float, currency: str = "USD", unpriced: bool = False) -> str:
    """``$0.0123``; ``unpriced``: some requests had no known price, so the figure is
    a lower bound (``$0.0123+?``), or ``cost unknown`` when nothing was priced (never
    a made-up ``$0.0000``)."""
    symbol = {"USD": "$", "CNY": "¥"}.get(currency, "")
    if unpriced and amount == 0:
        return UNKNOWN_COST
    figure = f"{symbol}{amount:.4f}" if amount < 1 else f"{symbol}{amount:.2f}"
    return f"{figure}+?" if unpriced else figure


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "-"


def parse_arguments(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments else {}
    except (ValueError, RecursionError):  # not JSON, or a hostile 100,000-deep nesting
        return {}
    return value if isinstance(value, dict) else {}


def key_argument(arguments: dict[str, Any] | str, width: int = 72, tool: str = "") -> str:
    """The one argument that identifies a tool call (path, command, pattern...)."""
    args = parse_arguments(arguments) if isinstance(arguments, str) else arguments
    if isinstance(args.get("items"), list):  # a fleet: its items are cards below
        count = len(args["items"])
        return f"{count} item{'' if count == 1 else 's'}"
    value: Any = next((args[k] for k in KEY_ARGUMENTS if isinstance(args.get(k), str)), None)
    if tool == "update_goal":  # what changes (its new objective), never the goal's raw id
        objective, action = args.get("objective"), args.get("action")
        value = objective if isinstance(objective, str) and objective.strip() else action
        value = value if isinstance(value, str) else ""
    if value is None and isinstance(args.get("plan"), str):
        value = _title(args["plan"])  # a Markdown plan: its first line, not its markup
    if value is None:
        value = next((v for v in args.values() if isinstance(v, str)), "")
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _title(markdown: str) -> str:
    """The first non-blank line of a Markdown text, without its heading, list or
    emphasis marks ("## Rename greet" -> "Rename greet")."""
    first = next((line for line in markdown.splitlines() if line.strip()), "")
    return first.strip().lstrip("#>*-+ ").replace("**", "").replace("`", "").strip()


def find_diff(text: str) -> str | None:
    """The unified diff inside ``text`` (from the first ``--- ``/``+++ `` pair), if any."""
    lines = text.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].startswith("--- ") and lines[i + 1].startswith("+++ "):
            return "\n".join(lines[i:])
    return None


# What a terminal obeys instead of showing: the C0 controls but tab, newline and
# carriage return, DEL and the C1 controls (ESC starts a title, a screen clear, an OSC 52
# clipboard write; 0x9b and 0x9d are CSI and OSC alone). Spelled out instead.
_CONTROLS = {
    code: f"\\x{code:02x}"
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
    if code not in (0x09, 0x0A, 0x0D)
}


def terminal_safe(text: str) -> str:
    """Text from the model, a provider or a tool as the transcript draws it: its control
    characters spelled out (``\\x1b``), so none reaches the terminal; everything else,
    emoji joiners and right-to-left text included, as it is."""
    return text.translate(_CONTROLS)


def one_line(text: str, limit: int | None = None) -> str:
    """Model or repository text on one line: every line break (``\\r``, ``\\u2028``...)
    and run of spaces made one space, invisible characters escaped, cut at ``limit``.
    In a dialog it can neither fake a line nor send an escape to the terminal."""
    # Deferred: this module is on the first frame's path, reasonix_core.permission is not.
    from reasonix_core.permission.summary import visible

    flat = visible(" ".join(text.split()))
    return flat if limit is None or len(flat) <= limit else flat[: limit - 1] + "…"


def exact_line(text: str) -> str:
    """A name (a path) on one line, exactly: invisible characters, newlines and tabs
    escaped, its spaces kept, nothing cut."""
    from reasonix_core.permission.summary import visible

    return visible(text).replace("\n", "\\n").replace("\t", "\\t")
