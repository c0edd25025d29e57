"""What the ``reasonix`` subcommands share: exit codes, the error line, the parser class
and the checks several of them make before building anything.

Imports only the standard library at module level: ``reasonix --version`` and the
parser's construction load none of the core.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
# Checked against what the selected provider accepts (its efforts()) once the
# model is resolved, the same way as [agent] effort: no vocabulary of our own.
EFFORT_HELP = (
    "reasoning effort (auto, disabled, low, medium, high, max...: what the provider accepts)"
)

SubParsers = argparse._SubParsersAction  # type: ignore[type-arg]


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's one error line: a bad flag of `reasonix run` says
    `reasonix: error: ...`, not `reasonix run: error: ...`, after the usage."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"reasonix: error: {message} (see {self.prog} --help)\n")


def fail(message: str, code: int = EXIT_USAGE) -> int:
    sys.stderr.write(f"reasonix: error: {message}\n")
    return code


def skip_httpx_cli() -> None:
    """httpx imports its optional command-line module (rich, click, pygments: ~35 ms)
    at import time whenever those are installed, as they are beside textual. Headless
    runs never use it; a None entry makes that import fail fast, and httpx falls back
    to its stub."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def untrusted_project(workspace: Path | None = None) -> str | None:
    """Why a headless run must not start in ``workspace`` (default: here), or None.
    Checked before anything is built: an untrusted folder's settings could send
    the key elsewhere or start commands, and nobody is here to be asked."""
    from reasonix_core.home import reasonix_home
    from reasonix_core.trust import review_project

    review = review_project(workspace or Path.cwd(), reasonix_home())
    if not review.needs_trust:
        return None
    return (
        f"{review.folder} is not trusted and its project files set "
        f"{review.summary()}; run `reasonix trust` to trust this folder, "
        "or pass --trust-project for this run"
    )


def absolute_dirs(paths: list[Path]) -> list[Path] | str:
    """``--add-dir`` values as absolute folders, or the usage error to print."""
    out: list[Path] = []
    for path in paths:
        full = path.expanduser().absolute()
        if not full.is_dir():
            return f"--add-dir {path}: not a directory"
        out.append(full)
    return out


def _settings_value(value: str) -> str:
    """Inline JSON as given; a file relative to where the command was typed (not
    to ``--workspace``), as the shell the user typed it in reads it."""
    if value.lstrip().startswith("{"):
        return value
    return str(Path(value).expanduser().absolute())


def add_settings_option(parser: argparse.ArgumentParser, dest: str) -> None:
    """``--settings FILE|JSON`` (Claude Code's spelling), on the TUI and on ``run``."""
    parser.add_argument(
        "--settings",
        dest=dest,
        action="append",
        type=_settings_value,
        metavar="FILE|JSON",
        help="also read hooks and permissions from this settings.json file or inline JSON "
        "(Claude Code's format; repeatable; your own, so no trust needed)",
    )
