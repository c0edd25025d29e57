"""Config layers as pydantic-settings sources: the REASONIX_* environment layer, its
place in the precedence, its errors, and what it may not set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from reasonix_core.config import Config, load_config
from reasonix_core.config.sources import LayeredConfig, environment_settings
from reasonix_core.errors import ConfigError
from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def load(ws: Path, home: Path, env: dict[str, str], **kwargs: object) -> Config:
    return load_config(ws, home=home, environ=env, **kwargs).config  # type: ignore[arg-type]


def error(ws: Path, home: Path, env: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as info:
        load(ws, home, env)
    return str(info.value)


# --- the sources ---------------------------------------------------------------------


def test_the_effective_config_is_built_by_pydantic_settings(home: Path, ws: Path) -> None:
    config = load(ws, home, {})
    assert isinstance(config, BaseSettings)
    assert isinstance(config, Config)


def test_outside_a_load_the_settings_model_reads_only_its_arguments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REASONIX_AGENT__MAX_STEPS", "7")
    assert LayeredConfig().agent.max_steps == 0
    assert LayeredConfig(agent={"max_steps": 3}).agent.max_steps == 3


def test_environment_sets_scalars_at_every_level(home: Path, ws: Path) -> None:
    loaded = load_config(
        ws,
        home=home,
        environ={
            "REASONIX_AGENT__MAX_STEPS": "5",
            "REASONIX_DEFAULT_MODEL": "deepseek-v4-pro",
            "REASONIX_TOOLS__BASH_TIMEOUT_SECONDS": "9.5",
            "REASONIX_SANDBOX__NETWORK": "false",
            "REASONIX_PERMISSIONS__MODE": "deny",
            "PATH": "/usr/bin",
        },
    )
    cfg = loaded.config
    assert cfg.agent.max_steps == 5
    assert cfg.default_model == "deepseek-v4-pro"
    assert cfg.tools.bash_timeout_seconds == 9.5
    assert cfg.permissions.mode == "deny"
    assert set(loaded.environment) == {
        "REASONIX_AGENT__MAX_STEPS",
        "REASONIX_DEFAULT_MODEL",
        "REASONIX_TOOLS__BASH_TIMEOUT_SECONDS",
        "REASONIX_SANDBOX__NETWORK",
        "REASONIX_PERMISSIONS__MODE",
    }


def test_environment_through_the_process_environment(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REASONIX_AGENT__COMPACT_RATIO", "0.5")
    assert load_config(ws, home=home).config.agent.compact_ratio == 0.5


def test_other_reasonix_variables_are_not_settings(home: Path, ws: Path) -> None:
    env = {"REASONIX_HOME": "/elsewhere", "REASONIX_TOKENIZER": "heuristic", "REASONIX_BIN": "x"}
    loaded = load_config(ws, home=home, environ=env)
    assert loaded.environment == {}
    assert loaded.config.model_dump() == load(ws, home, {}).model_dump()


def test_precedence_flags_over_env_over_project_over_user(home: Path, ws: Path) -> None:
    write(home / "config.toml", "[agent]\nmax_steps = 1\ncompact_ratio = 0.4\neffort = 'low'\n")
    write(ws / "reasonix.toml", "[agent]\nmax_steps = 2\ncompact_ratio = 0.5\n")
    env = {"REASONIX_AGENT__MAX_STEPS": "3", "REASONIX_AGENT__RETRY_ATTEMPTS": "6"}
    flagged = load(ws, home, env, overrides={"agent.max_steps": 4})
    assert flagged.agent.max_steps == 4  # flag > env
    cfg = load(ws, home, env)
    assert cfg.agent.max_steps == 3  # env > project
    assert cfg.agent.retry_attempts == 6  # env > default
    assert cfg.agent.compact_ratio == 0.5  # project > user
    assert cfg.agent.effort == "low"  # user > default


def test_unions_and_provider_merge_survive_the_environment_layer(home: Path, ws: Path) -> None:
    write(
        home / "config.toml",
        """
