"""The session's events and saved messages as ACP session updates."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from acp.helpers import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import ToolCallLocation, ToolCallStart

from reasonix_core import events as ev
from reasonix_core.acp.client_files import AcpTextFiles
from reasonix_core.acp.tool_calls import EDIT_TOOLS, ToolView, tool_view
from reasonix_core.messages import Message
from reasonix_core.provider.searches import past_searches

# A diff shows files up to this size (the editor gets both texts whole).
_DIFF_LIMIT = 1 << 20


class TurnUpdates:
    """One turn's events to updates; remembers an edited file's text before the
    call, so its update carries a ``diff`` (path, oldText, newText)."""

    def __init__(self, workspace: Path, files: AcpTextFiles | None = None) -> None:
        self.workspace = workspace.resolve()
        # The editor's files: an edit made there shows the editor's texts.
        self.files = files
        self._before: dict[str, tuple[Path, str | None]] = {}
        # todo_write's list by call, shown as the plan once the call succeeds.
        self._todos: dict[str, list[Any]] = {}
        # Calls started and not finished (a cancelled turn ends them as failed).
        self.open_calls: list[str] = []

    def notice(self, text: str) -> Any:
        return update_agent_thought_text(text + "\n")

    def of(self, event: ev.Event) -> list[Any]:
        if event.agent_path:
            return []  # a subagent's own events: its answer reaches us as a tool result
        match event:
            case ev.TextDelta(text=text):
                return [update_agent_message_text(text)]
            case ev.ReasoningDelta(text=text):
                return [update_agent_thought_text(text)]
            case ev.ToolCallStarted(call_id=call_id, name=name, arguments=arguments):
                view = tool_view(name, arguments, self.workspace)
                if name == "todo_write":
                    self._todos[call_id] = _plan_entries(view.raw_input)
                if name in EDIT_TOOLS and view.paths:
                    self._before[call_id] = (view.paths[0], self._text(view.paths[0]))
                self.open_calls.append(call_id)
                return [
                    _start(call_id, view, "pending"),
                    update_tool_call(call_id, status="in_progress"),
                ]
            case ev.ToolCallFinished(call_id=call_id, result=result, is_error=is_error):
                if call_id in self.open_calls:
                    self.open_calls.remove(call_id)
                content: list[Any] = [tool_content(text_block(result))] if result else []
                before = self._before.pop(call_id, None)
                if before is not None and not is_error:
                    path, old = before
                    new = self._text(path)
                    written = self.files.take_write(path) if self.files is not None else None
                    if written is not None:
                        old, new = written
                    if new is not None and new != old:
                        content.append(tool_diff_content(str(path), new, old))
                done = update_tool_call(
                    call_id, status="failed" if is_error else "completed", content=content
                )
                entries = self._todos.pop(call_id, None)
                if entries is not None and not is_error:
                    return [done, update_plan(entries)]
                return [done]
            case ev.WebSearched():
                return [_web_search(event)]
            case ev.ToolProgress(call_id=call_id, output=output, message=message) if call_id:
                # A running command's last lines (bash) or a tool's progress message
                # (MCP): the call's content so far, replaced by the result at the end.
                live = output or message
                if not live:
                    return []
                content = [tool_content(text_block(live))]
                return [update_tool_call(call_id, status="in_progress", content=content)]
            case ev.Notice(level=level, text=text) if level != "info":
                return [update_agent_thought_text(f"{level}: {text}\n")]
            case _:
                return []

    def cancelled(self) -> list[Any]:
        """The open calls as failed: the turn was cancelled while they ran."""
        done = [
            update_tool_call(
                call_id, status="failed", content=[tool_content(text_block("cancelled"))]
            )
            for call_id in self.open_calls
        ]
        self.open_calls.clear()
        return done

    def _text(self, path: Path) -> str | None:
        """The file's text when it is a regular file inside the workspace, else None."""
        try:
            real = path.resolve()
            real.relative_to(self.workspace)
            if not real.is_file() or real.stat().st_size > _DIFF_LIMIT:
                return None
            return real.read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):
            return None


def _plan_entries(arguments: Any) -> list[Any]:
    """todo_write's ``todos`` as ACP plan entries (what does not fit is left out)."""
    todos = arguments.get("todos") if isinstance(arguments, dict) else None
    entries: list[Any] = []
    for item in todos if isinstance(todos, list) else ():
        if not isinstance(item, dict):
            continue
        content, status = item.get("content"), item.get("status")
        if isinstance(content, str) and status in ("pending", "in_progress", "completed"):
            entries.append(plan_entry(content, status=status))
    return entries


def _web_search(event: ev.WebSearched) -> ToolCallStart:
    """The provider's own search, already done: one finished ``search`` call."""
    return start_tool_call(
        event.call_id,
        event.title,
        kind="search",
        status="failed" if event.error else "completed",
        content=[tool_content(text_block(event.outcome))],
        raw_input={"query": event.query},
    )


def _start(call_id: str, view: ToolView, status: str) -> ToolCallStart:
    return start_tool_call(
        call_id,
        view.title,
        kind=view.kind,  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        locations=[ToolCallLocation(path=str(p)) for p in view.paths],
        raw_input=view.raw_input,
    )


def replay_updates(messages: Sequence[Message], workspace: Path) -> Iterator[Any]:
    """A saved conversation as the updates a client shows (session/load)."""
    for message in messages:
        if message.role == "user" and message.content:
            yield update_user_message_text(message.content)
        elif message.role == "assistant":
            if message.reasoning_content:
                yield update_agent_thought_text(message.reasoning_content)
            if message.content:
                yield update_agent_message_text(message.content)
            yield from map(_web_search, past_searches(message))
            for call in message.tool_calls:
                view = tool_view(call.name, call.arguments, workspace)
                yield _start(call.id, view, "in_progress")
        elif message.role == "tool" and message.tool_call_id:
            text = message.content or ""
            yield update_tool_call(
                message.tool_call_id,
                status="completed",
                content=[tool_content(text_block(text))] if text else [],
            )
