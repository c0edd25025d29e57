"""Host-adjudicated completion (seed 000 §3.11): the report is a claim; the host
checks each criterion against its own receipts and only ever downgrades."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reasonix_core.errors import ToolArgumentError
from reasonix_core.subagent.completion import adjudicate, parse_report
from reasonix_core.subagent.receipts import CommandReceipt, Receipts
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_testkit import Reply
from tests.core.agent_helpers import run_turn, runtime, session_messages
from tests.core.subagent_helpers import call, calls, criterion, install, metrics_of, report


def _sandbox(tmp_path: Path) -> SandboxPolicy:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True, exist_ok=True)
    return SandboxPolicy(workspace=ws, temp_dir=tmp_path / "tmp")


def _receipts(sandbox: SandboxPolicy) -> Receipts:
    r = Receipts()
    r.writes[sandbox.resolve("src/a.py", follow_symlinks=False)] = None
    r.commands.append(CommandReceipt("pytest -q  tests", 0))
    r.commands.append(CommandReceipt("make lint", 2))
    return r


def _report(status: str, *items: dict) -> object:
    return parse_report(
        {"status": status, "summary": "s", "acceptance_criteria": list(items), "unresolved": []}
    )


@pytest.mark.parametrize(
    ("item", "verdict", "reason"),
    [
        (criterion("tests", "verification", command="pytest -q tests"), "satisfied", "exit 0"),
        (criterion("fake", "verification", command="pytest -q"), "unsatisfied", "no run"),
        (criterion("lint", "verification", command="make lint"), "unsatisfied", "exited 2"),
        (criterion("none", "verification"), "unsatisfied", "names no command"),
        (criterion("diff", "diff", paths=["src/a.py"]), "satisfied", "written"),
        (criterion("dotdot", "diff", paths=["src/../src/a.py"]), "satisfied", "written"),
        (criterion("unseen", "files", paths=["src/a.py", "src/b.py"]), "unsatisfied", "src/b.py"),
        (criterion("empty", "files", paths=[]), "unsatisfied", "names no paths"),
        (criterion("trust me", "manual"), "unsatisfied", "proves nothing"),
    ],
)
def test_each_evidence_kind_is_checked_against_the_receipts(tmp_path, item, verdict, reason):
    sandbox = _sandbox(tmp_path)
    result = adjudicate(_report("complete", item), _receipts(sandbox), sandbox)
    (checked,) = result.items
    assert checked.verdict == verdict and reason in checked.reason
    assert result.status == ("complete" if verdict == "satisfied" else "partial")
    assert result.false_completion is (verdict != "satisfied")


def test_the_host_never_upgrades(tmp_path):
    sandbox = _sandbox(tmp_path)
    good = criterion("diff", "diff", paths=["src/a.py"])
    for status in ("partial", "blocked", "failed"):
        result = adjudicate(_report(status, good), _receipts(sandbox), sandbox)
        assert result.status == status and result.downgrades == 0
        assert not result.false_completion
    bad = criterion("manual", "manual")
    result = adjudicate(_report("failed", bad), _receipts(sandbox), sandbox)
    assert result.status == "failed" and result.downgrades == 1


def test_a_malformed_report_is_refused_with_what_is_wrong():
    with pytest.raises(ToolArgumentError, match="status"):
        parse_report({"status": "done", "summary": "s", "acceptance_criteria": []})
    with pytest.raises(ToolArgumentError, match=r"acceptance_criteria\.0\.evidence"):
        parse_report(
            {"status": "complete", "summary": "s", "acceptance_criteria": [{"criterion": "x"}]}
        )


PARENT = "PARENT-TASK: delegate and judge"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


@needs_bwrap
@pytest.mark.usefixtures("configured")
async def test_the_parent_receives_the_adjudicated_report_then_prose_then_receipt(
    workspace, server, home
):
    config = home / "config.toml"
    config.write_text(config.read_text().replace('bash = "off"', 'bash = "enforce"'))
    (workspace / "src").mkdir()
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_w", prompt="CHILD-R: implement a", write_paths=["src"]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-R",
        calls(
            ("write_file", {"path": "src/a.py", "content": "a = 1\n"}),
            ("bash", {"command": "test -f src/a.py"}),
        ),
        report(
            "complete",
            criterion("a exists", "verification", command="test -f src/a.py"),
            criterion("tests pass", "verification", command="pytest -q"),
            criterion("a written", "diff", paths=["src/a.py"]),
            criterion("b written", "files", paths=["src/b.py"]),
            criterion("looks right", "manual"),
            unresolved=("b is missing",),
        ),
        Reply(content="CHILD-PROSE: a is done, b is not"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        events = await run_turn(rt, PARENT)
        result = next(m for m in session_messages(rt) if m["role"] == "tool")["content"]

    assert result.startswith(
        "[subagent status: partial (claimed complete; downgraded by the host)]"
    )
    assert "- [satisfied] a exists (verification: `test -f src/a.py` ran, exit 0)" in result
    assert "- [unsatisfied] tests pass (verification: the host recorded no run of" in result
    assert "- [satisfied] a written (diff: written: src/a.py)" in result
    assert "- [unsatisfied] b written (files: not written in this run: src/b.py)" in result
    assert "- [unsatisfied] looks right (manual: manual evidence proves nothing" in result
    assert "- b is missing" in result
    # Order: verdict and items, the child's prose, the host's receipt.
    assert (
        result.index("Acceptance criteria")
        < result.index("CHILD-PROSE")
        < result.index("Host receipt:")
    )
    assert "- ran: test -f src/a.py (exit 0)" in result
    m = metrics_of(events)
    assert m.completion_reports == 1 and m.completions_prose_only == 0
    assert m.false_completions == 1 and m.criterion_downgrades == 3
