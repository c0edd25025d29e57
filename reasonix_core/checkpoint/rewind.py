"""Rewinding a session: code, chat, both, or a fork (docs/REWIND.md).

- **code**: the workspace goes back to the start of a turn
  (:mod:`checkpoint.restore`); a new checkpoint records the result, so a
  rewind can itself be rewound, and the file ledger forgets the paths
  (the next edit of one must read it again).
- **chat**: a branch record is appended to the transcript; the conversation
  then continues from just before the turn's user message. Nothing is
  rewritten, and the next request is a byte-exact extension of the last
  request sent before that turn (it carries ``PrefixChanged("rewind")``).
- **fork**: a new session holding the conversation before the turn; the
  original is untouched.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from reasonix_core.agent.session import (
    BRANCH,
    LoadedSession,
    SessionStore,
    forked_header,
)
from reasonix_core.checkpoint.preimages import PreImageStore
from reasonix_core.checkpoint.recorder import Checkpointer, store_root
from reasonix_core.checkpoint.restore import CodePlan, apply_code, folders, plan_code
from reasonix_core.checkpoint.store import MODE_LINK, Change, Entry, ShadowStore
from reasonix_core.checkpoint.timeline import (
    AT_REWIND,
    Checkpoint,
    Timeline,
    Turn,
    read_timeline,
)
from reasonix_core.errors import CheckpointError, RewindConflict, UsageError
from reasonix_core.tool.ledger import FileLedger

Scope = Literal["code", "chat", "both"]  # checkpoint.SCOPES, for the type checker
_UNBOUNDED_MB = 1 << 30


@dataclass(frozen=True, slots=True)
class TurnSummary:
    number: int
    time: str
    head: str
    changes: tuple[Change, ...]
    covers_bash: bool
    not_kept: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RewindOutcome:
    turn: int
    scope: str
    plan: CodePlan | None
    changed: tuple[str, ...]
    branched: bool
    dry_run: bool
    # Why the code was not rewound although asked (nothing recorded...).
    note: str = ""


def _store(session_path: Path, workspace: Path) -> ShadowStore | None:
    if not store_root(session_path).is_dir():
        return None
    return ShadowStore.open(store_root(session_path), workspace)


def summarize_turns(session_path: Path, workspace: Path) -> list[TurnSummary]:
    """Every turn of the conversation with what it changed in the workspace."""
    timeline = read_timeline(session_path)
    store = _store(session_path, workspace)
    out: list[TurnSummary] = []
    for turn in timeline.turns:
        changes: tuple[Change, ...] = ()
        start, end = turn.start, turn.end
        if store is not None and start and end and start.tree and end.tree:
            changes = tuple(store.changes(start.tree, end.tree))
        elif not any(c.covers_bash for c in turn.checkpoints):
            changes = tuple(_copied_changes(turn.checkpoints))
        not_kept: dict[str, str] = {}
        for checkpoint in turn.checkpoints:
            not_kept.update(checkpoint.not_kept)
        covers = all(c.covers_bash for c in turn.checkpoints)
        out.append(TurnSummary(turn.number, turn.time, turn.head, changes, covers, not_kept))
    return out


def _turn(timeline: Timeline, number: int) -> Turn:
    turn = timeline.turn(number)
    if turn is None:
        count = len(timeline.turns)
        raise UsageError(
            f"no turn {number} in this session (it has {count} turn{'s' * (count != 1)})"
        )
    return turn


def _copied_changes(checkpoints: list[Checkpoint]) -> list[Change]:
    """Without git: each copied file's first and last recorded state."""
    first: dict[str, Entry | None] = {}
    last: dict[str, Entry | None] = {}
    for checkpoint in checkpoints:
        for name, state in checkpoint.files.items():
            first.setdefault(name, state)
            last[name] = state
    return [
        Change(name, first[name], last[name], None, None)
        for name in sorted(first)
        if first[name] != last[name]
    ]


def plan_rewind(session_path: Path, workspace: Path, number: int) -> CodePlan | None:
    """The code rewind to the start of turn ``number``; None when nothing
    was written since (no checkpoint at or after it)."""
    timeline = read_timeline(session_path)
    _turn(timeline, number)
    target = timeline.start_of(number)
    latest = timeline.latest
    if target is None or latest is None:
        return None
    since = timeline.since(target)
    not_kept: dict[str, str] = {}
    for checkpoint in since:
        not_kept.update(checkpoint.not_kept)
    if not any(c.covers_bash for c in since):
        changes = _copied_changes(since)
        return plan_code(Path(os.path.realpath(workspace)), changes, not_kept)
    if any(c.tree is None for c in since):
        raise CheckpointError("a checkpoint since that turn failed; the code cannot be rewound")
    store = _store(session_path, workspace)
    if store is None:
        raise CheckpointError(f"the checkpoint store {store_root(session_path)} is missing")
    assert target.tree is not None and latest.tree is not None
    return plan_code(
        store.workspace, store.changes(target.tree, latest.tree), not_kept, target.tree, latest.tree
    )


