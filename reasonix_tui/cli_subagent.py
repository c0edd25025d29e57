"""``reasonix subagent list|run|try``: the subagent profiles, and one subagent run."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from reasonix_tui.cli_common import (
    EFFORT_HELP,
    EXIT_FAILED,
    EXIT_OK,
    SubParsers,
    fail,
    skip_httpx_cli,
    untrusted_project,
)


def add_subagent_parser(sub: SubParsers) -> None:
    subagent = sub.add_parser("subagent", help="list subagent profiles, run or try one")
    subagent_sub = subagent.add_subparsers(dest="subagent_command", metavar="ACTION")
    subagent_sub.add_parser("list", help="the profiles (skills with runAs: subagent)")
    for action, what in (
        ("run", "run a writer subagent with the regular permissions and sandbox"),
        ("try", "run a read-only subagent"),
    ):
        one = subagent_sub.add_parser(action, help=what)
        one.add_argument("prompt", help="the subagent's whole task")
        one.add_argument(
            "--profile",
            "-p",
            dest="subagent_profile",
            metavar="NAME",
            help="the subagent profile (see reasonix subagent list)",
        )
        one.add_argument(
            "--model", "-m", dest="subagent_model", metavar="MODEL", help="the subagent's model"
        )
        one.add_argument("--effort", dest="subagent_effort", metavar="LEVEL", help=EFFORT_HELP)
        if action == "run":
            one.add_argument(
                "-y", "--auto", dest="subagent_auto", action="store_true",
                help="permission preset auto for this run (else --permission-mode / config)",
            )  # fmt: skip
            one.add_argument(
                "--write-path",
                dest="write_paths",
                action="append",
                metavar="PATH",
                help="claim PATH for writing (repeatable; default: the whole workspace)",
            )


def subagent_command(args: argparse.Namespace) -> int:
    from reasonix_core.home import reasonix_home

    if args.subagent_command == "list":
        from reasonix_core.subagent_command import list_profiles

        for name, kind, description in list_profiles(Path.cwd(), reasonix_home()):
            sys.stdout.write(f"{name}\t{kind}\t{description}\n")
        return EXIT_OK
    skip_httpx_cli()
    import anyio

    from reasonix_core.session.settings import RunSettings
    from reasonix_core.subagent_command import run_subagent

    if not args.prompt.strip():
        return fail("the prompt is empty")
    if args.permission_mode == "plan":
        # A child has no plan-approval dialog of its own (docs/MODES.md#plan-mode).
        return fail("a subagent cannot run in plan mode; use ask, auto or yolo")
    refusal = untrusted_project()
    if refusal is not None:
        return fail(refusal.replace(", or pass --trust-project for this run", ""))
    settings = RunSettings(
        workspace=Path.cwd(),
        model=args.model,
        effort=args.effort,
        permission_mode="auto" if getattr(args, "subagent_auto", False) else args.permission_mode,
        add_dirs=list(args.add_dir or []),
        mcp_wait=True,
    )
    outcome = anyio.run(
        functools.partial(
            run_subagent,
            settings,
            args.prompt,
            read_only=args.subagent_command == "try",
            profile=args.subagent_profile,
            write_paths=tuple(args.write_paths) if getattr(args, "write_paths", None) else None,
            model=args.subagent_model,
            effort=args.subagent_effort,
            err=sys.stderr,
        )
    )
    sys.stdout.write(outcome.result.render() + "\n")
    return EXIT_OK if outcome.result.ok else EXIT_FAILED
