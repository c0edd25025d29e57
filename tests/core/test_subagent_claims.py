"""Write claims are enforced, not advisory (seed 000 §3.12), tested as an attacker
would: ``..``, symlinks inside the claim pointing out, both ends of a move, a
claim that itself points outside, and bash without a sandbox that can rebind."""

from __future__ import annotations

import os
import shutil

import pytest

from reasonix_core import events as ev
from reasonix_testkit import Reply
from tests.conftest import write_config
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.subagent_helpers import call, calls, install, metrics_of, requests_of, tool_names

pytestmark = pytest.mark.usefixtures("configured")

PARENT = "PARENT-TASK: delegate a confined change"


def _results(server, needle: str) -> list[str]:
    """The tool results the agent ``needle`` received, in order."""
    last = requests_of(server, needle)[-1].json
    assert last is not None
    return [m["content"] for m in last["messages"] if m["role"] == "tool"]


async def test_writes_outside_the_claim_are_refused(workspace, server, tmp_path):
    src = workspace / "src"
    src.mkdir()
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("guide\n")
    (workspace / "top.txt").write_text("top\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    # Inside the claim, pointing out of it: into the workspace and out of it.
    os.symlink(workspace / "docs", src / "to-docs")
    os.symlink(outside, src / "to-outside")
    os.symlink(workspace / "top.txt", src / "top-link.txt")
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_w", prompt="CHILD-W: edit", write_paths=["src"]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-W",
        calls(
            ("write_file", {"path": "src/../top.txt", "content": "pwned\n"}),
            ("write_file", {"path": "src/to-docs/new.md", "content": "pwned\n"}),
            ("write_file", {"path": "src/to-outside/x.txt", "content": "pwned\n"}),
            ("write_file", {"path": "src/top-link.txt", "content": "pwned\n"}),
            ("write_file", {"path": str(outside / "abs.txt"), "content": "pwned\n"}),
            ("move_file", {"source_path": "docs/guide.md", "destination_path": "src/guide.md"}),
            ("write_file", {"path": "src/ok.py", "content": "ok = True\n"}),
            ("move_file", {"source_path": "src/ok.py", "destination_path": "docs/ok.py"}),
        ),
        Reply(content="tried everything"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        parent_result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]

    results = _results(server, "CHILD-W")
    assert len(results) == 8
    for text in results[:6] + results[7:]:
        assert "outside this subagent's write claim (src)" in text, text
    assert "src/ok.py" in results[6] and "outside" not in results[6]
    assert (workspace / "top.txt").read_text() == "top\n"
    assert not (workspace / "docs" / "new.md").exists()
    assert list(outside.iterdir()) == []
    assert (workspace / "docs" / "guide.md").exists()
    assert (src / "ok.py").exists() and not (workspace / "docs" / "ok.py").exists()
    # The host's record holds only what was written, inside the claim.
    assert "- wrote: src/ok.py\n" in parent_result + "\n"
    m = metrics_of(events)
    assert m.subagent_mutations == 1 and m.write_scope_violations == 0


@pytest.mark.parametrize("claim", ["../elsewhere", "/etc", "escape-link/sub"])
async def test_a_claim_outside_the_workspace_starts_nothing(workspace, server, tmp_path, claim):
    os.symlink(tmp_path, workspace / "escape-link")
    script = install(server)
    script.when(
        PARENT,
        call("task", prompt="CHILD-X: write there", write_paths=[claim]),
        Reply(content="parent done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert "outside the workspace" in result
    assert requests_of(server, "CHILD-X") == []
    assert not any(isinstance(e, ev.SubagentStarted) for e in events)


async def test_bash_is_removed_when_the_sandbox_cannot_rebind(workspace, server):
    # The suite's config has [sandbox] bash = "off": nothing can confine bash.
    (workspace / "src").mkdir()
    script = install(server)
    script.when(
        PARENT,
        calls(
            ("task", {"prompt": "CHILD-A: claimed", "write_paths": ["src"]}),
            ("task", {"prompt": "CHILD-B: unclaimed"}),
        ),
        Reply(content="parent done"),
    )
    script.when("CHILD-A", Reply(content="a"))
    script.when("CHILD-B", Reply(content="b"))
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
    for needle in ("CHILD-A", "CHILD-B"):
        names = tool_names(requests_of(server, needle)[0])
        assert "bash" not in names and "write_file" in names


needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


@needs_bwrap
async def test_bash_is_confined_to_the_claim_by_the_sandbox(workspace, server, home, tmp_path):
    write_config(home, server.base_url, extra="")
    config = home / "config.toml"
    config.write_text(config.read_text().replace('bash = "off"', 'bash = "enforce"'))
    (workspace / "src").mkdir()
    (workspace / "top.txt").write_text("top\n")
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_b", prompt="CHILD-SH: use bash", write_paths=["src"]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-SH",
        calls(
            ("bash", {"command": "echo made > src/made.txt"}),
            ("bash", {"command": "echo pwned > top.txt"}),
        ),
        Reply(content="done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        parent_result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert "bash" in tool_names(requests_of(server, "CHILD-SH")[0])
    assert (workspace / "src" / "made.txt").read_text() == "made\n"
    assert (workspace / "top.txt").read_text() == "top\n"
    # (Outside the claim the command wrote nowhere real: a read-only file system,
    # or, with the workspace under /tmp as here, the sandbox's throwaway /tmp.)
    # The host saw what bash changed inside the claim, and both commands run.
    assert "- wrote: src/made.txt\n" in parent_result
    assert "- ran: echo made > src/made.txt (exit 0)" in parent_result
    assert "- ran: echo pwned > top.txt (exit" in parent_result
    assert metrics_of(events).subagent_mutations == 1


async def test_mcp_reaches_a_child_only_for_read_only_targets(workspace, server, tmp_path):
    from reasonix_core.permission.approver import FailClosedApprover
    from reasonix_core.session.build import build_session
    from reasonix_core.session.settings import RunSettings
    from tests.core.mcp_helpers import host, stdio_server

    script = install(server)
    script.when(
        PARENT,
        call("task", prompt="CHILD-MCP: use the server", write_paths=[]),
        Reply(content="parent done"),
    )
    echo = {"action": "call", "name": "mcp__fx__echo", "arguments": {"text": "hi"}}
    count = {"action": "call", "name": "mcp__fx__count", "arguments": {}}
    script.when(
        "CHILD-MCP",
        calls(("use_capability", echo), ("use_capability", count)),
        Reply(content="done"),
    )
    h = host(tmp_path, stdio_server("fx"))
    async with h:
        settings = RunSettings(workspace=workspace, permission_mode="yolo")
        async with build_session(settings, approver=FailClosedApprover(), mcp_host=h) as rt:
            await run_turn(rt, PARENT)
            # The session's own proxy is untouched: the parent may still call writers.
            assert rt.agent.tools.get("use_capability").read_only_targets is False
    results = _results(server, "CHILD-MCP")
    assert results[0] == "hi"
    assert "not declared read-only" in results[1] and "Nothing was run" in results[1]


async def test_tools_outside_a_childs_scope_cannot_be_called(workspace, server, home):
    # An injected call to a tool the child was not given is an unknown tool:
    # nothing runs, whatever the session itself could do.
    script = install(server)
    script.when(
        PARENT,
        call("read_only_task", prompt="CHILD-RO: just look"),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-RO",
        calls(
            ("write_file", {"path": "pwned.txt", "content": "x"}),
            ("bash", {"command": "touch pwned-by-bash"}),
            ("remember", {"title": "t", "content": "c", "type": "project"}),
            ("complete_subtask", {"status": "complete", "summary": "s", "acceptance_criteria": []}),
            ("task", {"prompt": "escalate to a writer"}),
        ),
        Reply(content="could not"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
    results = _results(server, "CHILD-RO")
    assert all(text.startswith("unknown tool") for text in results), results
    assert not (workspace / "pwned.txt").exists() and not (workspace / "pwned-by-bash").exists()
    assert not (home / "memory").exists() or not list((home / "memory").rglob("*.md"))


async def test_scratch_writes_in_the_temp_dir_are_no_mutation(workspace, server):
    (workspace / "src").mkdir()
    script = install(server)
    script.when(
        PARENT,
        call("task", prompt="CHILD-TMP: use scratch", write_paths=["src"]),
        Reply(content="parent done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        scratch = rt.agent.tool_context.temp_dir / "notes.txt"
        script.when(
            "CHILD-TMP",
            calls(
                ("write_file", {"path": str(scratch), "content": "scratch\n"}),
                ("write_file", {"path": "src/real.py", "content": "x = 1\n"}),
            ),
            Reply(content="done"),
        )
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert "- wrote: src/real.py\n" in result
    m = metrics_of(events)
    assert m.subagent_mutations == 1 and m.write_scope_violations == 0


async def test_a_claimed_file_can_be_created_and_only_it(workspace, server):
    (workspace / "src").mkdir()
    script = install(server)
    script.when(
        PARENT,
        call("task", prompt="CHILD-FILE: create one file", write_paths=["src/new.py"]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-FILE",
        calls(
            ("write_file", {"path": "src/new.py", "content": "new = 1\n"}),
            ("write_file", {"path": "src/other.py", "content": "no\n"}),
            ("write_file", {"path": "src/new.py/inner.py", "content": "no\n"}),
        ),
        Reply(content="done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
    first, second, third = _results(server, "CHILD-FILE")
    assert "src/new.py" in first and "denied" not in first
    assert "outside this subagent's write claim (src/new.py)" in second
    assert "inner.py" in third and not (workspace / "src" / "other.py").exists()
    assert (workspace / "src" / "new.py").read_text() == "new = 1\n"


async def test_a_child_delegates_only_within_its_own_claim(workspace, server):
    # A child claiming src/ cannot hand its own child a wider claim: an omitted
    # claim inherits src/, an explicit one outside it is refused before it runs.
    (workspace / "src").mkdir()
    script = install(server)
    script.when(
        PARENT,
        call("task", prompt="CHILD-BOUND: delegate", write_paths=["src"]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-BOUND",
        call("task", prompt="GRAND-WIDE: write top.txt", write_paths=["top.txt"]),
        call("task", prompt="GRAND-INHERIT: write top.txt"),
        Reply(content="child done"),
    )
    script.when(
        "GRAND-INHERIT",
        calls(
            ("write_file", {"path": "top.txt", "content": "escaped\n"}),
            ("write_file", {"path": "src/ok.txt", "content": "ok\n"}),
        ),
        Reply(content="grandchild done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
    first, second = _results(server, "CHILD-BOUND")
    assert "top.txt is outside this subagent's own write claim (src)" in first
    assert "grandchild done" in second
    assert requests_of(server, "GRAND-WIDE") == []
    escaped, ok = _results(server, "GRAND-INHERIT")
    assert "outside this subagent's write claim (src)" in escaped
    assert "src/ok.txt" in ok and "denied" not in ok
    assert not (workspace / "top.txt").exists() and (workspace / "src" / "ok.txt").exists()


def _git_init(*args: str) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", *args], check=True)


@needs_bwrap
@pytest.mark.parametrize("claim", [".git", ".git/hooks", ".git/config", "sub/../.git/hooks"])
async def test_a_claim_on_git_metadata_starts_nothing(workspace, server, home, claim):
    # A hook planted through a claim on the git directory runs on the host at the
    # user's next `git commit`: the claim is refused as the write-scope grant is.
    write_config(home, server.base_url, extra="")
    config = home / "config.toml"
    config.write_text(config.read_text().replace('bash = "off"', 'bash = "enforce"'))
    _git_init(str(workspace))
    (workspace / "sub").mkdir()
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_g", prompt="CHILD-GIT: plant a hook", write_paths=[claim]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-GIT",
        calls(
            ("bash", {"command": "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit"}),
            ("write_file", {"path": ".git/hooks/post-commit", "content": "#!/bin/sh\n"}),
        ),
        Reply(content="planted"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert "inside the git directory" in result, result
    assert requests_of(server, "CHILD-GIT") == []
    assert not any(isinstance(e, ev.SubagentStarted) for e in events)
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".git" / "hooks" / "post-commit").exists()


async def test_a_claim_on_a_bare_repository_inside_the_workspace_starts_nothing(
    workspace, server
):
    _git_init("--bare", str(workspace / "vendor.git"))
    script = install(server)
    script.when(
        PARENT,
        call("task", prompt="CHILD-BARE: write", write_paths=["vendor.git/hooks"]),
        Reply(content="parent done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert "inside the git directory" in result, result
    assert requests_of(server, "CHILD-BARE") == []


@pytest.mark.parametrize("claim", ["src/**", "src/*", "./src/**/"])
async def test_a_claim_written_as_a_glob_claims_the_folder(workspace, server, claim):
    # Models spell a folder claim as a glob; read as a folder named `**` it
    # refused every write inside src.
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "top.txt").write_text("top\n")
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_glob", prompt="CHILD-GLOB: edit", write_paths=[claim]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-GLOB",
        calls(
            ("write_file", {"path": "src/pkg/mod.py", "content": "x = 1\n"}),
            ("write_file", {"path": "top.txt", "content": "pwned\n"}),
        ),
        Reply(content="done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
    results = _results(server, "CHILD-GLOB")
    assert "outside" not in results[0], results[0]
    assert (workspace / "src" / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert "outside this subagent's write claim (src)" in results[1]
    assert (workspace / "top.txt").read_text() == "top\n"


@pytest.mark.parametrize("claim", ["src/*.py", "src/**/x", "s?c", "*.md"])
async def test_a_claim_with_any_other_glob_starts_nothing(workspace, server, claim):
    (workspace / "src").mkdir()
    script = install(server)
    script.when(
        PARENT,
        call("task", prompt="CHILD-PAT: write", write_paths=[claim]),
        Reply(content="parent done"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert f"write_paths: {claim!r} is a pattern" in result, result
    assert "name the folder" in result
    assert requests_of(server, "CHILD-PAT") == []


def _enforce_bash(home, server) -> None:
    write_config(home, server.base_url, extra="")
    config = home / "config.toml"
    config.write_text(config.read_text().replace('bash = "off"', 'bash = "enforce"'))


@needs_bwrap
async def test_the_receipt_itemises_a_full_wipe_and_lists_only_commands_that_ran(
    workspace, server, home
):
    _enforce_bash(home, server)
    src = workspace / "src"
    src.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (src / name).write_text(f"# {name}\n")
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_wipe", prompt="CHILD-WIPE: clean up", write_paths=["src"]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-WIPE",
        calls(
            ("bash", {"command": "rm -rf src/*"}),
            (
                "bash",
                {
                    "command": "touch /tmp/elsewhere",
                    "additional_write_dirs": ["/tmp"],
                    "justification": "scratch",
                },
            ),
        ),
        Reply(content="tidied"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        parent_result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert list(src.iterdir()) == []
    assert "- wrote: src/a.py, src/b.py, src/c.py\n" in parent_result, parent_result
    assert "not itemised" not in parent_result
    assert "- ran: rm -rf src/* (exit 0)" in parent_result
    # The refused call never ran: it is no command of the receipt.
    assert "touch /tmp/elsewhere" not in parent_result
    assert "(exit None)" not in parent_result
    assert metrics_of(events).subagent_mutations == 3


@needs_bwrap
async def test_a_claim_too_large_to_snapshot_says_so(workspace, server, home, monkeypatch):
    from reasonix_core.subagent import receipts

    monkeypatch.setattr(receipts, "SNAPSHOT_LIMIT", 2)
    _enforce_bash(home, server)
    src = workspace / "src"
    src.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (src / name).write_text(f"# {name}\n")
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_big", prompt="CHILD-BIG: edit", write_paths=["src"]),
        Reply(content="parent done"),
    )
    script.when("CHILD-BIG", call("bash", command="rm src/a.py"), Reply(content="edited"))
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
        parent_result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]
    assert "- bash changes: not itemised (too many files in the claim)" in parent_result
