"""Policy decisions for egress, reads outside the workspace and protected paths
(issue 10, hole 3), plus how `reasonix permissions check` explains them."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix_core.config import load_config
from reasonix_core.permission import Policy, Verdict, explain
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.permission.gate import PermissionGate
from reasonix_core.session.policy import build_policy
from reasonix_core.session.settings import RunSettings

ALLOW, ASK, DENY = Verdict.ALLOW, Verdict.ASK, Verdict.DENY
URL = "http://127.0.0.1:8765/?k=sk-secret"


def fetch(policy: Policy, url: str = URL) -> Verdict:
    return policy.decide("web_fetch", True, {"url": url}).verdict


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, ASK),
        ({"preset": "auto"}, ASK),  # auto-accept edits does not auto-allow egress
        ({"preset": "yolo"}, ALLOW),
        ({"mode": "allow"}, ASK),  # mode is the writers' fallback, not egress
        ({"mode": "deny"}, DENY),
        ({"mode": "deny", "preset": "auto"}, ASK),  # mode only speaks under preset ask
        ({"allow": ["WebFetch(domain:127.0.0.1)"]}, ALLOW),
        ({"allow": ["WebFetch"]}, ALLOW),
        ({"allow": ["WebFetch(domain:example.com)"]}, ASK),
        ({"allow": ["WebFetch(domain:127.0.0.1)"], "deny": ["WebFetch(domain:127.0.0.1)"]}, DENY),
        ({"allow": ["WebFetch"], "deny": ["WebFetch"]}, DENY),
        ({"preset": "yolo", "deny": ["WebFetch(domain:127.0.0.1)"]}, DENY),
        ({"allow": ["Read"]}, ASK),  # a read grant is not an egress grant
    ],
)
def test_web_fetch_is_egress(tmp_path: Path, kwargs: dict, expected: Verdict) -> None:
    assert fetch(Policy(workspace=tmp_path, **kwargs)) is expected


def test_web_fetch_session_grant_and_deny_wins(tmp_path: Path) -> None:
    policy = Policy(workspace=tmp_path, deny=["WebFetch(domain:evil.example)"])
    policy.add_session_allow("WebFetch(domain:127.0.0.1)")
    policy.add_session_allow("WebFetch(domain:evil.example)")
    assert fetch(policy) is ALLOW
    assert fetch(policy, "https://evil.example/x") is DENY
    assert fetch(policy, "https://other.example/x") is ASK


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    ws = tmp_path / "ws"
    out = tmp_path / "elsewhere"
    extra = tmp_path / "extra"
    for d in (ws, out, extra):
        d.mkdir()
    (out / "notes.txt").write_text("x")
    (ws / "escape").symlink_to(out)  # a workspace symlink pointing outside
    return {"ws": ws, "out": out, "extra": extra}


READS = [
    ("read_file", "path"),
    ("ls", "path"),
    ("grep", "path"),
]


@pytest.mark.parametrize(("tool", "key"), READS)
def test_reads_outside_ask_and_inside_allow(places: dict[str, Path], tool: str, key: str) -> None:
    ws, out = places["ws"], places["out"]
    policy = Policy(workspace=ws, read_roots=[places["extra"]])
    assert policy.decide(tool, True, {key: str(out / "notes.txt")}).verdict is ASK
    assert policy.decide(tool, True, {key: "escape/notes.txt"}).verdict is ASK
    assert policy.decide(tool, True, {key: "../elsewhere"}).verdict is ASK
    assert policy.decide(tool, True, {key: "sub/file"}).verdict is ALLOW
    assert policy.decide(tool, True, {key: str(places["extra"])}).verdict is ALLOW
    assert Policy(workspace=ws, preset="auto").decide(tool, True, {key: str(out)}).verdict is ASK
    assert Policy(workspace=ws, preset="yolo").decide(tool, True, {key: str(out)}).verdict is ALLOW
    assert Policy(workspace=ws, mode="deny").decide(tool, True, {key: str(out)}).verdict is DENY
    ruled = Policy(workspace=ws, allow=[f"Read({out}/**)"])
    assert ruled.decide(tool, True, {key: str(out / "notes.txt")}).verdict is ALLOW


@pytest.mark.parametrize(
    "pattern",
    [
        "{OUT}/*.txt",
        "{{OUT},nothing}/*",  # brace alternatives are expanded by the tool
        "~/*",
        "../elsewhere/*",
        "escape/*",
    ],
)
def test_glob_patterns_that_leave_the_workspace_ask(
    places: dict[str, Path], pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(places["out"]))
    pattern = pattern.replace("{OUT}", str(places["out"]))
    policy = Policy(workspace=places["ws"])
    assert policy.decide("glob", True, {"pattern": pattern}).verdict is ASK, pattern
    assert policy.decide("glob", True, {"pattern": "src/**/*.py"}).verdict is ALLOW


def test_protected_paths_deny_every_file_tool_in_every_preset(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (tmp_path / "link").symlink_to(secret)
    for preset in ("ask", "auto", "yolo"):
        policy = Policy(
            workspace=tmp_path,
            preset=preset,
            allow=["Read", "Edit", f"Read({secret}/**)"],
            forbid_read=[secret],
        )
        policy.add_session_allow("Read")
        for tool in ("read_file", "ls", "grep", "glob", "write_file", "edit_file"):
            for path in (str(secret / "id_rsa"), str(secret), "link/id_rsa"):
                decision = policy.decide(tool, tool != "write_file", {"path": path})
                assert decision.verdict is DENY, (preset, tool, path)
        assert policy.decide("glob", True, {"pattern": "link/*"}).verdict is DENY
        assert policy.read_denied("grep", secret / "id_rsa")
        assert policy.read_denied("ls", tmp_path / "link")  # a symlink into it
        assert not policy.read_denied("ls", tmp_path / "home")


def test_read_denied_follows_read_deny_rules(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("x")
    (tmp_path / "alias").symlink_to(".env")
    policy = Policy(workspace=tmp_path, deny=["Read(.env)", "read_file(notes/**)"])
    for tool in ("grep", "glob", "ls", "read_file"):
        assert policy.read_denied(tool, tmp_path / ".env")
        assert policy.read_denied(tool, tmp_path / "alias")
        assert not policy.read_denied(tool, tmp_path / "other.txt")
    assert policy.read_denied("read_file", tmp_path / "notes" / "a")
    assert not policy.read_denied("grep", tmp_path / "notes" / "a")


async def test_headless_refusal_says_how_to_allow(places: dict[str, Path]) -> None:
    policy = Policy(workspace=places["ws"])
    gate = PermissionGate(policy, FailClosedApprover())
    auth = await gate.authorize(
        tool="read_file", read_only=True, args={"path": str(places["out"])}, call_id="1"
    )
    assert not auth.allowed
    assert f"--add-dir {places['out']}" in auth.message
    assert "-y/--auto" not in auth.message  # auto would not allow it
    auth = await gate.authorize(tool="web_fetch", read_only=True, args={"url": URL}, call_id="2")
    assert not auth.allowed and "WebFetch(domain:127.0.0.1)" in auth.message


# -- builder: the protected list -----------------------------------------------------


def test_protected_paths_cover_home_and_credentials(tmp_path: Path) -> None:
    from reasonix_core.session.policy import protected_paths

    home = Path.home()
    rx_home = tmp_path / "rx"
    config = load_config(tmp_path / "ws", home=rx_home).config
    paths = protected_paths(config, rx_home, tmp_path / "ws")
    for rel in (".ssh", ".aws", ".config/gh", ".netrc", ".docker/config.json", ".kube", ".gnupg"):
        assert home.resolve() / rel in paths, rel
    assert rx_home.resolve() in paths


def test_a_workspace_inside_a_protected_folder_keeps_the_rest_protected(tmp_path: Path) -> None:
    from reasonix_core.session.policy import protected_paths

    rx_home = tmp_path / "rx"
    ws = rx_home / "projects" / "mine"
    ws.mkdir(parents=True)
    (rx_home / ".env").write_text("KEY=1\n")
    (rx_home / "sessions").mkdir()
    (rx_home / "projects" / "theirs").mkdir()
    config = load_config(ws, home=rx_home).config
    paths = protected_paths(config, rx_home, ws)
    real = rx_home.resolve()
    assert real not in paths  # the user is not locked out of their workspace
    for p in (real / ".env", real / "sessions", real / "projects" / "theirs"):
        assert p in paths
    policy = build_policy(config, RunSettings(workspace=ws, home=rx_home), ws, rx_home)
    assert policy.decide("read_file", True, {"path": "main.py"}).verdict is ALLOW
    assert policy.decide("read_file", True, {"path": str(rx_home / ".env")}).verdict is DENY
    assert policy.decide("write_file", False, {"path": "x.py"}).verdict is ASK


def test_explain_names_the_new_reasons(places: dict[str, Path]) -> None:
    secret = places["extra"] / ".ssh"
    policy = Policy(workspace=places["ws"], forbid_read=[secret])
    text = explain(policy, "WebFetch", URL)
    assert "decision: ask" in text and "network" in text
    assert "session scope: WebFetch(domain:127.0.0.1)" in text
    text = explain(policy, "read_file", str(places["out"] / "notes.txt"))
    assert "decision: ask" in text and "outside the workspace" in text
    assert f"session scope: Read({places['out']}/**)" in text
    text = explain(policy, "Read", str(secret / "id_rsa"))
    assert "decision: deny" in text and "protected" in text
    assert "decision: allow" in explain(policy, "read_file", "src/a.py")


def test_writable_roots_and_additional_directories_are_readable(tmp_path: Path) -> None:
    ws, shared, scratch, cli = (tmp_path / n for n in ("ws", "shared", "scratch", "cli"))
    for d in (ws, shared, scratch, cli, tmp_path / "rx"):
        d.mkdir()
    # The user's config: a project's own file may not be trusted to widen reads.
    (tmp_path / "rx" / "config.toml").write_text(
        f'[permissions]\nadditional_directories = ["{shared}"]\n'
        f'[sandbox]\nallow_write = ["{scratch}"]\n'
    )
    config = load_config(ws, home=tmp_path / "rx").config
    settings = RunSettings(workspace=ws, add_dirs=[cli])
    policy = build_policy(config, settings, ws, tmp_path / "rx")
    for folder in (shared, scratch, cli):
        assert policy.decide("read_file", True, {"path": str(folder / "a")}).verdict is ALLOW
    assert policy.decide("read_file", True, {"path": str(tmp_path / "a")}).verdict is ASK
    # Reads only: a write there is an ordinary writer call (and the sandbox refuses it).
    assert policy.decide("write_file", False, {"path": str(shared / "a")}).verdict is ASK


@pytest.mark.parametrize(
    "path", ["/proc/self/environ", "/proc/self/mem", "/proc/1/environ", "/proc/self/cwd/x"]
)
def test_process_views_are_protected_even_in_yolo(tmp_path: Path, path: str) -> None:
    # The API key may live in this process's environment. /proc/self/cwd is a
    # link to a real folder and is judged as that folder.
    policy = Policy(workspace=tmp_path, preset="yolo", allow=["Read"])
    verdict = policy.decide("read_file", True, {"path": path}).verdict
    assert verdict is (ALLOW if path.endswith("/x") else DENY)
