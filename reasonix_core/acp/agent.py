"""The ACP agent: sessions over the session core, one held open per ACP session.

Each :class:`~reasonix_core.session.core.Session` is built and closed inside its
own holder task (its context enters task groups, which must be left by the task
that entered them); requests reach it from the connection's request tasks. A
turn runs in a task of its own so ``session/cancel`` can cancel it: the
transcript stays valid, as for any cancelled consumer of ``Session.prompt``.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.helpers import update_agent_message_text, update_current_mode
from acp.schema import (
    AgentCapabilities,
    AvailableCommandsUpdate,
    CloseSessionResponse,
    ConfigOptionUpdate,
    Cost,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    Usage,
    UsageUpdate,
)

from reasonix_core import __version__
from reasonix_core import events as ev
from reasonix_core.acp.approver import AcpApprover
from reasonix_core.acp.client_files import AcpTextFiles
from reasonix_core.acp.config_options import config_options, set_config_option
from reasonix_core.acp.mcp_servers import write_mcp_json
from reasonix_core.acp.prompt_text import prompt_images, prompt_text
from reasonix_core.acp.updates import TurnUpdates, replay_updates
from reasonix_core.agent.turn_meta import TurnMeta
from reasonix_core.command.builtin import SessionCommand, session_command
from reasonix_core.errors import ReasonixError
from reasonix_core.permission_modes import MODE_CYCLE, PLAN_MODE, PLAN_MODE_SUMMARY, PRESET_SUMMARY
from reasonix_core.session.build import build_session
from reasonix_core.session.core import Session
from reasonix_core.session.settings import RunSettings
from reasonix_core.usage import Usage as TokenUsage

if TYPE_CHECKING:
    from reasonix_core.images import ImagePart

log = logging.getLogger(__name__)

# ACP's stop reason for the turn's (the rest, plan mode's included, end the turn).
_STOP_REASONS = {
    "max_steps": "max_turn_requests",  # [agent] max_steps stopped it
    "length": "max_tokens",  # the model's output was cut at its limit
    "content_filter": "refusal",  # the provider filtered the answer
}

# The tools whose plan goes to the user for approval (a permission request on that call).
_PLAN_TOOLS = ("exit_plan_mode", "submit_plan")

# The longest line read from the client (an embedded file in a prompt can be large).
_LINE_LIMIT = 50 * 1024 * 1024


@dataclass(kw_only=True)
class AcpOptions:
    """What ``reasonix acp`` was started with."""

    model: str | None = None
    effort: str | None = None
    permission_mode: str | None = None
    trust_project: bool = False
    home: Path | None = None


@dataclass
class _Held:
    """One ACP session: the built session, its approver, and its running turn."""

    session: Session
    approver: AcpApprover
    # The editor's files when the client offers them (None: the host disk).
    files: AcpTextFiles | None
    close: asyncio.Event
    holder: asyncio.Task[None]
    turn: asyncio.Task[str] | None = None
    # What the session's requests cost so far in this process (subagents' included).
    cost: float = 0.0
    modes: list[str] = field(default_factory=list[str])
    # The running turn's billed calls (subagents' included), for the prompt's usage.
    turn_usage: list[TokenUsage] = field(default_factory=list[TokenUsage])
    # The running turn's updates (its open tool calls end as failed if it is cancelled).
    updates: TurnUpdates | None = None


class ReasonixAcpAgent:
    """ACP's Agent interface (``acp.interfaces.Agent``) over Reasonix sessions."""

    def __init__(self, options: AcpOptions) -> None:
        self.options = options
        self.client: Client | None = None
        self._sessions: dict[str, _Held] = {}
        # The client advertised fs/read_text_file and fs/write_text_file.
        self._editor_files = False
        # Notifications sent after a response (kept referenced until done).
        self._background: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # -- set-up ----------------------------------------------------------------

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
        **kwargs: object,
    ) -> InitializeResponse:  # fmt: skip
        fs = getattr(client_capabilities, "fs", None)
        self._editor_files = bool(fs and fs.read_text_file and fs.write_text_file)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    fork=SessionForkCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            agent_info=Implementation(name="reasonix", title="Reasonix", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: object) -> None:
        return None  # keys come from the user's config, as for every surface

    async def new_session(
        self,
        cwd: str,
        additional_directories: Any = None,
        mcp_servers: Any = None,
        **kwargs: object,
    ) -> NewSessionResponse:
        held = await self._open(cwd, resume_id=None, mcp_servers=mcp_servers)
        self._announce_commands(held)
        return NewSessionResponse(
            session_id=held.session.session_id,
            modes=_modes(held),
            config_options=config_options(held.session),  # type: ignore[arg-type]
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, additional_directories: Any = None,
        **kwargs: object,
    ) -> LoadSessionResponse:  # fmt: skip
        if session_id in self._sessions:
            held = self._sessions[session_id]
        else:
            held = await self._open(cwd, resume_id=session_id, mcp_servers=mcp_servers)
        client = self._client()
        for update in replay_updates(held.session.agent.messages, held.session.workspace):
            await client.session_update(session_id=session_id, update=update)
        self._announce_commands(held)
        return LoadSessionResponse(
            modes=_modes(held),
            config_options=config_options(held.session),  # type: ignore[arg-type]
        )

    async def _open(self, cwd: str, *, resume_id: str | None, mcp_servers: Any = None) -> _Held:
        if resume_id is not None and not resume_id.strip():
            # An empty id would read as "no resume": a new session under an id the
            # client never learns, with its updates sent to the empty id.
            raise RequestError.invalid_params({"sessionId": "an empty session id"})
        workspace = _workspace(cwd)
        refusal = self._untrusted(workspace)
        if refusal:
            raise RequestError.invalid_params({"cwd": refusal})
        settings = RunSettings(
            workspace=workspace,
            model=self.options.model,
            effort=self.options.effort,
            permission_mode=self._preset(),
            resume_id=resume_id,
            trust_project=self.options.trust_project,
            home=self.options.home,
            plan_mode=self.options.permission_mode == PLAN_MODE,
        )
        client_servers = write_mcp_json(list(mcp_servers or []))
        if client_servers is not None:
            settings.mcp_config = [client_servers]
        try:
            return await self._start(settings, workspace)
        finally:
            if client_servers is not None:  # read while the session was built
                shutil.rmtree(client_servers.parent, ignore_errors=True)

    async def _start(self, settings: RunSettings, workspace: Path) -> _Held:
        approver = AcpApprover(self._client(), workspace)
        files = AcpTextFiles(self._client()) if self._editor_files else None
        ready: asyncio.Future[Session] = asyncio.get_running_loop().create_future()
        close = asyncio.Event()
        holder = asyncio.create_task(_hold(settings, approver, files, ready, close))
        try:
            session = await ready
        except ReasonixError as exc:
            await asyncio.gather(holder, return_exceptions=True)
            raise RequestError.invalid_params({"details": str(exc)}) from None
        approver.session_id = session.session_id
        if files is not None:
            files.session_id = session.session_id
        held = _Held(session=session, approver=approver, files=files, close=close, holder=holder)
        held.modes = list(MODE_CYCLE)
        if session.policy.preset not in held.modes:
            held.modes.insert(0, session.policy.preset)  # yolo only when started in it
        self._sessions[session.session_id] = held
        log.info("session %s in %s", session.session_id, workspace)
        return held

    def _announce_commands(self, held: _Held) -> None:
        """``available_commands_update`` once the session's response has left (a
        task: the client learns the session id from that response first)."""
        from reasonix_core.acp.commands import available_commands

        async def announce() -> None:
            commands = available_commands(held.session)
            if commands:
                await self._client().session_update(
                    session_id=held.session.session_id,
                    update=AvailableCommandsUpdate(
                        session_update="available_commands_update", available_commands=commands
                    ),
                )

        task = asyncio.create_task(announce())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _untrusted(self, workspace: Path) -> str | None:
        """Why the project's own files must not apply (as for ``reasonix run``)."""
        if self.options.trust_project:
            return None
        from reasonix_core.trust import review_project

        review = review_project(workspace, self._home())
        if not review.needs_trust:
            return None
        return (
            f"{review.folder} is not trusted and its project files set {review.summary()}; "
            "run `reasonix trust` there, or start `reasonix acp --trust-project`"
        )

    def _preset(self) -> str | None:
        mode = self.options.permission_mode
        return None if mode in (None, PLAN_MODE) else mode

    # -- turns -----------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: object) -> PromptResponse:
        held = self._held(session_id)
        if held.turn is not None and not held.turn.done():
            raise RequestError.invalid_request({"details": "a turn is already running"})
        text = prompt_text(prompt, held.session.workspace)
        images, problems = prompt_images(prompt)  # image blocks (issue 32)
        if not text.strip() and not images:
            raise RequestError.invalid_params({"prompt": "empty" if not problems else problems})
        held.turn_usage = []
        command = session_command(text) if not images else None
        if command is not None:
            held.turn = asyncio.create_task(self._command(held, *command))
        else:
            held.turn = asyncio.create_task(self._turn(held, text, images, problems))
        try:
            stop = await held.turn
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if held.turn.cancelled() and not (current is not None and current.cancelling()):
                await self._end_open_calls(held)
                return PromptResponse(stop_reason="cancelled")
            held.turn.cancel()
            raise
        return PromptResponse(stop_reason=stop, usage=_turn_usage(held.turn_usage))  # type: ignore[arg-type]

    async def _end_open_calls(self, held: _Held) -> None:
        """A cancelled turn's running tool calls end as failed in the client (the
        transcript has their interrupted result)."""
        if held.updates is None:
            return
        for update in held.updates.cancelled():
            await self._client().session_update(session_id=held.session.session_id, update=update)

    async def _turn(
        self,
        held: _Held,
        text: str,
        images: tuple[ImagePart, ...] = (),
        problems: list[str] | None = None,
    ) -> str:
        session, client = held.session, self._client()
        try:
            expanded = await session.expand(text)
        except ReasonixError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None
        updates = held.updates = TurnUpdates(session.workspace, held.files)
        for notice in (*(problems or ()), *expanded.notices):
            await client.session_update(
                session_id=session.session_id, update=updates.notice(notice)
            )
        before = _state(session)
        meta = TurnMeta(images=(*images, *expanded.images)) if images or expanded.images else None
        async with aclosing(session.prompt(expanded.text, meta)) as events:
            stop = await self._stream(held, events, updates)
        await self._announce_state(held, before)
        return stop

    async def _announce_state(self, held: _Held, before: tuple[bool, str, str]) -> None:
        """What the turn or command changed of the mode, model and effort, told to
        the client (``current_mode_update``, ``config_option_update``)."""
        session, client = held.session, self._client()
        was_planning, model, effort = before
        if was_planning and not session.plan_mode.active:
            # The plan was approved: plan mode is off, the preset rules again.
            await client.session_update(
                session_id=session.session_id, update=update_current_mode(session.policy.preset)
            )
        if (model, effort) != (session.model, session.effort):
            await client.session_update(
                session_id=session.session_id,
                update=ConfigOptionUpdate(
                    session_update="config_option_update",
                    config_options=config_options(session),  # type: ignore[arg-type]
                ),
            )

    async def _command(self, held: _Held, command: SessionCommand, args: str) -> str:
        """A built-in session command typed as the prompt (/compact, /plan, /goal...)."""
        from reasonix_core.acp.session_commands import run_session_command

        session = held.session
        before = _state(session)
        outputs = run_session_command(session, held.approver, command, args, cost=held.cost)
        async with aclosing(outputs) as outs:
            updates = held.updates = TurnUpdates(session.workspace, held.files)
            stop = await self._stream(held, outs, updates)
        await self._announce_state(held, before)
        return stop

    async def _stream(
        self, held: _Held, events: AsyncIterator[ev.Event | str], updates: TurnUpdates
    ) -> str:
        """Send the events' updates (a string: a line of the agent's message); the
        turn's stop reason."""
        session, client = held.session, self._client()
        stop = "end_turn"
        async for event in events:
            if isinstance(event, str):
                await client.session_update(
                    session_id=session.session_id, update=update_agent_message_text(event)
                )
                continue
            if isinstance(event, ev.TurnFinished) and not event.agent_path:
                stop = _STOP_REASONS.get(event.stop_reason, "end_turn")
            elif isinstance(event, ev.TurnFailed) and not event.agent_path:
                raise RequestError.internal_error({"details": event.error})
            if isinstance(event, ev.ToolCallStarted) and event.name in _PLAN_TOOLS:
                held.approver.plan_call_id = event.call_id
            elif isinstance(event, ev.ToolCallStarted) and event.name == "ask":
                held.approver.ask_call_id = event.call_id
            if isinstance(event, ev.UsageReported):
                held.cost += event.cost
                held.turn_usage.append(event.usage)
                if not event.agent_path:
                    await client.session_update(
                        session_id=session.session_id, update=_usage(held, event)
                    )
            for update in updates.of(event):
                await client.session_update(session_id=session.session_id, update=update)
        return stop

    async def cancel(self, session_id: str, **kwargs: object) -> None:
        held = self._sessions.get(session_id)
        if held is not None and held.turn is not None and not held.turn.done():
            held.turn.cancel()

    # -- modes -----------------------------------------------------------------

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: object
    ) -> SetSessionModeResponse:
        held = self._held(session_id)
        if mode_id not in held.modes:
            raise RequestError.invalid_params({"modeId": f"unknown mode {mode_id!r}"})
        session = held.session
        if mode_id == PLAN_MODE:
            session.set_mode(session.policy.preset, plan=True)
        else:
            session.set_mode(mode_id, plan=False)
        await self._client().session_update(
            session_id=session_id, update=update_current_mode(mode_id)
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: object
    ) -> SetSessionConfigOptionResponse:
        """Model and effort for the session's next request."""
        session = self._held(session_id).session
        if not isinstance(value, str):
            raise RequestError.invalid_params({config_id: "a select option takes a string"})
        set_config_option(session, config_id, value)
        return SetSessionConfigOptionResponse(config_options=config_options(session))  # type: ignore[arg-type]

    # -- saved sessions --------------------------------------------------------

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: object
    ) -> ListSessionsResponse:
        """This workspace's saved sessions, newest first (``cwd`` is required: the
        store is kept per workspace)."""
        if cwd is None:
            raise RequestError.invalid_params({"cwd": "required: sessions are kept per folder"})
        workspace = _workspace(cwd)
        return ListSessionsResponse(sessions=_saved_sessions(self._home(), workspace))

    async def close_session(self, session_id: str, **kwargs: object) -> CloseSessionResponse:
        held = self._sessions.pop(session_id, None)
        if held is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id!r}"})
        if held.turn is not None and not held.turn.done():
            held.turn.cancel()
            await asyncio.gather(held.turn, return_exceptions=True)
        held.close.set()
        await asyncio.gather(held.holder, return_exceptions=True)
        return CloseSessionResponse()

    def _home(self) -> Path:
        from reasonix_core.home import reasonix_home

        return self.options.home or reasonix_home()

    async def resume_session(
        self, session_id: str, cwd: str, additional_directories: Any = None, mcp_servers: Any = None,
        **kwargs: object,
    ) -> ResumeSessionResponse:  # fmt: skip
        """``session/load`` without the replay (the client kept the conversation)."""
        held = self._sessions.get(session_id)
        if held is None:
            held = await self._open(cwd, resume_id=session_id, mcp_servers=mcp_servers)
        self._announce_commands(held)
        return ResumeSessionResponse(
            modes=_modes(held),
            config_options=config_options(held.session),  # type: ignore[arg-type]
        )

    async def fork_session(
        self, session_id: str, cwd: str, additional_directories: Any = None, mcp_servers: Any = None,
        **kwargs: object,
    ) -> ForkSessionResponse:  # fmt: skip
        """A new session holding the saved conversation as it is now (the original
        is untouched and stays open if it is); the fork continues append-only."""
        from reasonix_core.session.fork import fork_saved_session

        workspace = _workspace(cwd)
        held = self._sessions.get(session_id)
        if held is not None and held.turn is not None and not held.turn.done():
            raise RequestError.invalid_request({"details": "a turn is running in that session"})
        try:
            forked = fork_saved_session(self._home(), workspace, session_id)
        except ReasonixError as exc:
            raise RequestError.invalid_params({"sessionId": str(exc)}) from None
        held = await self._open(cwd, resume_id=forked, mcp_servers=mcp_servers)
        self._announce_commands(held)
        return ForkSessionResponse(
            session_id=forked,
            modes=_modes(held),
            config_options=config_options(held.session),  # type: ignore[arg-type]
        )

    # -- the rest --------------------------------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def close_all(self) -> None:
        """Cancel running turns, then close every session (each in its holder task)."""
        for held in self._sessions.values():
            if held.turn is not None and not held.turn.done():
                held.turn.cancel()
        turns = [h.turn for h in self._sessions.values() if h.turn is not None]
        await asyncio.gather(*turns, return_exceptions=True)
        for held in self._sessions.values():
            held.close.set()
        await asyncio.gather(*(h.holder for h in self._sessions.values()), return_exceptions=True)
        self._sessions.clear()

    def _held(self, session_id: str) -> _Held:
        held = self._sessions.get(session_id)
        if held is None:
            raise RequestError.invalid_params({"sessionId": f"unknown session {session_id!r}"})
        return held

    def _client(self) -> Client:
        assert self.client is not None, "on_connect gives the client first"
        return self.client


