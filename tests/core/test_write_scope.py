"""Expanding bash's write scope (seed 000 §5, issue 19 item 8): ``additional_write_dirs``
with a ``justification``, judged on physical paths, granted once / for the session /
denied by the user, refused headless unless ``--add-dir`` or ``[permissions]
additional_directories`` covers the folder, and bound by descriptor in the real
bubblewrap sandbox.

Folders that must stay visible to the sandbox live under /var/tmp: the sandbox
mounts a fresh tmpfs on /tmp, where a write to an ungranted folder would land in
the throw-away tmpfs and prove nothing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from reasonix_core import events as ev
from reasonix_core.permission.approver import ApprovalDecision, FailClosedApprover
from reasonix_core.permission.gate import PermissionGate
from reasonix_core.permission.policy import Policy
from reasonix_core.permission.write_grants import WriteGrants
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.shell_sandbox import SandboxUnavailable, bwrap_available, prepare_command
from reasonix_testkit import Reply, ScriptedApprover, ToolCallSpec
from tests.conftest import reasonix
from tests.core.agent_helpers import run_turn, runtime
from tests.core.tool_helpers import run_bash

needs_bwrap = pytest.mark.skipif(
    bwrap_available() is None, reason="bubblewrap cannot create a sandbox here"
)

ONCE, SESSION, DENY = (
    ApprovalDecision.ALLOW_ONCE,
    ApprovalDecision.ALLOW_SESSION,
    ApprovalDecision.DENY,
)
WHY = "the build writes its cache to the sibling checkout"


@pytest.fixture
def var_tmp() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="rx-scope-", dir="/var/tmp"))
    try:
        yield Path(os.path.realpath(root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def place(var_tmp: Path) -> dict[str, Path]:
    """A workspace, a session temp dir, a folder to grant, one never granted, and a
    fake Reasonix home with a key (protected)."""
    paths = {name: var_tmp / name for name in ("ws", "tmp", "shared", "other")}
    paths["rx-home"] = var_tmp / "vault" / ".reasonix"
    for path in paths.values():
        path.mkdir(parents=True)
    (paths["rx-home"] / ".env").write_text("KEY=sk-secret\n")
    return paths


def _ctx(
    place: dict[str, Path],
    approver: object = None,
    *,
    configured: tuple[Path, ...] = (),
    preset: str = "ask",
    deny: tuple[str, ...] = (),
    bash: str = "off",
    claim: tuple[Path, ...] | None = None,
) -> ToolContext:
    ws = place["ws"]
    protected = (place["rx-home"],)
    policy = Policy(preset=preset, deny=deny, workspace=ws, forbid_read=protected)
    ctx = ToolContext(env=SessionEnv(workspace=ws, temp_dir=place["tmp"], bash_timeout_seconds=30))
    ctx.env = dataclasses.replace(
        ctx.env,
        sandbox=SandboxPolicy(
            workspace=ws,
            temp_dir=place["tmp"],
            forbid_read=protected,
            bash=bash,  # type: ignore[arg-type]
            claim=claim,
        ),
    )
    ctx.env = dataclasses.replace(
        ctx.env, gate=PermissionGate(policy, approver, WriteGrants(configured))
    )  # type: ignore[arg-type]
    return ctx


async def _write(ctx: ToolContext, target: Path, *dirs: str, why: str = WHY) -> ToolResult:
    """bash writes ``target/out.txt``, asking for ``dirs``."""
    args: dict[str, object] = {"additional_write_dirs": list(dirs)}
    if why:
        args["justification"] = why
    return await run_bash(ctx, f"echo hi > {target}/out.txt", **args)


# -- what the user is asked, and what each answer does ------------------------------


async def test_allow_once_runs_the_call_and_is_not_reused(place: dict[str, Path]) -> None:
    approver = ScriptedApprover(decisions=[ONCE, DENY])
    ctx = _ctx(place, approver)
    shared = place["shared"]
    first = await _write(ctx, shared, str(shared))
    assert first.outcome == "ok", first.text
    assert (shared / "out.txt").read_text() == "hi\n"
    (request,) = approver.seen
    assert request.write_dirs == (str(shared),)
    assert request.justification == WHY
    assert request.arguments["command"] == f"echo hi > {shared}/out.txt"
    (shared / "out.txt").unlink()
    second = await _write(ctx, shared, str(shared))
    assert len(approver.seen) == 2, "a grant made once must not cover the next call"
    assert second.outcome == "denied" and not (shared / "out.txt").exists()


async def test_session_grant_is_reused_and_covers_folders_below(place: dict[str, Path]) -> None:
    approver = ScriptedApprover(decisions=[SESSION])
    ctx = _ctx(place, approver)
    shared = place["shared"]
    (shared / "sub").mkdir()
    assert (await _write(ctx, shared, str(shared))).outcome == "ok"
    again = await _write(ctx, shared / "sub", str(shared / "sub"))
    assert again.outcome == "ok", again.text
    assert len(approver.seen) == 1
    assert ctx.gate is not None
    assert ctx.gate.write_grants.session == (shared,)  # type: ignore[attr-defined]


async def test_a_grant_for_a_folder_does_not_cover_its_namesake_sibling(
    place: dict[str, Path],
) -> None:
    approver = ScriptedApprover(decisions=[SESSION, DENY])
    ctx = _ctx(place, approver)
    shared = place["shared"]
    sibling = shared.parent / "shared-b"
    sibling.mkdir()
    assert (await _write(ctx, shared, str(shared))).outcome == "ok"
    result = await _write(ctx, sibling, str(sibling))
    assert result.outcome == "denied"
    assert [r.write_dirs for r in approver.seen] == [(str(shared),), (str(sibling),)]
    assert not (sibling / "out.txt").exists()


async def test_deny_is_a_denied_result_and_nothing_runs(place: dict[str, Path]) -> None:
    approver = ScriptedApprover(decisions=[DENY])
    ctx = _ctx(place, approver)
    shared = place["shared"]
    result = await _write(ctx, shared, str(shared))
    assert result.is_error and result.outcome == "denied"
    assert "The user denied bash write access to" in result.text
    assert not (shared / "out.txt").exists()


async def test_a_folder_inside_the_workspace_needs_no_grant(place: dict[str, Path]) -> None:
    approver = ScriptedApprover()
    ctx = _ctx(place, approver)
    (place["ws"] / "build").mkdir()
    result = await _write(ctx, place["ws"] / "build", "build")
    assert result.outcome == "ok", result.text
    assert approver.seen == []


# -- what is never granted ------------------------------------------------------------


async def _refused(ctx: ToolContext, *dirs: str, why: str = WHY) -> str:
    result = await run_bash(
        ctx, "touch /var/tmp/never-run", additional_write_dirs=list(dirs), justification=why
    )
    assert result.is_error and result.outcome == "error", result.text
    assert "the command was not run" in result.text
    assert not Path("/var/tmp/never-run").exists()
    return result.text


async def test_hostile_folders_are_refused_before_anyone_is_asked(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    approver = ScriptedApprover(decisions=[SESSION] * 10)
    ctx = _ctx(place, approver)
    ws, rx_home = place["ws"], place["rx-home"]
    (ws / "key-link").symlink_to(rx_home)
    (ws / "file.txt").write_text("x")
    user_home = place["other"] / "user"
    (user_home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user_home))

    assert "protected path" in await _refused(ctx, "key-link")
    assert "protected path" in await _refused(ctx, str(rx_home.parent))  # holds the home
    assert "not a directory" in await _refused(ctx, "file.txt")
    assert "does not exist" in await _refused(ctx, "no/such/dir")
    assert "root of the filesystem" in await _refused(ctx, "/")
    assert "home folder itself" in await _refused(ctx, "~")
    assert "home folder itself" in await _refused(ctx, "~/project/..")
    assert "above your home" in await _refused(ctx, str(place["other"]))
    assert "system folder" in await _refused(ctx, "/etc")
    assert "system folder" in await _refused(ctx, "/usr/local/lib")
    shared_by_all = next(d for d in ("/opt", "/srv", "/mnt", "/media") if os.path.isdir(d))
    assert "shared by every user" in await _refused(ctx, shared_by_all)
    assert "needs a justification" in await _refused(ctx, str(place["other"]), why="  ")
    assert approver.seen == []


async def test_dotdot_and_symlinks_are_judged_and_shown_as_the_physical_folder(
    place: dict[str, Path],
) -> None:
    approver = ScriptedApprover(decisions=[DENY, DENY])
    ctx = _ctx(place, approver)
    ws, other = place["ws"], place["other"]
    (ws / "innocent").symlink_to(other)
    await _write(ctx, other, "innocent")
    await _write(ctx, other, "../ws/../other")
    assert [r.write_dirs for r in approver.seen] == [(str(other),), (str(other),)]


async def test_a_deny_rule_on_writes_there_refuses_the_grant(place: dict[str, Path]) -> None:
    approver = ScriptedApprover(decisions=[SESSION])
    shared = place["shared"]
    ctx = _ctx(place, approver, deny=(f"Edit({shared}/**)",))
    result = await _write(ctx, shared, str(shared))
    assert result.outcome == "denied" and "denied by rule" in result.text
    assert approver.seen == []


async def test_a_subagent_cannot_widen_beyond_its_claim(place: dict[str, Path]) -> None:
    approver = ScriptedApprover(decisions=[SESSION])
    ctx = _ctx(place, approver, claim=(place["ws"],))
    result = await _write(ctx, place["shared"], str(place["shared"]))
    assert result.is_error and "not available to a subagent" in result.text
    assert approver.seen == [] and not (place["shared"] / "out.txt").exists()


# -- headless and presets ---------------------------------------------------------------


@pytest.mark.parametrize("preset", ["ask", "auto", "yolo"])
async def test_headless_refuses_in_every_preset_and_names_add_dir(
    place: dict[str, Path], preset: str
) -> None:
    ctx = _ctx(place, FailClosedApprover(), preset=preset)
    shared = place["shared"]
    result = await _write(ctx, shared, str(shared))
    assert result.outcome == "denied"
    assert f"--add-dir {shared}" in result.text
    assert "additional_directories" in result.text
    assert not (shared / "out.txt").exists()


async def test_configured_folders_are_granted_without_asking(place: dict[str, Path]) -> None:
    shared = place["shared"]
    (shared / "cache").mkdir()
    ctx = _ctx(place, FailClosedApprover(), configured=(shared,))
    result = await _write(ctx, shared / "cache", str(shared / "cache"))
    assert result.outcome == "ok", result.text


# -- the real sandbox --------------------------------------------------------------------


@needs_bwrap
async def test_the_sandbox_writes_the_granted_folder_and_still_refuses_another(
    place: dict[str, Path],
) -> None:
    approver = ScriptedApprover(decisions=[ONCE, ONCE])
    ctx = _ctx(place, approver, bash="enforce")
    shared, other = place["shared"], place["other"]
    (shared / "link-out").symlink_to(other)
    command = (
        f"echo granted > {shared}/ok.txt; "
        f"echo leaked > {other}/no.txt; "
        f"echo leaked > {shared}/link-out/via-link.txt; "
        "true"
    )
    result = await run_bash(ctx, command, additional_write_dirs=[str(shared)], justification=WHY)
    assert result.outcome == "ok", result.text
    assert (shared / "ok.txt").read_text() == "granted\n"
    assert "Read-only file system" in result.text
    assert not (other / "no.txt").exists()
    assert not (other / "via-link.txt").exists()
    # The grant was for that call only: the next sandboxed call cannot write there.
    plain = await run_bash(ctx, f"echo again > {shared}/again.txt")
    assert plain.is_error and "Read-only file system" in plain.text
    assert not (shared / "again.txt").exists()


@needs_bwrap
def test_a_granted_folder_swapped_for_a_symlink_is_not_bound(place: dict[str, Path]) -> None:
    shared, other = place["shared"], place["other"]
    policy = SandboxPolicy(workspace=place["ws"], temp_dir=place["tmp"], granted=(shared,))
    # Judged as a real folder, then swapped before the sandbox is built.
    shared.rename(place["ws"].parent / "shared-moved")
    shared.symlink_to(other)
    with pytest.raises(SandboxUnavailable, match="changed since it was granted"):
        prepare_command(policy, "true")


# -- through the loop and the command line -------------------------------------------------


def _bash_call(target: Path) -> ToolCallSpec:
    args = {
        "command": f"echo hi > {target}/out.txt",
        "additional_write_dirs": [str(target)],
        "justification": WHY,
    }
    return ToolCallSpec("bash", json.dumps(args))


async def test_headless_run_through_the_loop_refuses_then_add_dir_grants(
    configured, place: dict[str, Path]
) -> None:
    ws, shared = place["ws"], place["shared"]
    configured.enqueue(Reply(tool_calls=[_bash_call(shared)]), Reply(content="done"))
    async with runtime(ws, permission_mode="yolo") as rt:
        events = await run_turn(rt, "write elsewhere")
    (refused,) = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert refused.outcome == "denied" and f"--add-dir {shared}" in refused.result
    assert not (shared / "out.txt").exists()

    configured.enqueue(Reply(tool_calls=[_bash_call(shared)]), Reply(content="done"))
    async with runtime(ws, permission_mode="yolo", add_dirs=[shared]) as rt:
        events = await run_turn(rt, "write elsewhere")
    (granted,) = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert granted.outcome == "ok", granted.result
    assert (shared / "out.txt").read_text() == "hi\n"


def test_reasonix_run_add_dir_covers_the_write_scope(configured, place: dict[str, Path]) -> None:
    ws, shared = place["ws"], place["shared"]
    configured.enqueue(Reply(tool_calls=[_bash_call(shared)]), Reply(content="done"))
    proc = reasonix(ws, "run", "write elsewhere", "-y")
    assert proc.returncode == 0, proc.stderr
    assert not (shared / "out.txt").exists()
    configured.enqueue(Reply(tool_calls=[_bash_call(shared)]), Reply(content="done"))
    proc = reasonix(ws, "run", "write elsewhere", "-y", "--add-dir", str(shared))
    assert proc.returncode == 0, proc.stderr
    assert (shared / "out.txt").read_text() == "hi\n"


@needs_bwrap
async def test_a_subagent_child_is_refused_even_where_the_parent_is_covered(
    configured, home: Path, place: dict[str, Path]
) -> None:
    from tests.conftest import write_config
    from tests.core.subagent_helpers import call, install, requests_of

    write_config(home, configured.base_url, extra="")
    config = home / "config.toml"
    config.write_text(config.read_text().replace('bash = "off"', 'bash = "enforce"'))
    ws, shared = place["ws"], place["shared"]
    (ws / "src").mkdir()
    script = install(configured)
    script.when(
        "PARENT-WIDEN",
        call("task", "call_c", prompt="CHILD-WIDEN: write the sibling", write_paths=["src"]),
        Reply(content="parent done"),
    )
    child_call = ToolCallSpec(
        "bash",
        json.dumps(
            {
                "command": f"echo pwned > {shared}/child.txt",
                "additional_write_dirs": [str(shared)],
                "justification": WHY,
            }
        ),
    )
    script.when("CHILD-WIDEN", Reply(tool_calls=[child_call]), Reply(content="child done"))
    # --add-dir covers the folder for the parent session; the child still may not widen.
    async with runtime(ws, permission_mode="yolo", add_dirs=[shared]) as rt:
        await run_turn(rt, "PARENT-WIDEN")
    last = requests_of(configured, "CHILD-WIDEN")[-1].json
    assert last is not None
    (result,) = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert "not available to a subagent" in result
    assert not (shared / "child.txt").exists()


class _BrokenApprover:
    interactive = True

    async def decide(self, request: object) -> ApprovalDecision:
        raise RuntimeError("the dialog crashed")

    async def ask(self, questions: object) -> None:
        return None


async def test_a_broken_approver_never_widens_the_sandbox(place: dict[str, Path]) -> None:
    ctx = _ctx(place, _BrokenApprover())
    shared = place["shared"]
    result = await _write(ctx, shared, str(shared))
    assert result.outcome == "denied" and "the dialog crashed" in result.text
    assert not (shared / "out.txt").exists()


def test_granted_folders_are_bound_by_descriptor_before_the_masks(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reasonix_core.tool import shell_sandbox

    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: "/usr/bin/bwrap")
    shared = place["shared"]
    hidden = shared / ".env"
    hidden.write_text("KEY=1")
    policy = SandboxPolicy(
        workspace=place["ws"], temp_dir=place["tmp"], forbid_read=(hidden,), granted=(shared,)
    )
    argv = shell_sandbox.build_command(policy, "true", granted_fds=[(shared, 97)])
    at = argv.index("--bind-fd")
    assert argv[at : at + 3] == ["--bind-fd", "97", str(shared)]
    assert str(shared) not in [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    # A protected file inside the granted folder is still masked, after the bind.
    mask = argv.index(str(hidden))
    assert argv[mask - 2 : mask] == ["--ro-bind", "/dev/null"] and mask > at
    # Without its descriptor a granted folder is not bound at all (fails closed).
    assert "--bind-fd" not in shell_sandbox.build_command(policy, "true")


# -- git metadata outside the workspace (review) -------------------------------------


def _git(*args: str, cwd: Path) -> None:
    import subprocess

    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


async def test_a_git_directory_or_a_folder_inside_one_is_never_granted(
    place: dict[str, Path],
) -> None:
    """Hooks and config in a git directory run programs on the host the next time
    the user runs git there: writing them is an escape however the grant is worded."""
    approver = ScriptedApprover(decisions=[ONCE] * 5)
    ctx = _ctx(place, approver)
    sibling = place["other"] / "sibling"
    sibling.mkdir()
    _git("init", "-q", cwd=sibling)
    bare = place["other"] / "bare.git"
    _git("init", "-q", "--bare", str(bare), cwd=place["other"])
    for entry in (sibling / ".git", sibling / ".git" / "hooks", bare, bare / "hooks"):
        assert "git directory" in await _refused(ctx, str(entry)), entry
    assert approver.seen == []


async def test_a_folder_holding_the_workspaces_own_git_directory_is_never_granted(
    var_tmp: Path,
) -> None:
    """A linked worktree's git directory lives in the main checkout, outside the
    workspace: a grant of a folder above it would let a command plant a hook or
    ``core.fsmonitor`` that the user's next ``git status`` in the workspace runs."""
    main, ws = var_tmp / "repos" / "main", var_tmp / "ws"
    main.mkdir(parents=True)
    _git("init", "-q", cwd=main)
    _git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "0",
        cwd=main,
    )
    _git("worktree", "add", "-q", str(ws), cwd=main)
    place = {"ws": ws, "tmp": var_tmp / "tmp", "rx-home": var_tmp / "vault"}
    place["tmp"].mkdir()
    place["rx-home"].mkdir()
    approver = ScriptedApprover(decisions=[ONCE])
    ctx = _ctx(place, approver)
    refused = await _refused(ctx, str(var_tmp / "repos"))
    assert "git directory" in refused and str(main / ".git") in refused
    assert approver.seen == []


