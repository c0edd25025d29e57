"""Routes subagent events to their cards, so a child's stream never reaches the
parent's transcript.

A child's own events carry its ``agent_path``; ``SubagentStarted`` (in the
spawner's stream) says which card that path belongs to and which tool call
spawned it. A fleet reports its plan (``FleetItemChanged``) before any child
starts, so each item has its card (``waiting``) from the start; the child that
runs the item then takes that card over. Cards hang under the spawning tool's
card, or, for a child's own children, inside the child's card.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from textual.widget import Widget

from reasonix_core.events import (
    Event,
    FleetItemChanged,
    Retrying,
    StepStarted,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    UsageReported,
)
from reasonix_tui.widgets.status_bar import StatusBar
from reasonix_tui.widgets.subagent_card import SubagentCard

log = logging.getLogger(__name__)

Path = tuple[str, ...]
# Mounts a card under the main agent's tool call (None: that card is gone).
ToolAnchor = Callable[[str], Widget | None]
AddBlock = Callable[[Widget], Awaitable[object]]


class SubagentRouter:
    def __init__(self, tool_card: ToolAnchor, add_block: AddBlock, status: StatusBar) -> None:
        self.tool_card = tool_card
        self.add_block = add_block
        self.status = status
        self.children: dict[Path, SubagentCard] = {}  # by the child's agent_path
        self.items: dict[tuple[Path, str, str], SubagentCard] = {}  # (spawner, call, item)

    def owns(self, event: Event) -> bool:
        return bool(event.agent_path) or isinstance(
            event, SubagentStarted | SubagentFinished | FleetItemChanged
        )

    async def dispatch(self, event: Event) -> None:
        match event:
            case FleetItemChanged(item_id=item_id, state=state, reason=reason):
                key = (event.agent_path, event.tool_call_id, item_id)
                card = self.items.get(key)
                if card is None:
                    card = SubagentCard(item_id, depends_on=event.depends_on, state=state)
                    self.items[key] = card
                    await self._mount(card, event.agent_path, event.tool_call_id)
                card.set_state(state, reason)
            case SubagentStarted(child_path=child, name=name):
                key = (event.agent_path, event.tool_call_id, event.fleet_item)
                card = self.items.get(key) if event.fleet_item else None
                if card is None:
                    card = SubagentCard(name)
                    await self._mount(card, event.agent_path, event.tool_call_id)
                card.bind(name)
                self.children[child] = card
            case SubagentFinished(child_path=child, ok=ok, status=status):
                card = self.children.get(child)
                if card is not None:
                    state = "cancelled" if status == "cancelled" else "done" if ok else "failed"
                    card.set_state(state, status=status)
            case _:
                await self._child_event(event)

    async def _child_event(self, event: Event) -> None:
        card = self.children.get(event.agent_path)
        if card is None:
            log.debug("event of an unknown subagent %r", event)
            return
        match event:
            case StepStarted(step=step):
                card.step_started(step)
            case ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
                card.tool_started(call_id, name, arguments)
            case ToolCallFinished(call_id=call_id, outcome=outcome, is_error=is_error):
                card.tool_finished(call_id, outcome, is_error)
            case UsageReported(usage=u, cost=cost, currency=currency):
                card.add_usage(
                    u.prompt_tokens, u.completion_tokens, u.cache_hit_tokens, cost, currency
                )
                self.status.add_cost(cost, currency)  # the session pays for its children
            case Retrying(reason=reason):
                card.retrying(reason)
            case TurnFailed(error=error):
                card.set_state("failed", reason=error)
            case _:
                pass  # text and reasoning deltas: the child's answer reaches the parent as its result

    async def _mount(self, card: SubagentCard, spawner: Path, tool_call_id: str) -> None:
        if spawner:
            parent = self.children.get(spawner)
            if parent is not None:
                await parent.add_card(card)
                return
        else:
            block = self.tool_card(tool_call_id)
            if block is not None:
                await block.mount(card)
                return
        await self.add_block(card)

    def forget(self) -> None:
        """The turn ended: its cards stay on screen, no longer addressable."""
        self.children.clear()
        self.items.clear()

    def cancel_running(self) -> None:
        """Esc: every child still running or waiting is cancelled with the turn."""
        for card in {*self.children.values(), *self.items.values()}:
            if card.state in ("running", "waiting"):
                card.set_state("cancelled")