async def _hold(
    settings: RunSettings,
    approver: AcpApprover,
    files: AcpTextFiles | None,
    ready: asyncio.Future[Session],
    close: asyncio.Event,
) -> None:
    """Build the session, hand it over, keep it open until ``close`` is set."""
    try:
        async with build_session(
            settings, approver=approver, plan_approver=approver.approve_plan, text_files=files
        ) as session:
            ready.set_result(session)
            await close.wait()
    except BaseException as exc:
        if not ready.done():
            ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            return
        log.warning("session closed with an error", exc_info=exc)


def _usage(held: _Held, event: ev.UsageReported) -> UsageUpdate:
    """The context's size after the request, the window, and the cost so far; the
    prompt cache's hit and miss in ``_meta`` (ACP has no field for them)."""
    usage = event.usage
    return UsageUpdate(
        session_update="usage_update",
        used=usage.prompt_tokens + usage.completion_tokens,
        size=held.session.agent.context.window,
        cost=Cost(amount=round(held.cost, 10), currency=event.currency),
        field_meta={
            "reasonix": {
                "cache_hit_tokens": usage.cache_hit_tokens,
                "cache_miss_tokens": usage.cache_miss_tokens,
                "model": event.model,
            }
        },
    )


def _state(session: Session) -> tuple[bool, str, str]:
    """What a turn or command may change that the client shows: plan mode, model, effort."""
    return session.plan_mode.active, session.model, session.effort


