"""Launching the full-screen app: the only path that imports textual."""

from __future__ import annotations

import argparse
from pathlib import Path


def launch(args: argparse.Namespace) -> int:
    from reasonix_tui.engine import EngineServices

    # Config errors surface here, before the screen is taken over (exit 2).
    services = EngineServices(
        Path.cwd(),
        model=args.model,
        effort=args.effort,
        permission_mode=args.permission_mode,
        continue_last=args.continue_last,
        resume_id=args.resume_id,
    )
    from reasonix_tui.app import run_app

    return run_app(services)
