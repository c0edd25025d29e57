"""Start-up: the session screen is painted before the services are built
(:class:`DeferredServices`); typing works at once, a prompt sent early waits for
the services, and a failure to build them ends the app with the error reported."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from tui_helpers import send, session, settle, type_text

from reasonix_core.errors import ConfigError
from reasonix_testkit.tui import ScriptedServices, text_steps
from reasonix_tui.app import ReasonixApp
from reasonix_tui.deferred import DeferredRunner, DeferredServices
from reasonix_tui.screens.session import SessionScreen
from reasonix_tui.screens.setup import SetupScreen
from reasonix_tui.widgets.assistant_block import AssistantBlock
from reasonix_tui.widgets.blocks import UserBlock

SIZE = (100, 32)


class Gate:
    """A factory for DeferredServices that blocks (in its worker thread) until opened."""

    def __init__(self, build: Callable[[], ScriptedServices]) -> None:
        self.build = build
        self.opened = threading.Event()
        self.started = threading.Event()
        self.calls = 0

    def __call__(self) -> ScriptedServices:
        self.calls += 1
        self.started.set()
        assert self.opened.wait(60), "the gate was never opened"
        return self.build()

    def open(self) -> None:
        self.opened.set()


def deferred(tmp_path: Path, factory: Callable[[], object], **kwargs: object) -> DeferredServices:
    return DeferredServices(
        factory,  # type: ignore[arg-type]
        workspace=tmp_path / "ws",
        config_home=tmp_path / "home",
        **kwargs,  # type: ignore[arg-type]
    )


def scripted(tmp_path: Path, turns: list | None = None, **kwargs: object) -> ScriptedServices:  # type: ignore[type-arg]
    return ScriptedServices(
        turns=list(turns or []),
        workspace=tmp_path / "ws",
        config_home=tmp_path / "home",
        **kwargs,  # type: ignore[arg-type]
    )


async def wait_until(pilot, predicate: Callable[[], bool], within: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition never held")
        await pilot.pause(0.01)


async def test_session_paints_and_takes_input_before_the_services_exist(tmp_path: Path) -> None:
    real = scripted(tmp_path, [text_steps("Hello from the engine.")])
    gate = Gate(lambda: real)
    services = deferred(tmp_path, gate)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = session(pilot)
        assert isinstance(app.screen, SessionScreen)
        assert not services.is_ready
        # The status bar says so, with placeholders for what only the engine knows.
        assert screen.status.state.starting
        assert "starting…" in str(screen.status.render())
        assert screen.status.state.model == ""
        # Typing works at once; sending waits for the services instead of failing.
        await send(pilot, "early prompt")
        await pilot.pause()
        assert [b.text for b in screen.query(UserBlock)] == ["early prompt"]
        assert screen.busy
        assert real.runners == []
        await type_text(pilot, "next")
        assert screen.composer.text == "next"
        gate.open()
        await wait_until(pilot, lambda: bool(screen.query(AssistantBlock)) and not screen.busy)
        await settle(pilot)
        assert screen.query_one(AssistantBlock).text == "Hello from the engine."
        assert [r.prompts for r in real.runners] == [["early prompt"]]
        assert services.is_ready
        state = screen.status.state
        assert not state.starting and state.model == "deepseek-flash" and state.mode == "ask"
        assert state.context_window == 128_000
        assert "starting…" not in str(screen.status.render())
    assert gate.calls == 1


async def test_the_services_are_built_in_a_thread_after_the_first_frame(tmp_path: Path) -> None:
    threads: list[str] = []

    def factory() -> ScriptedServices:
        threads.append(threading.current_thread().name)
        return scripted(tmp_path)

    services = deferred(tmp_path, factory)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: services.is_ready)
        await settle(pilot)
    assert len(threads) == 1 and threads[0] != threading.main_thread().name


def write_session(home: Path, workspace: Path, turns: int) -> str:
    """A saved session of ``turns`` prompt-and-answer turns, as the agent writes it."""
    from reasonix_core.agent.session import SessionHeader, SessionStore
    from reasonix_core.messages import Message

    header = SessionHeader(
        id="20250101-000000-start0",
        workspace=str(workspace),
        created="2025-01-01T00:00:00",
        model="deepseek-flash",
        effort="auto",
        system_prompt="You are Reasonix.",
        tools_fingerprint="",
    )
    store = SessionStore.create(home / "sessions", workspace, header)
    for n in range(turns):
        store.append(Message(role="user", content=f"question {n}"))
        store.append(Message(role="assistant", content=f"Answer {n} done."))
    store.close()
    return header.id


async def test_a_resumed_session_is_drawn_before_the_engine_is_built(tmp_path: Path) -> None:
    """The newest blocks of the session ``-c`` reopens come first; building the engine
    in a thread would share the interpreter with drawing them."""
    from reasonix_tui.saved_session import SavedSession

    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    session_id = write_session(home, workspace, 30)
    drawn_when_built: list[bool] = []
    app: ReasonixApp | None = None

    def factory() -> ScriptedServices:
        assert app is not None and app.session is not None
        drawn_when_built.append(app.session.saved_drawn.is_set())
        return scripted(tmp_path)

    saved = SavedSession(home / "sessions", workspace, None)
    services = deferred(tmp_path, factory, saved=saved)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: services.is_ready)
        screen = session(pilot)
        history = screen.transcript.history
        assert history is not None and history.shown
        assert "Answer 29 done." in str(screen.query(AssistantBlock).last().text)
        await settle(pilot)
    assert drawn_when_built == [True]
    assert saved.session_id == session_id


async def test_a_prompt_sent_while_a_resumed_session_is_drawn_builds_the_engine(
    tmp_path: Path,
) -> None:
    """The build waits for the drawing only when nobody needs the engine sooner."""
    from reasonix_tui.saved_session import SavedSession

    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    write_session(home, workspace, 30)
    real = scripted(tmp_path, [text_steps("Hello again.")])
    saved = SavedSession(home / "sessions", workspace, None)
    services = deferred(tmp_path, lambda: real, saved=saved)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = session(pilot)
        await send(pilot, "early prompt")
        await wait_until(pilot, lambda: [r.prompts for r in real.runners] == [["early prompt"]])
        await wait_until(pilot, lambda: not screen.busy)
        await settle(pilot)


async def test_a_config_error_after_the_first_frame_ends_the_app_cleanly(tmp_path: Path) -> None:
    def factory() -> ScriptedServices:
        raise ConfigError("config.toml: providers[0].kind: unknown kind 'nope'")

    services = deferred(tmp_path, factory)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await wait_until(pilot, lambda: services.error is not None)
        await pilot.pause()
    assert app.return_code == 1
    assert isinstance(services.error, ConfigError)


async def test_a_prompt_sent_before_a_failed_start_fails_as_a_turn(tmp_path: Path) -> None:
    gate = Gate(lambda: (_ for _ in ()).throw(ConfigError("bad config")))  # type: ignore[arg-type,return-value]
    services = deferred(tmp_path, gate)
    runner = services.new_runner(approver=None)  # type: ignore[arg-type]
    assert isinstance(runner, DeferredRunner)
    threading.Timer(0.05, gate.open).start()
    events = [event async for event in runner.run("hi")]
    assert [type(e).__name__ for e in events] == ["TurnFailed"]
    assert "bad config" in events[0].error  # type: ignore[attr-defined]
    with pytest.raises(ConfigError):
        services.models()


async def test_a_missing_key_found_after_the_first_frame_shows_setup(tmp_path: Path) -> None:
    real = scripted(tmp_path, api_key_missing=True)
    services = deferred(tmp_path, lambda: real)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen))
        await type_text(pilot, "sk-test123")
        await pilot.press("enter")
        await pilot.pause()
        assert real.saved_keys == ["sk-test123"]
        assert isinstance(app.screen, SessionScreen)
        assert len(app.screen_stack) == 2  # the default screen and one session


async def test_escape_on_a_late_setup_screen_quits(tmp_path: Path) -> None:
    services = deferred(tmp_path, lambda: scripted(tmp_path, api_key_missing=True))
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen))
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 1


def test_blocking_members_wait_for_the_services_and_runners_bind_in_order(
    tmp_path: Path,
) -> None:
    real = scripted(tmp_path)
    gate = Gate(lambda: real)
    services = deferred(tmp_path, gate, permission_mode="auto")
    first = services.new_runner(approver=None)  # type: ignore[arg-type]
    second = services.new_runner(approver=None)  # type: ignore[arg-type]
    assert services.permission_mode == "auto"  # the command-line choice, until ready
    assert services.context_window == 0 and services.mcp_prompts() == []
    assert first.model == "" and first.session_id == "(new session)"
    threading.Timer(0.05, gate.open).start()
    assert services.models() == ["deepseek-flash", "deepseek-v4-pro"]  # blocks, then answers
    assert services.is_ready and gate.calls == 1
    assert [first.runner, second.runner] == real.runners
    assert [r.session_id for r in real.runners] == ["s0001", "s0002"]
    assert first.model == "deepseek-flash"
    assert services.new_runner(approver=None) is real.runners[2]  # type: ignore[arg-type]
    assert services.permission_mode == "ask"
    services.permission_mode = "auto"
    assert real.permission_mode == "auto"


async def test_shift_tab_before_the_services_exist_waits_for_them(tmp_path: Path) -> None:
    real = scripted(tmp_path)
    gate = Gate(lambda: real)
    services = deferred(tmp_path, gate)
    app = ReasonixApp(services, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not services.is_ready
        threading.Timer(0.1, gate.open).start()
        await pilot.press("shift+tab")
        await pilot.pause()
        assert real.permission_mode == "auto"
        assert session(pilot).status.state.mode == "auto"
        await settle(pilot)


def test_launch_reports_a_bad_config_found_after_the_first_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI's words and exit code, as when the error surfaced before the screen."""
    import reasonix_tui.app
    from reasonix_tui.cli import main

    home = tmp_path / "reasonix-home"
    (home / "config.toml").write_text('[agent]\ncompact_ratio = "lots"\n')
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    seen: list[DeferredServices] = []

    def fake_run_app(services: DeferredServices) -> int:
        # What the app does once its first frame is out: build the services.
        seen.append(services)
        with pytest.raises(ConfigError):
            services.wait()
        return 1

    monkeypatch.setattr(reasonix_tui.app, "run_app", fake_run_app)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reasonix: error: ") and "Traceback" not in err
    assert "config.toml: agent.compact_ratio" in err
    assert seen and seen[0].workspace == workspace.resolve() and seen[0].config_home == home


