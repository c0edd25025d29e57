"""Launching the full-screen app: the only path that imports textual.

The first frame does not wait for the engine: importing the core (pydantic
config, providers) and reading the config cost about as much as importing
Textual, so :class:`EngineServices` is built in a thread once the session
screen is on screen (:class:`~reasonix_tui.deferred.DeferredServices`). A
config error found then ends the app and is reported here, after the terminal
is restored, exactly as it was when it surfaced before the screen was taken over.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reasonix_tui.engine import EngineServices
    from reasonix_tui.saved_session import SavedSession


def launch(args: argparse.Namespace) -> int:
    from reasonix_core.errors import ReasonixError
    from reasonix_core.home import reasonix_home
    from reasonix_tui.deferred import DeferredServices

    workspace = Path.cwd().resolve()
    home = reasonix_home()
    # Cheap (two small files, stdlib only): the dialog, if any, comes before any build.
    from reasonix_core.trust import review_project

    review = review_project(workspace, home)
    # The session to reopen is drawn without waiting for the engine, which then
    # reopens exactly that one (``-c`` picks the newest once, for both).
    saved = None
    notes: tuple[str, ...] = ()
    if args.continue_last and not args.resume_id and not _has_sessions(home, workspace):
        # Nothing to continue: say so, and start a new session rather than fail.
        notes = (NO_SESSION_TO_CONTINUE,)
        args.continue_last = False
    if args.continue_last or args.resume_id:
        from reasonix_tui.saved_session import SavedSession

        saved = SavedSession(home / "sessions", workspace, args.resume_id)

    services = DeferredServices(
        functools.partial(_build_engine, args, workspace, home, saved),
        workspace=workspace,
        config_home=home,
        permission_mode=args.permission_mode,
        trust_review=review,
        saved=saved,
    )
    services.startup_notes = notes
    from reasonix_tui.app import run_app

    code = run_app(services)
    error = services.error
    if isinstance(error, ReasonixError):
        raise error  # config errors: the CLI prints them (exit 2)
    if error is not None:
        raise ReasonixError(
            f"could not start: {type(error).__name__}: {error} "
            f"(details in {home / 'logs' / 'reasonix.log'})"
        ) from error
    return code


NO_SESSION_TO_CONTINUE = "No earlier session in this folder to continue (-c): this is a new one."


def _has_sessions(home: Path, workspace: Path) -> bool:
    from reasonix_core.home import session_dir

    folder = session_dir(home / "sessions", workspace)
    return folder.is_dir() and any(folder.glob("*.jsonl"))


def _build_engine(
    args: argparse.Namespace, workspace: Path, home: Path, saved: SavedSession | None
) -> EngineServices:
    """The engine, in a worker thread after the first frame."""
    from reasonix_tui.engine import EngineServices

    resume_id = saved.session_id if saved is not None else None
    engine = EngineServices(
        workspace,
        model=args.model,
        effort=args.effort,
        permission_mode=args.permission_mode,
        continue_last=args.continue_last and resume_id is None,
        resume_id=resume_id or args.resume_id,
        home=home,
        add_dirs=getattr(args, "add_dir", None) or [],
        settings_files=getattr(args, "settings", None) or [],
    )
    # The first answer's rendering (Rich Markdown, Pygments and the common lexers):
    # loaded here, off the event loop, rather than when its first token arrives.
    from reasonix_tui.widgets.assistant_block import warm_up

    warm_up()
    return engine
