"""``reasonix memory list|show|restore|forget``: the saved background facts of this
workspace (and the user's global ones) from the shell (docs/MEMORY.md).

The store is the one the tools use (``FactStore``); the lines are the ``memory``
tool's (``fact_line``). Refusals surface as ``ReasonixError`` so ``cli.py`` picks
the exit code."""

from __future__ import annotations

import argparse
from pathlib import Path

from reasonix_core.errors import ReasonixError

ACTIONS = ("list", "show", "restore", "forget")


class MemoryCommandError(ReasonixError):
    """A fact operation was refused (unknown id, already active, symlinked store...)."""


def add_memory_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    memory = sub.add_parser("memory", help="list, show, restore or forget saved background facts")
    actions = memory.add_subparsers(dest="memory_command", metavar="ACTION")
    listing = actions.add_parser("list", help="the facts, newest first")
    listing.add_argument(
        "--archived", action="store_true", help="the archived (forgotten) facts instead"
    )
    listing.add_argument("--scope", choices=("project", "global"), help="only this scope")
    listing.add_argument(
        "--type",
        dest="fact_type",
        choices=("user", "feedback", "project", "reference"),
        help="only facts of this type",
    )
    show = actions.add_parser("show", help="one fact, active or archived, in full")
    show.add_argument("fact_id", metavar="ID", help="the fact id (from memory list)")
    restore = actions.add_parser("restore", help="bring an archived fact back")
    restore.add_argument("fact_id", metavar="ID", help="the archived fact's id")
    forget = actions.add_parser("forget", help="archive a fact (it is never deleted)")
    forget.add_argument("fact_id", metavar="ID", help="the fact id")
    forget.add_argument("--reason", default="", help="why (kept in the archive)")


def run_memory(args: argparse.Namespace, home: Path, workspace: Path) -> str:
    """The command's output; raises :class:`MemoryCommandError` on a refusal."""
    from reasonix_core.memory.facts import FactError, FactStore
    from reasonix_core.memory.recall import staleness
    from reasonix_core.tool.builtin.memory import fact_line

    store = FactStore(home, workspace.resolve())
    try:
        if args.memory_command == "list":
            facts = store.list(scope=args.scope, type=args.fact_type, archived=args.archived)
            what = "archived facts" if args.archived else "facts"
            if not facts:
                return f"no {what} saved\n"
            now = store.clock()
            lines = [
                fact_line(fact, "" if args.archived else staleness(fact, now)) for fact in facts
            ]
            return f"{len(facts)} {what}:\n" + "\n".join(lines) + "\n"
        if args.memory_command == "show":
            return store.get(args.fact_id.strip()).to_markdown()
        if args.memory_command == "restore":
            fact = store.restore(args.fact_id.strip())
            return f"restored {fact.id} ({fact.title}) as revision {fact.revision}\n"
        fact = store.forget(args.fact_id.strip(), reason=args.reason)
        return f"archived {fact.id} ({fact.title}) as revision {fact.revision}\n"
    except FactError as exc:
        raise MemoryCommandError(f"memory {args.memory_command}: {exc}") from exc
