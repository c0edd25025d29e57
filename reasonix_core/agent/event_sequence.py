"""The numbering of one agent's event stream.

Every event an agent yields - its own, its model calls', its compaction's -
takes the next ``seq`` from one counter and carries the agent's path, so
consumers can order and attribute events without knowing who made them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

from reasonix_core import events as ev

E = TypeVar("E", bound=ev.Event)


class EventSequence:
    def __init__(
        self,
        agent_path: tuple[str, ...] = (),
        *,
        observer: Callable[[ev.Event], None] | None = None,
    ) -> None:
        self.agent_path = agent_path
        self.seq = 0
        # Sees every event the agent makes, wherever it is made (the cache
        # ledger learns the PrefixChanged reasons this way).
        self.observer = observer

    def __call__(self, cls: type[E], **fields: object) -> E:
        self.seq += 1
        event = cls(seq=self.seq, agent_path=self.agent_path, **fields)
        if self.observer is not None:
            self.observer(event)
        return event

    def adopt(self, event: E) -> E:
        """A child's event (a subagent's, carrying its own path) renumbered into
        this stream, so the merged stream's ``seq`` keeps increasing."""
        self.seq += 1
        return dataclasses.replace(event, seq=self.seq)
