"""A unified diff, coloured line by line with theme variables."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


def render_diff(diff: str, max_lines: int | None = None) -> Content:
    # Deferred: this module is on the first frame's path, reasonix_core.permission is not.
    from reasonix_core.permission.summary import visible

    lines = diff.splitlines()
    hidden = 0
    if max_lines is not None and len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = lines[:max_lines]
    parts: list[Content] = []
    for raw in lines:
        # A file's bytes (or a model-made file name) may hold escape sequences or
        # bidi overrides: shown escaped, never sent to the terminal as they are.
        line = visible(raw)
        if line.startswith(("+++ ", "--- ")):
            style = "bold $text-muted"
        elif line.startswith("@@"):
            style = "$text-accent"
        elif line.startswith("+"):
            style = "$text-success on $success-muted 40%"
        elif line.startswith("-"):
            style = "$text-error on $error-muted 40%"
        else:
            style = ""
        parts.append(Content.styled(line or " ", style) if style else Content(line))
    if hidden:
        parts.append(Content.styled(f"… {hidden} more diff lines", "italic $text-muted"))
    return Content("\n").join(parts)


class DiffView(Static):
    DEFAULT_CSS = """
    DiffView {
        height: auto;
        padding: 0 1;
        background: $surface;
    }
    """

    def __init__(self, diff: str, *, max_lines: int | None = None, **kwargs: object) -> None:
        super().__init__(render_diff(diff, max_lines), **kwargs)  # type: ignore[arg-type]
        self.diff = diff