def rewind(
    session: SessionStore,
    workspace: Path,
    number: int,
    scope: Scope,
    clock: Callable[[], datetime],
    *,
    dry_run: bool = False,
    force: bool = False,
    ledger: FileLedger | None = None,
    checkpointer: Checkpointer | None = None,
) -> RewindOutcome:
    """Rewind ``session`` to the start of turn ``number``.

    Raises :class:`RewindConflict` (nothing done) when a file the code rewind
    would change was changed outside Reasonix, unless ``force``.
    ``checkpointer``: the running session's (the TUI), so its record of the
    last tree stays true; otherwise one is opened here.
    """
    path = session.path
    timeline = read_timeline(path)
    turn = _turn(timeline, number)
    plan = None
    note = ""
    if scope in ("code", "both"):
        plan = plan_rewind(path, workspace, number)
        if plan is None:
            note = "no file was changed since that turn"
        elif plan.conflicts and not force and not dry_run:
            raise RewindConflict(list(plan.conflicts))
    if dry_run:
        return RewindOutcome(number, scope, plan, (), False, True, note)
    changed: tuple[str, ...] = ()
    if plan is not None and plan.actions:
        touched = tuple(a.path for a in plan.actions)
        try:
            store = _store(path, workspace)
            if store is not None and plan.target_tree:
                with store.locked():
                    dirs = folders(store.entries(plan.target_tree))
                    changed = tuple(apply_code(store, plan, dirs))
            else:
                copies = PreImageStore(store_root(path), workspace)
                changed = tuple(apply_code(copies, plan, None))
        finally:
            # Even a rewind that stopped part way: the ledger forgets what it may
            # have touched, and the checkpoint records what the disk now holds.
            if ledger is not None:
                for name in touched:
                    ledger.forget(Path(os.path.realpath(workspace)) / name)
            # What the rewind restored is already stored: no size bound to apply.
            recorder = checkpointer or Checkpointer.open(session, workspace, clock, _UNBOUNDED_MB)
            recorder.take(len(timeline.turns), AT_REWIND, force=True, names=touched)
    branched = False
    if scope in ("chat", "both"):
        session.append_event(
            BRANCH, turn=number, keep=turn.keep, time=clock().isoformat(timespec="seconds")
        )
        branched = True
    return RewindOutcome(number, scope, plan, changed, branched, False, note)


def fork(
    sessions_root: Path, workspace: Path, loaded: LoadedSession, number: int, now: datetime
) -> SessionStore:
    """A new session holding the conversation before turn ``number``."""
    timeline = read_timeline(loaded.store.path)
    turn = _turn(timeline, number)
    new = forked_header(loaded.header, now, forked_at_turn=number)
    store = SessionStore.create(sessions_root, workspace, new)
    for message in loaded.messages[: turn.keep]:
        store.append(message)
    # The fork point, as a branch: the first request in the fork names the rewind.
    store.append_event(BRANCH, turn=number, keep=turn.keep, time=now.isoformat(timespec="seconds"))
    return store


def parse_fork(text: str) -> tuple[str, int] | None:
    """``ID@TURN`` -> (ID, TURN); None when ``text`` names no turn."""
    session_id, at, number = text.rpartition("@")
    if not at:
        return None
    if not session_id or not number.isdigit() or int(number) < 1:
        raise UsageError(f"{text!r}: expected ID@TURN with a turn number from 1")
    return session_id, int(number)


def preview(session_path: Path, workspace: Path, plan: CodePlan) -> str:
    """What the code rewind would change, as unified diffs (from the files as
    Reasonix last left them to the checkpoint)."""
    from reasonix_core.tool.builtin._fs import looks_binary, unified_diff

    source: ShadowStore | PreImageStore | None = _store(session_path, workspace)
    if source is None or not plan.target_tree:
        source = PreImageStore(store_root(session_path), workspace)
    entries = [e for a in plan.actions for e in (a.target, a.latest) if e is not None]
    contents = source.blobs([e.oid for e in entries])
    parts: list[str] = []
    for action in plan.actions:
        old, new = action.latest, action.target
        if old and new and old.oid == new.oid:
            parts.append(f"mode {action.path}: {old.mode} -> {new.mode}\n")
            continue
        if MODE_LINK in (old.mode if old else "", new.mode if new else ""):
            shown = [_describe(e, contents) for e in (old, new)]
            parts.append(f"{action.path}: {shown[0]} => {shown[1]}\n")
            continue
        before = contents[old.oid] if old else b""
        after = contents[new.oid] if new else b""
        if looks_binary(before[:8192]) or looks_binary(after[:8192]):
            parts.append(f"binary {action.path} ({action.kind})\n")
            continue
        diff = unified_diff(
            before.decode("utf-8", "replace"), after.decode("utf-8", "replace"), action.path
        )
        parts.append(diff if diff is not None else f"{action.path}: too large to show\n")
    return "".join(parts)


def _describe(entry: Entry | None, contents: dict[str, bytes]) -> str:
    if entry is None:
        return "(none)"
    text = contents[entry.oid].decode("utf-8", "replace")
    return f"symlink -> {text}" if entry.mode == MODE_LINK else f"file ({len(text)} bytes)"
