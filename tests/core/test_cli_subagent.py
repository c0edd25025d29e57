"""``reasonix subagent list|run|try``: the command line's entry to the one runner."""

from __future__ import annotations

from reasonix_testkit import Reply
from tests.conftest import reasonix
from tests.core.subagent_helpers import call, capsules, install, requests_of, tool_names
from tests.core.test_skills import skill_md, write_skill


def test_list_shows_the_defaults_and_the_subagent_skills(workspace, configured):
    root = workspace / ".reasonix" / "skills"
    write_skill(root, "reviewer", skill_md("reviewer", "Reviews code", runAs="subagent"))
    write_skill(root, "greet", skill_md("greet", "Greets"))
    proc = reasonix(workspace, "subagent", "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("(task)\twriter") and lines[1].startswith("(read-only)\tread-only")
    assert "reviewer\twriter\tReviews code" in lines
    assert not any(line.startswith("greet") for line in lines)


def test_try_runs_the_read_only_runner(workspace, configured, home):
    (workspace / "notes.txt").write_text("the answer is 42\n")
    script = install(configured)
    script.when("CLI-TRY", call("read_file", path="notes.txt"), Reply(content="It says 42."))
    proc = reasonix(workspace, "subagent", "try", "CLI-TRY: what do the notes say?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "It says 42.\n"
    assert "● read_file" in proc.stderr
    names = tool_names(requests_of(configured, "CLI-TRY")[0])
    assert "write_file" not in names and "bash" not in names
    (capsule,) = capsules(home)
    assert capsule["read_only"] is True and capsule["parent_tool_call_id"] == ""


def test_run_runs_a_writer_with_its_claim_and_reports(workspace, configured):
    (workspace / "src").mkdir()
    script = install(configured)
    script.when(
        "CLI-RUN",
        call("write_file", path="docs/x.md", content="no\n"),
        call("write_file", path="src/x.py", content="x = 1\n"),
        Reply(content="wrote src/x.py"),
    )
    proc = reasonix(workspace, "subagent", "run", "-y", "--write-path", "src", "CLI-RUN: make x")
    assert proc.returncode == 0, proc.stderr
    assert "[subagent status: unreported" in proc.stdout
    assert "- wrote: src/x.py" in proc.stdout
    assert "outside this subagent's write claim" in proc.stderr
    assert (workspace / "src" / "x.py").exists() and not (workspace / "docs").exists()


def test_a_start_failure_is_a_usage_error(workspace, configured):
    proc = reasonix(workspace, "subagent", "run", "--write-path", "../out", "CLI: escape")
    assert proc.returncode == 2
    assert proc.stderr.startswith("reasonix: error: write_paths:")
    assert "Traceback" not in proc.stderr


def test_reasonix_run_reports_delegation_in_its_json_metrics(workspace, configured):
    import json

    script = install(configured)
    script.when(
        "HEADLESS-PARENT",
        call("read_only_task", "call_h", prompt="HEADLESS-CHILD: look"),
        Reply(content="parent answer"),
    )
    script.when("HEADLESS-CHILD", call("ls"), Reply(content="child answer"))
    proc = reasonix(workspace, "run", "--output-format", "json", "HEADLESS-PARENT: delegate")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["result"] == "parent answer"
    metrics = result["metrics"]
    assert metrics["subagent_runs"] == 1 and metrics["subagent_tool_calls"] == 1
    assert metrics["usage_by_source"]["subagent"]["calls"] == 2
    script.when(
        "HEADLESS-PARENT",
        call("read_only_task", "call_h", prompt="HEADLESS-CHILD: look"),
        Reply(content="parent answer"),
    )
    script.when("HEADLESS-CHILD", Reply(content="child answer"))
    text = reasonix(workspace, "run", "HEADLESS-PARENT: again")
    assert text.returncode == 0, text.stderr
    # Text output: the parent's answer only; the child's start and end on stderr.
    assert text.stdout == "parent answer\n"
    assert "◆ read-only subagent call_h started" in text.stderr
    assert "◆ subagent call_h: done" in text.stderr


def test_run_and_try_leave_no_parent_session_only_the_childs_transcript(
    workspace, configured, home
):
    import json

    (workspace / "src").mkdir()
    script = install(configured)
    script.when("CLI-NOPARENT-TRY", Reply(content="looked"))
    script.when(
        "CLI-NOPARENT-RUN",
        call("write_file", path="src/y.py", content="y\n"),
        Reply(content="done"),
    )
    assert reasonix(workspace, "subagent", "try", "CLI-NOPARENT-TRY: look").returncode == 0
    proc = reasonix(workspace, "subagent", "run", "-y", "--write-path", "src", "CLI-NOPARENT-RUN")
    assert proc.returncode == 0, proc.stderr
    sessions = home / "sessions"
    files = sorted(p.relative_to(sessions) for p in sessions.rglob("*") if p.is_file())
    # Nothing beside the children's store: no (empty) parent session to list or --continue.
    assert files and all(p.parts[0] == "subagents" for p in files), files
    transcripts = [p for p in files if p.suffix == ".jsonl"]
    assert len(transcripts) == 2
    for transcript in transcripts:
        header = json.loads((sessions / transcript).read_text().splitlines()[0])
        assert header["extra"]["subagent"]["parent_session_id"] == ""  # no parent session exists
    assert {c["parent_session_id"] for c in capsules(home)} == {""}


def test_plan_mode_is_refused_for_a_subagent(workspace, configured):
    # plan is a launch mode of the app and of `run`, not a preset a child can take.
    proc = reasonix(workspace, "--permission-mode", "plan", "subagent", "try", "CLI: look")
    assert proc.returncode == 2
    assert (
        proc.stderr
        == "reasonix: error: a subagent cannot run in plan mode; use ask, auto or yolo\n"
    )
    assert not configured.requests


def test_a_write_path_on_git_metadata_is_a_usage_error(workspace, configured):
    import subprocess

    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    script = install(configured)
    script.when(
        "CLI-GIT",
        call("write_file", path=".git/hooks/pre-commit", content="#!/bin/sh\necho pwned\n"),
        Reply(content="planted"),
    )
    for claim in (".git", ".git/hooks"):
        proc = reasonix(workspace, "subagent", "run", "-y", "--write-path", claim, "CLI-GIT: go")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr.startswith("reasonix: error: write_paths:")
        assert "inside the git directory" in proc.stderr
    assert requests_of(configured, "CLI-GIT") == []
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
