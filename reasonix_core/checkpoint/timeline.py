"""The turns of a session and their checkpoints, read from the transcript.

Checkpoint records and branch markers are appended to the session's JSONL
like messages (``SessionStore.append_event``); this module folds them in file
order, the same order :func:`agent.session.read_session` applies branches:

- turn N is the N-th user message of the conversation as it stands;
- a checkpoint record belongs to the turn that was running when it was taken;
- a branch (chat rewind to turn N) drops turns N and later, with their
  checkpoints, from the conversation; the workspace itself is unchanged by a
  branch, so the latest checkpoint stays the latest one taken, whatever turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonix_core.agent.session import BRANCH, iter_records
from reasonix_core.checkpoint.store import Entry
from reasonix_core.messages import HOST_TURN, PASTED
from reasonix_core.pasted import PastedSpan, collapse, spans_from_meta

CHECKPOINT = "checkpoint"
#: When a turn began: ``{"type": "turn", "turn": N, "time": ...}``.
TURN = "turn"
# When a checkpoint was taken: before a tool that may write, at the end of a
# turn, after a code rewind.
AT_TOOL, AT_TURN_END, AT_REWIND = "tool", "end", "rewind"
_PROMPT_HEAD = 60


@dataclass(frozen=True, slots=True)
class Checkpoint:
    turn: int
    at: str
    time: str
    # The shadow store's tree; None when no store (no git on the host).
    tree: str | None
    not_kept: dict[str, str]
    # Bytes the store holds for this session so far (the size bound counts them).
    stored_bytes: int
    # False when bash changes are not covered (no git: only file-tool writes).
    covers_bash: bool
    # Without git: the files a file tool was about to write (before a call) or
    # had written (turn end), by state; None for absent.
    files: dict[str, Entry | None] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Checkpoint | None:
        turn = record.get("turn")
        if not isinstance(turn, int):
            return None
        tree = record.get("tree")
        not_kept = record.get("not_kept")
        files: dict[str, Entry | None] = {}
        raw_files = record.get("files")
        for name, state in raw_files.items() if isinstance(raw_files, dict) else ():
            if isinstance(state, list) and len(state) == 2:
                files[str(name)] = Entry(str(state[0]), str(state[1]))
            elif state is None:
                files[str(name)] = None
        return cls(
            turn=turn,
            at=str(record.get("at", "")),
            time=str(record.get("time", "")),
            tree=tree if isinstance(tree, str) else None,
            not_kept=dict(not_kept) if isinstance(not_kept, dict) else {},
            stored_bytes=int(record.get("bytes", 0) or 0),
            covers_bash=bool(record.get("bash", True)),
            files=files,
        )

    def to_record(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "at": self.at,
            "time": self.time,
            "tree": self.tree,
            "not_kept": self.not_kept,
            "bytes": self.stored_bytes,
            "bash": self.covers_bash,
            **(
                {"files": {n: [e.mode, e.oid] if e else None for n, e in self.files.items()}}
                if self.files
                else {}
            ),
        }


@dataclass(slots=True)
class Turn:
    number: int
    prompt: str
    # Messages before this turn's user message (a chat rewind keeps these).
    keep: int
    checkpoints: list[Checkpoint] = field(default_factory=list)
    started: str = ""
    host_turn: bool = False  # made by the host (a goal round), not typed by the user
    pasted: tuple[PastedSpan, ...] = ()  # large pastes the user saw collapsed

    @property
    def head(self) -> str:
        text = collapse(self.prompt, self.pasted).split("<workspace-context>")[0].strip()
        first = text.splitlines()[0] if text else ""
        first = first[:_PROMPT_HEAD] + ("…" if len(first) > _PROMPT_HEAD else "")
        return f"(goal round) {first}" if self.host_turn else first

    @property
    def time(self) -> str:
        return self.started or (self.checkpoints[0].time if self.checkpoints else "")

    @property
    def start(self) -> Checkpoint | None:
        """The first checkpoint of the turn: the workspace before its first write."""
        return self.checkpoints[0] if self.checkpoints else None

    @property
    def end(self) -> Checkpoint | None:
        return self.checkpoints[-1] if self.checkpoints else None


@dataclass(slots=True)
class Timeline:
    turns: list[Turn]
    # Every checkpoint in file order, whatever branch: the last one is what
    # Reasonix last saw of the workspace.
    history: list[Checkpoint]
    messages: int

    @property
    def latest(self) -> Checkpoint | None:
        return self.history[-1] if self.history else None

    def turn(self, number: int) -> Turn | None:
        return self.turns[number - 1] if 1 <= number <= len(self.turns) else None

    def start_of(self, number: int) -> Checkpoint | None:
        """The checkpoint a code rewind to ``number`` restores: the turn's first,
        or a later turn's first when the turn itself took none (it wrote nothing)."""
        for turn in self.turns[number - 1 :]:
            if turn.start is not None:
                return turn.start
        return None

    def since(self, checkpoint: Checkpoint) -> list[Checkpoint]:
        """``checkpoint`` and every one taken after it."""
        for index, candidate in enumerate(self.history):
            if candidate is checkpoint:
                return self.history[index:]
        return []


def read_timeline(session_path: Path) -> Timeline:
    roles: list[str] = []
    turns: list[Turn] = []
    history: list[Checkpoint] = []
    for _number, record in iter_records(session_path):
        kind = record.get("type")
        if kind == "message":
            message = record.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            roles.append(str(role))
            if role == "user":
                content = message.get("content") if isinstance(message, dict) else ""
                meta = message.get("meta") if isinstance(message, dict) else None
                host = isinstance(meta, dict) and meta.get(HOST_TURN) is True
                pasted = spans_from_meta(meta.get(PASTED)) if isinstance(meta, dict) else []
                turn = Turn(
                    len(turns) + 1,
                    str(content or ""),
                    len(roles) - 1,
                    host_turn=host,
                    pasted=tuple(pasted),
                )
                turns.append(turn)
        elif kind == CHECKPOINT:
            checkpoint = Checkpoint.from_record(record)
            if checkpoint is None:
                continue
            history.append(checkpoint)
            # A code rewind's checkpoint changes the latest state, not the turn's.
            if checkpoint.at != AT_REWIND and 1 <= checkpoint.turn <= len(turns):
                turns[checkpoint.turn - 1].checkpoints.append(checkpoint)
        elif kind == TURN:
            number = record.get("turn")
            if isinstance(number, int) and 1 <= number <= len(turns):
                turns[number - 1].started = str(record.get("time", ""))
        elif kind == BRANCH:
            keep = record.get("keep")
            if isinstance(keep, int) and 0 <= keep <= len(roles):
                del roles[keep:]
                turns = [t for t in turns if t.keep < keep]
    return Timeline(turns=turns, history=history, messages=len(roles))


def ends_with_branch(session_path: Path) -> bool:
    """True when no message was appended since the last chat rewind: the next
    request is the first after it."""
    last = None
    for _number, record in iter_records(session_path):
        if record.get("type") in ("message", BRANCH):
            last = record.get("type")
    return last == BRANCH