def _turn_usage(calls: list[TokenUsage]) -> Usage | None:
    """The turn's tokens (ACP's prompt usage): the cache's hits are ``cachedReadTokens``."""
    if not calls:
        return None
    prompt = sum(u.prompt_tokens for u in calls)
    output = sum(u.completion_tokens for u in calls)
    return Usage(
        total_tokens=prompt + output,
        input_tokens=prompt,
        output_tokens=output,
        thought_tokens=sum(u.reasoning_tokens for u in calls) or None,
        cached_read_tokens=sum(u.cache_hit_tokens for u in calls),
    )


def _saved_sessions(home: Path, workspace: Path) -> list[SessionInfo]:
    from datetime import UTC, datetime

    from reasonix_core.agent.session import list_sessions

    return [
        SessionInfo(
            session_id=saved.id,
            cwd=str(workspace),
            title=saved.title,
            updated_at=datetime.fromtimestamp(saved.modified, UTC).isoformat(),
        )
        for saved in list_sessions(home / "sessions", workspace)
    ]


def _workspace(cwd: str) -> Path:
    """The session's workspace: ``cwd``, which must be an absolute directory."""
    workspace = Path(cwd)
    if not workspace.is_absolute() or not workspace.is_dir():
        raise RequestError.invalid_params({"cwd": f"not an absolute directory: {cwd}"})
    return workspace.resolve()


def _modes(held: _Held) -> SessionModeState:
    session = held.session
    current = PLAN_MODE if session.plan_mode.active else session.policy.preset
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(
                id=mode,
                name=mode,
                description=PLAN_MODE_SUMMARY if mode == PLAN_MODE else PRESET_SUMMARY.get(mode),
            )
            for mode in held.modes
        ],
    )


async def serve(options: AcpOptions) -> None:
    """Speak ACP on stdin/stdout until the client closes stdin."""
    from acp.agent.connection import AgentSideConnection
    from acp.stdio import stdio_streams
    from acp.task import MessageSender, TaskSupervisor

    from reasonix_core.acp.transport import AnsweringTransport

    agent = ReasonixAcpAgent(options)
    reader, writer = await stdio_streams(limit=_LINE_LIMIT)
    sends = TaskSupervisor(source="reasonix.acp.sender")
    transport = AnsweringTransport(reader, MessageSender(writer, sends))
    # The unstable protocol routes session/close, session/fork and session/resume.
    conn = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True)
    try:
        await conn.listen()
    finally:
        try:
            await agent.close_all()
        finally:
            await asyncio.shield(conn.close())
            await sends.shutdown()