[[providers]]
name = "a"
base_url = "http://a.invalid"
models = ["m1"]
[[providers]]
name = "b"
base_url = "http://b.invalid"
models = ["m2"]
[permissions]
deny = ["Bash(rm:*)"]
ask = ["Bash(git push:*)"]
[sandbox]
forbid_read = ["/secrets"]
""",
    )
    write(ws / "reasonix.toml", '[permissions]\ndeny = ["Read(.env)"]\nask = []\n')
    cfg = load(
        ws,
        home,
        {"REASONIX_AGENT__MAX_STEPS": "2"},
        overrides={
            "permissions": {"deny": ["Bash(curl:*)", "Bash(rm:*)"]},
            "sandbox": {"forbid_read": ["/keys"]},
            "providers": [{"name": "b", "base_url": "http://b2.invalid", "models": ["m3"]}],
        },
    )
    assert cfg.permissions.deny == ["Bash(rm:*)", "Read(.env)", "Bash(curl:*)"]
    assert cfg.permissions.ask == ["Bash(git push:*)"]
    assert cfg.sandbox.forbid_read == ["/secrets", "/keys"]
    assert [(p.name, p.base_url, p.models) for p in cfg.providers] == [
        ("a", "http://a.invalid", ["m1"]),
        ("b", "http://b2.invalid", ["m3"]),
    ]
    assert cfg.providers[1].declared_in == "command-line overrides"
    assert cfg.providers[0].declared_in == str(home / "config.toml")


def test_untrusted_project_is_still_withheld_with_the_environment(home: Path, ws: Path) -> None:
    write(ws / "reasonix.toml", '[permissions]\npreset = "yolo"\nask = ["Bash"]\n')
    loaded = load_config(ws, home=home, environ={"REASONIX_AGENT__MAX_STEPS": "2"})
    assert loaded.config.permissions.preset == "ask"
    assert loaded.config.permissions.ask == ["Bash"]
    assert [s.setting for s in loaded.withheld] == ["permissions.preset"]


# --- errors ----------------------------------------------------------------------------


def test_bad_env_value_is_one_line_naming_the_variable(home: Path, ws: Path) -> None:
    msg = error(ws, home, {"REASONIX_AGENT__MAX_STEPS": "five"})
    assert "\n" not in msg
    assert msg.startswith("environment variable REASONIX_AGENT__MAX_STEPS: agent.max_steps: ")
    assert "(got 'five')" in msg
    msg = error(ws, home, {"REASONIX_AGENT__EFFORT": "bogus"})
    assert msg == (
        "environment variable REASONIX_AGENT__EFFORT: agent.effort: "
        "must be one of auto, disabled, none, off, minimal, low, medium, high, xhigh, max, ultra "
        "(got 'bogus')"
    )


def test_unknown_env_setting_suggests_the_right_name(home: Path, ws: Path) -> None:
    msg = error(ws, home, {"REASONIX_AGENT__MAX_STEP": "5"})
    assert msg == (
        "environment variable REASONIX_AGENT__MAX_STEP: unknown setting 'agent.max_step' "
        "(did you mean REASONIX_AGENT__MAX_STEPS?)"
    )
    assert "unknown setting 'agents.max_steps'" in error(
        ws, home, {"REASONIX_AGENTS__MAX_STEPS": "5"}
    )


def test_env_errors_that_involve_two_variables_name_both(home: Path, ws: Path) -> None:
    msg = error(
        ws, home, {"REASONIX_AGENT__RETRY_BASE_DELAY": "4", "REASONIX_AGENT__RETRY_MAX_DELAY": "2"}
    )
    assert msg.startswith(
        "environment variables REASONIX_AGENT__RETRY_BASE_DELAY, REASONIX_AGENT__RETRY_MAX_DELAY: "
    )


def test_layers_valid_alone_but_not_together_are_all_named(home: Path, ws: Path) -> None:
    user = write(home / "config.toml", "[agent]\nretry_max_delay = 2\n")
    msg = error(ws, home, {"REASONIX_AGENT__RETRY_BASE_DELAY": "4"})
    assert msg == (
        f"{user} + REASONIX_* environment variables: agent: "
        "retry_max_delay (2.0) is less than retry_base_delay (4.0)"
    )


@pytest.mark.parametrize(
    "name",
    [
        "REASONIX_PROVIDERS",
        "REASONIX_PROVIDERS__0__BASE_URL",
        "REASONIX_MCP",
        "REASONIX_PERMISSIONS__ALLOW",
        "REASONIX_SANDBOX__FORBID_READ",
        "REASONIX_AGENT",
    ],
)
def test_env_never_sets_providers_lists_or_tables(home: Path, ws: Path, name: str) -> None:
    msg = error(ws, home, {name: "[]"})
    assert msg.startswith(f"environment variable {name}: ")
    assert "cannot be set from the environment" in msg


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("REASONIX_PERMISSIONS__PRESET", "yolo"),
        ("REASONIX_PERMISSIONS__MODE", "allow"),
        ("REASONIX_SANDBOX__BASH", "off"),
        ("REASONIX_SANDBOX__NETWORK", "true"),
        ("REASONIX_SANDBOX__WORKSPACE_ROOT", "/"),
    ],
)
def test_env_may_not_loosen_permissions_or_the_sandbox(
    home: Path, ws: Path, name: str, value: str
) -> None:
    msg = error(ws, home, {name: value})
    assert msg.startswith(f"environment variable {name}: ")
    assert "loosens permissions or the sandbox" in msg


def test_settable_names_are_single_values() -> None:
    settable = environment_settings()
    assert settable["agent__max_steps"] == ("agent", "max_steps")
    assert settable["default_model"] == ("default_model",)
    assert not any(key.startswith("providers") for key in settable)
    assert "permissions__allow" not in settable
    assert "mcp" not in settable


# --- the command line ------------------------------------------------------------------


def test_run_honours_an_env_setting(workspace: Path, home: Path, server: object) -> None:
    write_config(home, server.base_url)  # type: ignore[attr-defined]
    (workspace / "a.txt").write_text("a\n")
    server.enqueue(  # type: ignore[attr-defined]
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
        Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"a.txt"}')]),
    )
    proc = reasonix(workspace, "run", "loop", env={"REASONIX_AGENT__MAX_STEPS": "1"})
    assert proc.returncode == 1, proc.stderr
    assert len(server.requests) == 1  # type: ignore[attr-defined]


def test_run_with_a_bad_env_value_exits_2_with_one_line(workspace: Path, home: Path) -> None:
    proc = reasonix(workspace, "run", "hi", env={"REASONIX_AGENT__MAX_STEPS": "many"})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(
        "reasonix: error: environment variable REASONIX_AGENT__MAX_STEPS: agent.max_steps: "
    )


def test_version_does_not_import_pydantic_settings() -> None:
    code = (
        "import sys\nfrom reasonix_tui.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "assert 'pydantic_settings' not in sys.modules, 'pydantic_settings'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_config_compact_ratio_names_the_environment_variable(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasonix_tui.cli import main

    monkeypatch.chdir(workspace)
    monkeypatch.setenv("REASONIX_AGENT__COMPACT_RATIO", "0.5")
    assert main(["config", "compact-ratio", "0.7"]) == 0
    out = capsys.readouterr().out
    assert "compact_ratio = 0.50 (environment variable REASONIX_AGENT__COMPACT_RATIO)" in out
    assert "REASONIX_AGENT__COMPACT_RATIO is set, which takes precedence" in out
    assert "compact_ratio = 0.7" in (home / "config.toml").read_text()


def test_a_huge_env_value_is_shown_shortened(home: Path, ws: Path) -> None:
    msg = error(ws, home, {"REASONIX_AGENT__MAX_STEPS": "1" * 5000})
    assert msg.startswith("environment variable REASONIX_AGENT__MAX_STEPS: agent.max_steps: ")
    assert "\n" not in msg and len(msg) < 300