@needs_bwrap
async def test_repositories_below_a_granted_folders_top_level_stay_read_only(
    place: dict[str, Path],
) -> None:
    """Granting a folder of checkouts (``~/src``) must not make their ``.git``
    writable: a planted hook or ``core.fsmonitor`` would run on the host at the
    user's next git command there. A bare repository below it is kept too (a push
    to it runs its hooks)."""
    shared = place["shared"]
    x, y, bare = shared / "x", shared / "a" / "b" / "y", shared / "c" / "bare.git"
    for repo in (x, y):
        repo.mkdir(parents=True)
        _git("init", "-q", cwd=repo)
    bare.parent.mkdir()
    _git("init", "-q", "--bare", str(bare), cwd=shared)
    config_before = (y / ".git" / "config").read_text()
    approver = ScriptedApprover(decisions=[ONCE])
    ctx = _ctx(place, approver, bash="enforce")
    command = (
        f"echo work > {x}/file.txt; "
        f"printf '#!/bin/sh\\ntouch /var/tmp/pwned\\n' > {x}/.git/hooks/pre-commit; "
        f"printf '[core]\\n\\tfsmonitor = touch /var/tmp/pwned\\n' >> {y}/.git/config; "
        f"echo x > {bare}/hooks/post-receive; "
        f"mv {x}/.git {x}/moved-git; "
        "true"
    )
    result = await run_bash(ctx, command, additional_write_dirs=[str(shared)], justification=WHY)
    assert result.outcome == "ok", result.text
    assert approver.seen  # the user was asked, and granted
    assert (x / "file.txt").read_text() == "work\n"
    assert not (x / ".git" / "hooks" / "pre-commit").exists()
    assert (y / ".git" / "config").read_text() == config_before
    assert not (bare / "hooks" / "post-receive").exists()
    assert (x / ".git").is_dir() and not (x / "moved-git").exists()
    assert result.text.count("Read-only file system") == 3, result.text
    assert "Device or resource busy" in result.text