def test_launch_passes_the_command_line_to_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reasonix_tui.app
    from reasonix_tui.launch import launch

    got: dict[str, object] = {}

    class FakeEngine:
        def __init__(self, workspace: Path, **kwargs: object) -> None:
            got.update(kwargs, workspace=workspace)

    monkeypatch.setattr("reasonix_tui.engine.EngineServices", FakeEngine)
    monkeypatch.setattr(reasonix_tui.app, "run_app", lambda services: services._build() or 0)
    args = argparse.Namespace(
        model="m",
        effort="high",
        permission_mode="auto",
        continue_last=True,
        resume_id=None,
        add_dir=[tmp_path / "shared"],
        settings=['{"hooks": {}}'],
    )
    monkeypatch.chdir(tmp_path)
    # A session to continue (with none, -c starts a new one: test_tui_start_quit.py).
    from reasonix_core.home import session_dir

    folder = session_dir(tmp_path / "reasonix-home" / "sessions", tmp_path.resolve())
    folder.mkdir(parents=True)
    (folder / "20250101-000000-abcdef.jsonl").write_text("")
    assert launch(args) == 0
    assert got == {
        "workspace": tmp_path.resolve(),
        "model": "m",
        "effort": "high",
        "permission_mode": "auto",
        "continue_last": True,
        "resume_id": None,
        "home": tmp_path / "reasonix-home",
        "add_dirs": [tmp_path / "shared"],
        "settings_files": ['{"hooks": {}}'],
    }


