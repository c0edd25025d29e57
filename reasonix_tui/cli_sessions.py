"""``reasonix goal``, ``compact``, ``rewind`` and ``cache``: commands over a saved session."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reasonix_tui.cli_common import EXIT_FAILED, EXIT_OK, SubParsers, fail


def add_goal_parser(sub: SubParsers) -> None:
    goal = sub.add_parser("goal", help="show or change a session's goal (Goal mode)")
    goal.add_argument(
        "goal_command",
        choices=("status", "pause", "resume", "clear"),
        help="show it, or pause, resume or clear it (nothing is driven)",
    )
    goal.add_argument("-c", "--continue", dest="goal_continue", action="store_true",
                      help="the newest session (the default)")  # fmt: skip
    goal.add_argument("-r", "--resume", dest="goal_resume", metavar="ID", help="that session")


def add_compact_parser(sub: SubParsers) -> None:
    compact = sub.add_parser("compact", help="compact a session's context now")
    compact.add_argument(
        "-r",
        "--resume",
        dest="compact_resume",
        metavar="ID",
        help="the session to compact (default: the newest of this workspace)",
    )


def add_rewind_parser(sub: SubParsers) -> None:
    from reasonix_core.checkpoint import SCOPES

    rewind = sub.add_parser(
        "rewind", help="list a session's turns, or rewind its code and/or chat to a turn"
    )
    rewind.add_argument("turn", nargs="?", type=int, metavar="TURN", help="the turn to rewind to")
    rewind.add_argument("--list", dest="rewind_list", action="store_true", help="list the turns")
    rewind.add_argument(
        "--scope",
        choices=SCOPES,
        default="both",
        help="code: the files; chat: the conversation; both (default)",
    )
    rewind.add_argument(
        "-c", "--continue", dest="rewind_continue", action="store_true",
        help="the newest session of this workspace (the default)",
    )  # fmt: skip
    rewind.add_argument("-r", "--resume", dest="rewind_resume", metavar="ID", help="session ID")
    rewind.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")  # fmt: skip
    rewind.add_argument(
        "--force", action="store_true", help="overwrite files changed outside Reasonix since"
    )
    rewind.add_argument("--json", dest="rewind_json", action="store_true", help="one JSON object")


def add_cache_parser(sub: SubParsers) -> None:
    cache = sub.add_parser(
        "cache", help="a session's prompt-cache account: hits, breaks and what they cost"
    )
    cache.add_argument(
        "-c",
        "--continue",
        dest="cache_continue",
        action="store_true",
        help="the newest session of this workspace (the default)",
    )
    cache.add_argument("-r", "--resume", dest="cache_resume", metavar="ID", help="session ID")
    cache.add_argument("--json", dest="cache_json", action="store_true", help="one JSON object")
    cache.add_argument(
        "--check", action="store_true", help="exit 1 when any cache break is unexplained"
    )


def goal_command(args: argparse.Namespace) -> int:
    """``reasonix goal status|pause|resume|clear``: the session's goal records only;
    nothing is driven (a goal is armed only by ``run --goal`` or the TUI)."""
    from contextlib import ExitStack

    from reasonix_core.agent.session import open_session
    from reasonix_core.agent.session_lock import hold_session
    from reasonix_core.errors import SessionBusy
    from reasonix_core.goal.state import GoalAction, GoalBook, GoalError
    from reasonix_core.home import reasonix_home

    loaded = open_session(reasonix_home() / "sessions", Path.cwd(), args.goal_resume)
    stack = ExitStack()
    try:
        if args.goal_command != "status":  # a change: not while a run has the session
            try:
                stack.enter_context(hold_session(loaded.store))
            except SessionBusy as exc:
                return fail(str(exc), EXIT_FAILED)
        book = GoalBook(loaded.store)
        goal = book.current()
        if args.goal_command == "status":
            print(goal.describe() if goal is not None else "no goal in this session")
            return EXIT_OK
        if goal is None:
            return fail("no goal in this session")
        if args.goal_command == "clear":
            book.clear()
            print(f"cleared {goal.id}")
            return EXIT_OK
        action = GoalAction.PAUSE if args.goal_command == "pause" else GoalAction.RESUME
        try:
            print(book.update(goal.id, goal.revision, action).describe())
        except GoalError as exc:
            return fail(f"goal {args.goal_command}: {exc}")
        return EXIT_OK
    finally:
        stack.close()
        loaded.store.close()


def compact_command(args: argparse.Namespace) -> int:
    import anyio

    from reasonix_core import events as ev
    from reasonix_core.permission.approver import FailClosedApprover
    from reasonix_core.session.build import build_session
    from reasonix_core.session.settings import RunSettings

    resume = args.compact_resume or args.resume_id
    settings = RunSettings(
        workspace=Path.cwd(), continue_last=resume is None, resume_id=resume, mcp_wait=False
    )

    async def go() -> bool:
        ok = False
        failure = ""
        async with build_session(settings, approver=FailClosedApprover()) as runtime:
            agent = runtime.agent
            before = agent.estimated_prompt_tokens()
            notices: list[ev.Notice] = []
            async for event in agent.compact():
                if isinstance(event, ev.Notice):
                    notices.append(event)
                elif isinstance(event, ev.CompactionFinished):
                    ok, failure = event.ok, event.failure
            for notice in notices:
                if not (failure and notice.text.endswith(failure)):  # said once, below
                    sys.stderr.write(f"{notice.level}: {notice.text}\n")
            after = agent.estimated_prompt_tokens()
            state = "compacted" if ok else "not compacted"
            sys.stdout.write(
                f"session {agent.session_id}: {state} (about {before:,} -> {after:,} tokens)\n"
            )
        if failure:
            sys.stderr.write(f"reasonix: error: compaction failed: {failure}\n")
        return ok

    return EXIT_OK if anyio.run(go) else EXIT_FAILED


def rewind_command(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from reasonix_core.agent.session import open_session
    from reasonix_core.agent.session_lock import hold_session
    from reasonix_core.checkpoint.report import (
        format_outcome,
        format_turns,
        outcome_json,
        turns_json,
    )
    from reasonix_core.checkpoint.rewind import rewind, summarize_turns
    from reasonix_core.errors import CheckpointError, RewindConflict, SessionBusy
    from reasonix_core.home import reasonix_home

    if args.rewind_list == (args.turn is not None):
        return fail("rewind: give either --list or a TURN number")
    if args.rewind_continue and args.rewind_resume:
        return fail("rewind: -c and -r cannot be combined")
    loaded = open_session(
        reasonix_home() / "sessions", Path.cwd(), args.rewind_resume or args.resume_id
    )
    # The folder the session's checkpoints were taken in (-r may name a session of
    # another workspace, and [sandbox] workspace_root may differ from here).
    workspace = Path(loaded.header.workspace or Path.cwd()).resolve()
    if args.rewind_list:
        turns = summarize_turns(loaded.store.path, workspace)
        text = _json_line(turns_json(turns)) if args.rewind_json else format_turns(turns)
        sys.stdout.write(text)
        return EXIT_OK
    try:
        # Not under a run that is writing the same session and files.
        with hold_session(loaded.store):
            outcome = rewind(
                loaded.store, workspace, args.turn, args.scope, lambda: datetime.now(UTC),
                dry_run=args.dry_run, force=args.force,
            )  # fmt: skip
    except SessionBusy as exc:
        return fail(str(exc), EXIT_FAILED)
    except (RewindConflict, CheckpointError) as exc:
        return fail(str(exc), EXIT_FAILED)
    finally:
        loaded.store.close()
    sys.stdout.write(_json_line(outcome_json(outcome)) if args.rewind_json else format_outcome(outcome))  # fmt: skip
    return EXIT_OK


def cache_command(args: argparse.Namespace) -> int:
    import json

    from reasonix_core.agent.cache_report import build_report, render_text
    from reasonix_core.agent.session import open_session, read_request_records
    from reasonix_core.home import reasonix_home

    resume = args.cache_resume or args.resume_id
    if resume and args.cache_continue:
        return fail("-c and -r name different sessions: give one")
    loaded = open_session(reasonix_home() / "sessions", Path.cwd(), resume)
    report = build_report(loaded.header.id, read_request_records(loaded.store.path))
    if args.cache_json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(report))
    if args.check and report.unexplained:
        if not args.cache_json:
            sys.stderr.write(
                f"reasonix: {report.unexplained} unexplained cache break(s) "
                f"in session {loaded.header.id}\n"
            )
        return EXIT_FAILED
    return EXIT_OK


def _json_line(data: object) -> str:
    import json

    return json.dumps(data, ensure_ascii=False) + "\n"