async def test_a_folder_too_big_to_scan_for_repositories_is_refused(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail closed: a repository the bounded scan did not reach would stay writable,
    so a folder past the scan's bounds is not granted at all."""
    from reasonix_core.tool import git_guard

    approver = ScriptedApprover(decisions=[ONCE] * 2)
    ctx = _ctx(place, approver)
    wide, deep = place["other"] / "wide", place["other"] / "deep"
    for n in range(6):
        (wide / f"d{n}").mkdir(parents=True)
    (deep / "1" / "2" / "3").mkdir(parents=True)
    monkeypatch.setattr(git_guard, "NESTED_SCAN_MAX_ENTRIES", 5)
    monkeypatch.setattr(git_guard, "NESTED_SCAN_MAX_DEPTH", 2)
    refused = await _refused(ctx, str(wide))
    assert "holds too many entries" in refused and "grant the checkout itself" in refused
    refused = await _refused(ctx, str(deep))
    assert "nested too deep" in refused and "grant the checkout itself" in refused
    assert approver.seen == []
    # A nested .git that is a symlink cannot be protected (a mount follows it).
    linked = place["other"] / "linked" / "x"
    linked.mkdir(parents=True)
    (linked / ".git").symlink_to(place["other"] / "wide")
    refused = await _refused(ctx, str(linked.parent))
    assert "symlinked git directory" in refused
    assert approver.seen == []
    # Within the bounds the same kind of folder is granted.
    monkeypatch.setattr(git_guard, "NESTED_SCAN_MAX_DEPTH", 6)
    result = await _write(ctx, deep, str(deep))
    assert result.outcome == "ok", result.text


def test_the_default_scan_bounds_fit_a_checkout_with_its_dependencies(tmp_path: Path) -> None:
    """A sibling checkout with a venv or node_modules (often over 10 levels and
    thousands of entries) must stay grantable: the bounds refuse home-sized trees,
    not real projects."""
    from reasonix_core.tool import git_guard

    checkout = tmp_path / "sibling"
    deep = checkout / "node_modules" / "a" / "node_modules" / "b" / "lib" / "x" / "y" / "z"
    (deep / "k" / "l" / "m" / "n").mkdir(parents=True)
    for n in range(3_000):
        (checkout / "node_modules" / "a" / f"f{n}.js").write_text("")
    (checkout / ".venv" / "src" / "pkg" / ".git").mkdir(parents=True)
    found = git_guard.nested_git_entries(checkout)
    assert found == [checkout / ".venv" / "src" / "pkg" / ".git"]