def test_launch_reports_an_unexpected_engine_failure_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import reasonix_tui.app
    from reasonix_tui.cli import main

    class BrokenEngine:
        def __init__(self, workspace: Path, **kwargs: object) -> None:
            raise RuntimeError("boom")

    monkeypatch.setattr("reasonix_tui.engine.EngineServices", BrokenEngine)
    monkeypatch.setattr(reasonix_tui.app, "run_app", lambda services: services._build() or 1)
    monkeypatch.chdir(tmp_path)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reasonix: error: could not start: RuntimeError: boom (details in ")
    assert "Traceback" not in err


def test_the_first_frame_path_imports_no_engine() -> None:
    """What launch imports before the first frame: no engine, config, network or Markdown."""
    code = (
        "import sys\n"
        "import reasonix_tui.cli, reasonix_tui.launch, reasonix_tui.deferred, reasonix_tui.app\n"
        "heavy = ('reasonix_tui.engine', 'reasonix_core.config', 'reasonix_core.session.build',\n"
        "         'reasonix_core.events', 'reasonix_core.permission', 'reasonix_tui.controller',\n"
        "         'pydantic', 'httpx', 'mcp', 'tokenizers', 'markdown_it')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_real_binary_with_a_bad_config_prints_the_error_and_exits_2(tmp_path: Path) -> None:
    """In a real terminal: the screen is restored, then the CLI's one-line error."""
    home, workspace = tmp_path / "rx-home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "config.toml").write_text('[agent]\ncompact_ratio = "lots"\n')
    name = f"reasonix-bad-{uuid.uuid4().hex[:8]}"
    command = (
        f"cd {workspace} && env REASONIX_HOME={home} TERM=xterm-256color "
        f"{sys.executable} -m reasonix_tui; echo EXIT=$?; sleep 5"
    )
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", "32", command],
        check=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        screen = ""
        while time.monotonic() < deadline and "EXIT=" not in screen:
            time.sleep(0.1)
            screen = subprocess.run(
                ["tmux", "capture-pane", "-t", name, "-p", "-J"], capture_output=True, text=True
            ).stdout
        assert "EXIT=2" in screen, screen
        assert "reasonix: error: " in screen and "agent.compact_ratio" in screen, screen
        assert "Traceback" not in screen
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
