"""Checkpoints and rewind end to end: scripted turns through the real tools
(edit_file, bash with sed -i / rm / chmod), then ``reasonix rewind``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reasonix_testkit import Reply
from reasonix_tui.cli import main
from tests.core.rewind_helpers import call, state, turn


@pytest.fixture
def ws(workspace: Path, configured: object, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(workspace)
    return workspace


def test_code_rewind_undoes_file_tools_and_bash(ws, configured, capsys):
    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "gone.txt").write_text("keep me\n")
    (ws / "run.sh").write_text("echo hi\n")
    os.chmod(ws / "run.sh", 0o644)
    configured.enqueue(Reply(content="hello"))
    assert main(["run", "hello"]) == 0
    before_2 = state(ws)
    turn(
        configured,
        "edit things",
        call("read_file", path="a.txt"),
        call("edit_file", path="a.txt", old_string="beta", new_string="BETA"),
        call("bash", command="sed -i 's/alpha/ALPHA/' a.txt && rm gone.txt && chmod +x run.sh"),
        call("bash", command="mkdir -p new/dir && printf 'made\\n' > new/dir/made.txt"),
    )
    assert (ws / "a.txt").read_text() == "ALPHA\nBETA\n"
    assert not (ws / "gone.txt").exists()
    after_2 = state(ws)
    capsys.readouterr()

    assert main(["rewind", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "turn 1" in listing and "turn 2" in listing and "edit things" in listing
    assert "M a.txt +2 -2" in listing
    assert "D gone.txt" in listing
    assert "A new/dir/made.txt +1 -0" in listing
    assert "run.sh mode 100644 -> 100755" in listing

    assert main(["rewind", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["turns"]
    assert [t["turn"] for t in listed] == [1, 2] and listed[1]["prompt"] == "edit things"
    files = {f["path"]: f for f in listed[1]["files"]}
    assert files["a.txt"]["change"] == "M" and (
        files["a.txt"]["added"],
        files["a.txt"]["deleted"],
    ) == (2, 2)
    assert files["gone.txt"]["change"] == "D" and files["new/dir/made.txt"]["change"] == "A"
    assert (files["run.sh"]["mode_before"], files["run.sh"]["mode_after"]) == ("100644", "100755")

    assert main(["rewind", "2", "--scope", "code", "--dry-run", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["dry_run"] and planned["code"]["changed"] == []
    assert {a["path"]: a["action"] for a in planned["code"]["actions"]} == {
        "a.txt": "restore", "gone.txt": "create", "new/dir/made.txt": "remove", "run.sh": "restore",
    }  # fmt: skip
    assert main(["rewind", "2", "--scope", "code", "--dry-run"]) == 0
    assert state(ws) == after_2
    assert main(["rewind", "2", "--scope", "code"]) == 0
    assert state(ws) == before_2
    assert not (ws / "new").exists()  # folders the turn made are gone too


def test_outside_change_stops_the_rewind_unless_forced(ws, configured, capsys):
    (ws / "a.txt").write_text("one\n")
    turn(configured, "change a", call("bash", command="echo two > a.txt"))
    (ws / "a.txt").write_text("edited by the user\n")
    capsys.readouterr()
    assert main(["rewind", "1", "--scope", "code"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("reasonix: error: changed outside Reasonix") and "a.txt" in err
    assert (ws / "a.txt").read_text() == "edited by the user\n"
    assert main(["rewind", "1", "--scope", "code", "--dry-run"]) == 0
    assert "! a.txt: changed outside Reasonix" in capsys.readouterr().out
    assert main(["rewind", "1", "--scope", "code", "--force"]) == 0
    assert (ws / "a.txt").read_text() == "one\n"


def test_a_rewind_can_be_rewound_and_leaves_untouched_files_alone(ws, configured):
    (ws / "a.txt").write_text("one\n")
    (ws / "mine.txt").write_text("user file\n")
    turn(configured, "t1", call("bash", command="echo two > a.txt"))
    turn(configured, "t2", call("bash", command="echo three > a.txt"))
    (ws / "mine.txt").write_text("user changed it\n")  # not something a turn touched
    assert main(["rewind", "1", "--scope", "code"]) == 0
    assert (ws / "a.txt").read_text() == "one\n"
    assert (ws / "mine.txt").read_text() == "user changed it\n"
    assert main(["rewind", "2", "--scope", "code"]) == 0
    assert (ws / "a.txt").read_text() == "two\n"


def test_hostile_workspace_content(ws, configured, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    os.symlink(outside, ws / "link")  # a symlink out of the workspace
    (ws / "--force").write_text("an option-like name\n")
    (ws / "-c").write_text("another\n")
    (ws / ".git").mkdir()  # the workspace's own repository
    (ws / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /tmp/pwned\n")
    (ws / ".gitattributes").write_text("* text eol=crlf filter=evil\n")
    (ws / "crlf.txt").write_bytes(b"a\r\nb\n")
    before = state(ws)
    turn(
        configured,
        "wreck it",
        call(
            "bash",
            command=(
                "rm link && ln -s /etc/hostname link && echo x > ./--force && rm ./-c "
                "&& printf 'z\\n' > crlf.txt"
            ),
        ),
    )
    (ws / ".git" / "junk").write_text("made by the user's git\n")
    wrecked = state(ws)
    assert wrecked["link"] == ("link", "/etc/hostname", 0) and "-c" not in wrecked
    assert main(["rewind", "1", "--scope", "code"]) == 0
    after = state(ws)
    assert after["link"] == ("link", str(outside), 0)
    assert outside.read_text() == "outside\n"  # never written through
    assert after["--force"] == before["--force"]
    assert after["-c"] == before["-c"]
    assert (ws / "crlf.txt").read_bytes() == b"a\r\nb\n"
    assert (ws / ".git" / "junk").exists()  # .git is not ours to rewind
    assert not Path("/tmp/pwned").exists()


def test_a_symlinked_folder_is_never_written_through(ws, configured, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (ws / "sub").mkdir()
    (ws / "sub" / "f.txt").write_text("inside\n")
    # The turn replaces the folder with a symlink to a folder outside.
    turn(configured, "swap", call("bash", command=f"rm -r sub && ln -s {target} sub"))
    assert main(["rewind", "1", "--scope", "code"]) == 0
    assert (ws / "sub").is_dir() and not (ws / "sub").is_symlink()
    assert (ws / "sub" / "f.txt").read_text() == "inside\n"
    assert list(target.iterdir()) == []


def test_gitignored_and_skipped_folders_are_not_rewound(ws, configured):
    (ws / ".gitignore").write_text("build/\n")
    turn(
        configured,
        "build",
        call(
            "bash",
            command="mkdir -p build node_modules/x && echo o > build/out && echo m > node_modules/x/i.js && echo s > src.txt",
        ),
    )
    assert main(["rewind", "1", "--scope", "code"]) == 0
    assert not (ws / "src.txt").exists()
    assert (ws / "build" / "out").exists() and (ws / "node_modules" / "x" / "i.js").exists()


def test_unknown_turn_is_a_usage_error(ws, configured, capsys):
    turn(configured, "only turn")
    assert main(["rewind", "5"]) == 2
    assert "no turn 5" in capsys.readouterr().err
    assert main(["rewind"]) == 2


def _messages(request) -> list:
    return json.loads(request.body)["messages"]


def _enc(messages: list) -> bytes:
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode()


def test_chat_rewind_then_continue_is_a_byte_exact_extension(ws, configured, capsys):
    (ws / "a.txt").write_text("one\n")
    turn(configured, "first", answer="first answer")
    turn(configured, "second", call("bash", command="echo two > a.txt"), answer="second answer")
    turn(configured, "third", answer="third answer")
    before_turn_2 = configured.requests[0]  # the last request sent before turn 2
    count = len(configured.requests)
    session = next((ws.parent / "reasonix-home" / "sessions").glob("*/*.jsonl"))
    lines_before = session.read_bytes()

    assert main(["rewind", "2", "--scope", "chat"]) == 0
    assert (ws / "a.txt").read_text() == "two\n"  # chat only: the code stays
    assert session.read_bytes().startswith(lines_before)  # appended, never rewritten
    capsys.readouterr()

    configured.enqueue(Reply(content="again answer"))
    assert main(["run", "-c", "--output-format", "stream-json", "again"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"type": "system", "subtype": "prefix_changed", "reason": "rewind"}.items() <= next(
        e for e in events if e.get("subtype") == "prefix_changed"
    ).items()
    after = _messages(configured.requests[count])
    old = _messages(before_turn_2)
    n = len(old)
    assert _enc(after[:n]) == _enc(old)  # byte for byte
    assert after[n]["role"] == "assistant" and after[n]["content"] == "first answer"
    assert after[n + 1]["content"].startswith("again")
    assert len(after) == n + 2
    assert b'"second"' not in _enc(after)
    # The raw request bytes too: the earlier request's messages array, minus its
    # closing bracket, opens the new one.
    head = before_turn_2.body[: before_turn_2.body.index(b'"messages":') + 11]
    assert configured.requests[count].body.startswith(head)
    old_array = _enc(old)[:-1]
    assert old_array in configured.requests[count].body

    # The cache ledger names the break: nothing unexplained.
    capsys.readouterr()
    assert main(["cache", "--check"]) == 0, capsys.readouterr()
    # And the listing now shows the conversation as it stands.
    capsys.readouterr()
    assert main(["rewind", "--list"]) == 0
    out = capsys.readouterr().out
    assert "turn 2" in out and "again" in out and "third" not in out


def test_both_scopes_and_the_next_turn_numbering(ws, configured):
    (ws / "a.txt").write_text("one\n")
    turn(configured, "first", call("bash", command="echo two > a.txt"))
    turn(configured, "second", call("bash", command="echo three > a.txt"))
    assert main(["rewind", "2"]) == 0  # both
    assert (ws / "a.txt").read_text() == "two\n"
    turn(configured, "second again", call("bash", command="echo four > a.txt"))
    assert main(["rewind", "2", "--scope", "code"]) == 0
    assert (ws / "a.txt").read_text() == "two\n"


def test_run_forks_from_a_turn(ws, configured, home, capsys):
    turn(configured, "first", answer="first answer")
    turn(configured, "second", answer="second answer")
    original = next(home.glob("sessions/*/*.jsonl"))
    original_bytes = original.read_bytes()
    count = len(configured.requests)
    configured.enqueue(Reply(content="forked answer"))
    assert main(["run", "-r", f"{original.stem}@2", "forked"]) == 0
    assert original.read_bytes() == original_bytes
    assert len(list(home.glob("sessions/*/*.jsonl"))) == 2
    after = _messages(configured.requests[count])
    old = _messages(configured.requests[0])
    assert _enc(after[: len(old)]) == _enc(old)
    assert after[len(old)]["content"] == "first answer"
    assert after[-1]["content"].startswith("forked")
    assert main(["run", "-r", f"{original.stem}@x", "forked"]) == 2
    assert main(["run", "-r", f"{original.stem}@9", "forked"]) == 2


def test_the_ledger_forgets_rewound_files(ws, configured, home):
    from datetime import UTC, datetime

    from reasonix_core.agent.session import open_session
    from reasonix_core.checkpoint.rewind import rewind
    from reasonix_core.tool.ledger import FS_NOT_OBSERVED, FileLedger

    (ws / "a.txt").write_text("one\n")
    (ws / "b.txt").write_text("untouched\n")
    turn(configured, "t1", call("bash", command="echo two > a.txt"))
    ledger = FileLedger()
    ledger.observe(ws / "a.txt")
    ledger.observe(ws / "b.txt")
    loaded = open_session(home / "sessions", ws, None)
    outcome = rewind(loaded.store, ws, 1, "code", lambda: datetime.now(UTC), ledger=ledger)
    assert outcome.changed == ("a.txt",)
    assert ledger.check(ws / "a.txt") == FS_NOT_OBSERVED  # must read again
    assert ledger.check(ws / "b.txt") is None


def test_without_git_file_tools_are_covered_and_bash_is_said_not_to_be(
    ws, configured, capsys, monkeypatch
):
    import reasonix_core.checkpoint.store as store_module

    monkeypatch.setattr(store_module, "host_git", lambda: None)
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("bravo\n")
    turn(
        configured,
        "edit",
        call("read_file", path="a.txt"),
        call("edit_file", path="a.txt", old_string="alpha", new_string="ALPHA"),
        call("write_file", path="new.txt", content="created\n"),
        call("bash", command="echo changed > b.txt"),
    )
    capsys.readouterr()
    assert main(["rewind", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "M a.txt" in listing and "A new.txt" in listing
    assert "bash are not covered" in listing
    assert not list(ws.parent.glob("reasonix-home/sessions/*/*.rewind/store.git"))
    assert main(["rewind", "1", "--scope", "code"]) == 0
    assert (ws / "a.txt").read_text() == "alpha\n"
    assert not (ws / "new.txt").exists()
    assert (ws / "b.txt").read_text() == "changed\n"  # bash: not covered, as it said
    # An outside change to a file a tool wrote still stops the next rewind.
    turn(configured, "again", call("write_file", path="new.txt", content="second\n"))
    (ws / "new.txt").write_text("user\n")
    assert main(["rewind", "2", "--scope", "code"]) == 1
    assert (ws / "new.txt").read_text() == "user\n"


def test_the_size_bound_names_what_was_not_kept(ws, configured, home, capsys):
    with (home / "config.toml").open("a") as fh:
        fh.write("\n[checkpoints]\nmax_store_mb = 1\n")
    (ws / "small.txt").write_text("s\n")
    turn(
        configured,
        "big",
        call("bash", command="head -c 2000000 /dev/zero > big.bin && echo t > small.txt"),
    )
    capsys.readouterr()
    assert main(["rewind", "--list"]) == 0
    assert "not kept: big.bin (over the checkpoint size bound)" in capsys.readouterr().out
    assert main(["rewind", "1", "--scope", "code"]) == 0
    out = capsys.readouterr().out
    assert "? big.bin: not kept by a checkpoint (over the checkpoint size bound); left as is" in out
    assert (ws / "small.txt").read_text() == "s\n"
    assert (ws / "big.bin").stat().st_size == 2_000_000  # not removed: never recorded


def test_a_turn_that_writes_nothing_walks_no_tree_but_is_listed(ws, configured, home, capsys):
    (ws / "a.txt").write_text("a\n")
    turn(configured, "just read", call("read_file", path="a.txt"), call("grep", pattern="a"))
    assert not list(home.glob("sessions/*/*.rewind"))  # no snapshot was taken
    capsys.readouterr()
    assert main(["rewind", "--list"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("turn 1  20") and line.endswith("just read")  # with its time
    assert main(["rewind", "1", "--scope", "code"]) == 0
    assert "code: nothing to rewind" in capsys.readouterr().out


def test_real_processes_with_git_variables_in_the_environment(workspace, configured):
    """`reasonix run` and `reasonix rewind` as child processes, with GIT_* variables
    that would point any careless git call at the user's own repository."""
    import subprocess

    from tests.conftest import reasonix

    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.txt").write_text("one\n")
    hostile = {
        "GIT_DIR": str(workspace / ".git"),
        "GIT_INDEX_FILE": str(workspace / ".git" / "index"),
        "GIT_WORK_TREE": "/",
        "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='touch /tmp/reasonix-pwned'",
    }
    configured.enqueue(Reply(tool_calls=[call("bash", command="echo two > a.txt")]))
    configured.enqueue(Reply(content="done"))
    proc = reasonix(workspace, "run", "--permission-mode", "yolo", "edit", env=hostile)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "a.txt").read_text() == "two\n"
    proc = reasonix(workspace, "rewind", "1", "--scope", "code", env=hostile)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "a.txt").read_text() == "one\n"
    assert not (workspace / ".git" / "index").exists()  # the user's index untouched
    assert not Path("/tmp/reasonix-pwned").exists()


def test_a_session_is_rewound_in_its_own_workspace(ws, configured, tmp_path, monkeypatch):
    (ws / "a.txt").write_text("one\n")
    turn(configured, "t1", call("bash", command="echo two > a.txt"))
    session_id = next(ws.parent.glob("reasonix-home/sessions/*/*.jsonl")).stem
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.txt").write_text("another project\n")
    monkeypatch.chdir(elsewhere)
    assert main(["rewind", "1", "--scope", "code", "-r", session_id]) == 0
    assert (ws / "a.txt").read_text() == "one\n"
    assert (elsewhere / "a.txt").read_text() == "another project\n"
