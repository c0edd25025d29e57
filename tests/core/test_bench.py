"""e2ebench end to end: real ``reasonix run`` subprocesses against the loopback fixture.

Cassettes are made the way a real one is: ``--record`` through the recording proxy,
here in front of a FixtureServer scripted as the model (so they are labelled
``scripted``); replays then serve them from the replay server.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from reasonix_core.bench.cassette import (
    NORMALISATIONS,
    RunPlaces,
    first_difference,
    load_cassette,
    normalise_body,
)
from reasonix_core.bench.runner import (
    Arm,
    BenchOptions,
    estimate_cost,
    load_trajectories,
    parse_arm,
    run_bench,
)
from reasonix_core.bench.summary import diff, render_summary, summarise
from reasonix_core.bench.task import load_task, load_tasks
from reasonix_core.bench.trajectory import read_stream, seed_fields
from reasonix_core.errors import BenchError
from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, Stall, ToolCallSpec
from tests.conftest import TEST_KEY, TEST_KEY_ENV, reasonix

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "e2e"

VERIFY_ANSWER = """\
import sys
from pathlib import Path

answer = Path(sys.argv[2]).read_text(encoding="utf-8")
sys.exit(0 if "{word}" in answer else 1)
"""


def make_task(
    corpus: Path,
    name: str,
    *,
    prompt: str,
    verify: str,
    category: str = "qa",
    files: dict[str, str] | None = None,
    extra: str = "",
) -> Path:
    folder = corpus / name
    (folder / "workdir").mkdir(parents=True)
    for rel, text in (files or {"README.md": "a sample\n"}).items():
        path = folder / "workdir" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "task.toml").write_text(
        f'prompt = "{prompt}"\ncategory = "{category}"\n{extra}', encoding="utf-8"
    )
    (folder / "verify.py").write_text(verify, encoding="utf-8")
    return folder


def first_user_text(request: RecordedRequest) -> str:
    messages = (request.json or {}).get("messages") or []
    return next(str(m.get("content")) for m in messages if m.get("role") == "user")


def tool_results(request: RecordedRequest) -> int:
    return sum(1 for m in (request.json or {}).get("messages") or [] if m.get("role") == "tool")


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch):
    """The scripted "model" the recording proxy relays to (with a key, as a real one)."""
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    with FixtureServer(ChatDialect("deepseek"), api_key=TEST_KEY) as server:
        yield server


def provider_for(server: FixtureServer) -> dict[str, Any]:
    return {
        "kind": "openai",
        "base_url": server.base_url,
        "models": ["deepseek-flash"],
        "api_key_env": TEST_KEY_ENV,
        "reasoning_protocol": "deepseek",
        "context_window": 131072,
    }


def record(corpus: Path, out: Path, server: FixtureServer, names: list[str], **kw: Any):
    return run_bench(
        BenchOptions(
            tasks=load_tasks(corpus, names),
            out=out,
            record=True,
            provider=provider_for(server),
            record_source="scripted",
            **kw,
        )
    )


def by_task(trajectories: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["task"]: t for t in trajectories}


# --------------------------------------------------------------------------- outcomes


def test_solved_unsolved_and_verify_crash(tmp_path, upstream):
    corpus = tmp_path / "tasks"
    make_task(corpus, "right", prompt="say forty-two", verify=VERIFY_ANSWER.format(word="42"))
    make_task(corpus, "wrong", prompt="say forty-one", verify=VERIFY_ANSWER.format(word="42"))
    make_task(corpus, "crashy", prompt="say nothing", verify="raise RuntimeError('verify bug')\n")
    answers = {"say forty-two": "42", "say forty-one": "41", "say nothing": "ok"}
    upstream.responder = lambda r: Reply(content=answers[first_user_text(r).split("\n")[0]])
    result = record(corpus, tmp_path / "out", upstream, [], jobs=2)
    runs = by_task(result.trajectories)
    assert runs["right"]["status"] == "solved" and runs["right"]["final_answer"] == "42"
    assert runs["wrong"]["status"] == "unsolved" and runs["wrong"]["solved"] is False
    crashy = runs["crashy"]
    assert crashy["status"] == "verify_error"
    assert crashy["verify"]["exit_code"] == 70 and "verify bug" in crashy["verify"]["stderr"]
    # The seed-003 fields come from the run's metrics, nothing invented.
    right = runs["right"]
    metrics = json.loads((tmp_path / "out/runs/right/default/1/metrics.json").read_text())
    for key in ("stream_retries", "empty_final_retries", "executor_requests", "wall_ms"):
        assert right[key] == metrics[key]
    assert right["executor_requests"] == 1 and len(right["ttft_ms"]) == 1
    assert result.summary["arms"]["default"]["statuses"] == {
        "solved": 1,
        "unsolved": 1,
        "verify_error": 1,
    }
    # The recording keeps the request bytes and the answers, never the key.
    cassette_file = tmp_path / "out/runs/right/default/1/cassette.json"
    assert TEST_KEY not in cassette_file.read_text()
    cassette = load_cassette(cassette_file)
    assert cassette.source == "scripted" and len(cassette.interactions) == 1
    assert "{WORKDIR}" in cassette.interactions[0].request.body


def test_the_verifier_runs_confined_like_the_agent(tmp_path, upstream):
    # The verifier imports what the agent wrote: it must not reach beyond the workspace.
    corpus = tmp_path / "tasks"
    escape = tmp_path / "escaped.txt"
    make_task(
        corpus,
        "t",
        prompt="anything",
        verify=(
            "import sys\nfrom pathlib import Path\n"
            "try:\n"
            f"    Path({str(escape)!r}).write_text('out')\n"
            "except OSError:\n"
            "    pass\n"
            "(Path(sys.argv[1]) / 'inside.txt').write_text('in')\n"
        ),
    )
    upstream.responder = lambda r: Reply(content="ok")
    run = record(corpus, tmp_path / "out", upstream, []).trajectories[0]
    assert run["status"] == "solved", run["verify"]
    assert not escape.exists()


def test_agent_crash_is_reported_not_verified_as_solved(tmp_path, upstream):
    corpus = tmp_path / "tasks"
    make_task(corpus, "right", prompt="say forty-two", verify="import sys\nsys.exit(0)\n")
    upstream.responder = lambda r: Reply(content="42")
    result = record(
        corpus, tmp_path / "out", upstream, [], arms=[Arm("broken", {"agent.retry_attempts": 0})]
    )
    run = result.trajectories[0]
    # A config the agent refuses: it exits 2 before any request, with no result line.
    assert run["status"] == "agent_error" and run["solved"] is False
    assert run["exit_code"] == 2 and "reasonix: error:" in run["stderr_tail"]
    assert run["metrics"] is None and run["executor_requests"] is None
    assert upstream.requests == []


def test_timeout_kills_the_run_and_keeps_a_trajectory(tmp_path, upstream):
    corpus = tmp_path / "tasks"
    make_task(
        corpus,
        "slow",
        prompt="hang",
        verify="import sys\nsys.exit(1)\n",
        extra="[limits]\ntimeout_seconds = 3\n",
    )
    upstream.enqueue(Stall(seconds=60))
    result = record(corpus, tmp_path / "out", upstream, [])
    run = result.trajectories[0]
    assert run["status"] == "timeout" and run["exit_code"] is None
    assert run["final_answer"] is None
    assert (tmp_path / "out/runs/slow/default/1/trajectory.json").is_file()


def test_max_cost_stops_starting_runs(tmp_path, upstream):
    corpus = tmp_path / "tasks"
    for name in ("a", "b", "c"):
        make_task(corpus, name, prompt=f"task {name}", verify="import sys\nsys.exit(0)\n")
    upstream.responder = lambda r: Reply(content="done")
    result = record(corpus, tmp_path / "out", upstream, [], max_cost=1e-9)
    statuses = [t["status"] for t in result.trajectories]
    # The first run spends more than the cap, so no further run starts.
    assert statuses == ["solved", "skipped", "skipped"]
    assert result.trajectories[0]["cost"] > 1e-9
    assert "--max-cost" in result.trajectories[1]["reason"]
    assert result.summary["arms"]["default"]["statuses"] == {"solved": 1, "skipped": 2}
    assert result.summary["arms"]["default"]["attempted"] == 1


def test_parallel_jobs_are_isolated(tmp_path, upstream):
    corpus = tmp_path / "tasks"
    check = """\
import sys
from pathlib import Path

ws = Path(sys.argv[1])
mine, other = "{mine}", "{other}"
ok = (ws / f"{{mine}}.txt").read_text() == mine and not (ws / f"{{other}}.txt").exists()
sys.exit(0 if ok else 1)
"""
    make_task(corpus, "write-a", prompt="write a.txt", verify=check.format(mine="a", other="b"))
    make_task(corpus, "write-b", prompt="write b.txt", verify=check.format(mine="b", other="a"))
    # Both runs must be in flight together to get past their first request.
    both = threading.Barrier(2, timeout=30)

    def model(request: RecordedRequest) -> Reply:
        name = first_user_text(request).split()[1]
        if tool_results(request) == 0:
            both.wait()
            content = name[0]
            args = json.dumps({"path": name, "content": content})
            return Reply(tool_calls=[ToolCallSpec("write_file", args)])
        return Reply(content=f"wrote {name}")

    upstream.responder = model
    result = record(corpus, tmp_path / "out", upstream, [], jobs=2)
    runs = by_task(result.trajectories)
    assert {t["status"] for t in runs.values()} == {"solved"}
    assert runs["write-a"]["tool_calls"][0]["name"] == "write_file"
    a = load_cassette(tmp_path / "out/runs/write-a/default/1/cassette.json")
    b = load_cassette(tmp_path / "out/runs/write-b/default/1/cassette.json")
    assert (
        "a.txt" in a.interactions[0].request.body and "b.txt" not in a.interactions[0].request.body
    )
    assert (
        "b.txt" in b.interactions[0].request.body and "a.txt" not in b.interactions[0].request.body
    )


# --------------------------------------------------------------------------- replay


def test_replay_serves_the_recording_and_names_the_first_differing_byte(tmp_path, upstream):
    corpus = tmp_path / "tasks"
    folder = make_task(
        corpus,
        "read",
        prompt="What does note.txt say?",
        verify=VERIFY_ANSWER.format(word="plums"),
        files={"note.txt": "plums\n"},
    )

    def model(request: RecordedRequest) -> Reply:
        if tool_results(request) == 0:
            return Reply(tool_calls=[ToolCallSpec("read_file", '{"path": "note.txt"}')])
        return Reply(content="It says plums.")

    upstream.responder = model
    recorded = record(corpus, tmp_path / "rec", upstream, [])
    assert recorded.trajectories[0]["status"] == "solved"
    upstream.responder = None  # the replay never reaches the model

    # A replay in other folders, on another day, sends the same normalised bytes.
    replayed = reasonix(
        tmp_path,
        "bench", "run", "read", "--tasks-dir", str(corpus), "--replay", str(tmp_path / "rec"),
        "--out", str(tmp_path / "rep"), "--json",
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr
    run = load_trajectories(tmp_path / "rep")[0]
    assert run["status"] == "solved" and run["replay"]["requests_served"] == 2
    assert run["replay"]["source"] == "scripted" and run["replay"]["mismatch"] is None
    assert upstream.requests and len(upstream.requests) == 2  # only the recording's

    # An edited prompt is caught at its first differing byte.
    (folder / "task.toml").write_text(
        'prompt = "What does note.txt hold?"\ncategory = "qa"\n', encoding="utf-8"
    )
    broken = reasonix(
        tmp_path,
        "bench", "run", "read", "--tasks-dir", str(corpus), "--replay", str(tmp_path / "rec"),
        "--out", str(tmp_path / "rep2"),
    )  # fmt: skip
    assert broken.returncode == 1
    run = load_trajectories(tmp_path / "rep2")[0]
    assert run["status"] == "replay_mismatch"
    body = load_cassette(tmp_path / "rec/runs/read/default/1/cassette.json").interactions[0]
    at = body.request.body.index("What does note.txt say?") + len("What does note.txt ")
    expected_byte = len(body.request.body[:at].encode("utf-8"))
    mismatch = run["replay"]["mismatch"]
    assert mismatch["request"] == 1 and mismatch["byte"] == expected_byte
    assert f"byte {expected_byte}" in mismatch["message"]
    assert "say?" in mismatch["expected"] and "hold?" in mismatch["got"]
    assert "replay mismatch" in broken.stdout
    assert (
        f"read/default/1: replay_mismatch: request 1 differs from the cassette at byte {expected_byte}"
        in broken.stdout
    )


def test_normalisation_rewrites_only_what_varies(tmp_path):
    ws, home = tmp_path / "run1" / "ws", tmp_path / "run1" / "home"
    places = RunPlaces(workdir=ws, home=home)
    context = (
        f"hi\\n\\n<workspace-context>\\nworkspace: {ws}\\nplatform: Linux 6.1\\ndate: 2026-12-01\\n"
    )
    body = json.dumps({"x": 0})[:-1] + f', "content": "{context}", "max_tokens":1234}}'
    out = normalise_body(body.encode(), places)
    assert str(tmp_path) not in out
    assert "workspace: {WORKDIR}" in out and "platform: {PLATFORM}" in out
    assert "date: {DATE}" in out and '"max_tokens":0' in out
    assert len(NORMALISATIONS) == 4
    assert first_difference("abc", "abc") is None
    assert first_difference("abc", "abd") == 2 and first_difference("ab", "abc") == 2
    assert first_difference("é", "è") == 1  # bytes, not characters


def test_hostile_cassettes_are_refused_with_their_path(tmp_path):
    bad = tmp_path / "cassette.json"
    bad.write_text('{"version": 1, "source": "invented", "interactions": []}')
    with pytest.raises(BenchError, match=r"cassette.json: source"):
        load_cassette(bad)
    bad.write_text(
        '{"version": 1, "source": "recorded", "interactions": ['
        '{"request": {"path": "/chat/completions", "shares": 99, "body": "", "ends": 0},'
        ' "response": {"status": 200, "body": ""}}]}'
    )
    with pytest.raises(BenchError, match="do not fit the previous request"):
        load_cassette(bad)
    bad.write_text(
        '{"version": 1, "source": "recorded", "interactions": ['
        '{"request": {"path": "/chat/completions", "body": ""},'
        ' "response": {"status": 200, "content_type": "text/plain\\r\\nX-Evil: 1", "body": ""}}]}'
    )
    with pytest.raises(BenchError, match="content_type"):
        load_cassette(bad)


# --------------------------------------------------------------------------- summary and report


def trajectory(task: str, arm: str, rep: int, **kw: Any) -> dict[str, Any]:
    solved = kw.pop("solved", True)
    metrics = {"usage_by_source": kw.pop("sources", {"executor": {"calls": 2}})}
    return {
        "task": task, "category": "qa", "arm": arm, "rep": rep,
        "status": "solved" if solved else "unsolved", "solved": solved,
        "metrics": metrics, "cache_hit_tokens": 0, "cache_miss_tokens": 0, "ttft_ms": [],
        "stream_retries": 0, "empty_final_retries": 0, "reasoning_replays": 0,
        "wall_ms": 100, "cost": 0.0, "currency": "USD", **kw,
    }  # fmt: skip


def test_summary_arithmetic():
    runs = [
        trajectory("t1", "base", 1, cost=0.01, cache_hit_tokens=900, cache_miss_tokens=100,
                   ttft_ms=[100, 300], wall_ms=1000, stream_retries=1),
        trajectory("t1", "base", 2, solved=False, cost=0.02, cache_hit_tokens=0,
                   cache_miss_tokens=1000, ttft_ms=[200], wall_ms=3000, empty_final_retries=2,
                   sources={"executor": {"calls": 3}, "compaction": {"calls": 1}}),
        trajectory("t2", "base", 1, cost=0.03, ttft_ms=[None, 400], wall_ms=2000),
        trajectory("t1", "fast", 1, cost=0.001),
    ]  # fmt: skip
    summary = summarise(runs)
    base = summary["arms"]["base"]
    assert base["runs"] == 3 and base["solved"] == 2
    assert base["solved_rate"] == pytest.approx(2 / 3)
    assert base["solved_then_broken"] == 1  # t1 solved by rep 1, not by rep 2
    assert base["cache_hit_ratio"] == pytest.approx(900 / 2000)
    assert base["median_ttft_ms"] == 250  # of 100, 300, 200, 400 (the null is not a value)
    assert base["stream_retries"] == 1 and base["empty_final_retries"] == 2
    assert base["cost"] == pytest.approx(0.06)
    assert base["cost_per_solved"] == pytest.approx(0.03)
    assert base["wall_ms"] == 6000 and base["median_wall_ms"] == 2000
    assert base["requests_per_turn"]["executor"] == pytest.approx(7 / 3)
    assert base["requests_per_turn"]["compaction"] == pytest.approx(1 / 3)
    assert summary["arms"]["fast"]["cost_per_solved"] == pytest.approx(0.001)
    assert summary["tasks"]["t1"]["arms"] == {
        "base": {"runs": 2, "solved": 1},
        "fast": {"runs": 1, "solved": 1},
    }
    text = render_summary(summary)
    assert "solved rate" in text and "66.7%" in text and "base" in text and "fast" in text
    # The diff of two bench runs, per task and arm.
    after = [trajectory("t1", "base", 1, solved=False, cost=0.05), trajectory("t2", "base", 1)]
    result = diff([r for r in runs if r["arm"] == "base"], after)
    assert result["by_arm"] is True
    assert result["rows"]["t1/base"]["solved_rate"] == {"before": 0.5, "after": 0.0, "delta": -0.5}
    assert result["rows"]["t1/base"]["cost"]["delta"] == pytest.approx(0.02)
    assert result["solved_then_broken"] == ["t1/base"]


def test_report_prints_one_run_and_diffs_two(tmp_path):
    for name, solved in (("before", True), ("after", False)):
        folder = tmp_path / name / "runs" / "t1" / "default" / "1"
        folder.mkdir(parents=True)
        (folder / "trajectory.json").write_text(
            json.dumps(trajectory("t1", "default", 1, solved=solved))
        )
    one = reasonix(tmp_path, "bench", "report", str(tmp_path / "before"))
    assert one.returncode == 0, one.stderr
    assert "solved rate" in one.stdout and "100.0%" in one.stdout
    two = reasonix(
        tmp_path, "bench", "report", str(tmp_path / "before"), str(tmp_path / "after"), "--json"
    )
    assert two.returncode == 0, two.stderr
    data = json.loads(two.stdout)
    assert data["diff"]["rows"]["t1/default"]["solved_rate"]["delta"] == -1.0
    assert data["diff"]["solved_then_broken"] == ["t1/default"]
    missing = reasonix(tmp_path, "bench", "report", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert missing.stderr.startswith("reasonix: error:") and "nowhere" in missing.stderr


# --------------------------------------------------------------------------- inputs


def test_task_files_are_validated_with_file_and_key(tmp_path):
    corpus = tmp_path / "tasks"
    folder = make_task(corpus, "t", prompt="p", verify="")
    (folder / "task.toml").write_text('prompt = "p"\ncategory = "chat"\n')
    with pytest.raises(BenchError, match=r"t/task.toml: category"):
        load_task(folder)
    (folder / "task.toml").write_text('prompt = "p"\ncategory = "qa"\n[limits]\ntimeout = 5\n')
    with pytest.raises(BenchError, match=r"task.toml: limits.timeout"):
        load_task(folder)
    (folder / "task.toml").write_text('prompt = "p"\ncategory = "qa"\nbase = "../../etc"\n')
    with pytest.raises(BenchError, match=r"task.toml: base"):
        load_task(folder)
    (folder / "task.toml").write_text('prompt = "p"\ncategory = "qa"\n[settings]\n"x.y" = 1\n')
    with pytest.raises(BenchError, match=r"settings: .*'x.y'"):
        load_task(folder)
    (folder / "task.toml").write_text('prompt = "p"\ncategory = "qa"\n')
    (folder / "verify.sh").write_text("exit 0\n")
    with pytest.raises(BenchError, match=r"exactly one of verify\.py or verify\.sh"):
        load_task(folder)
    proc = reasonix(tmp_path, "bench", "run", "t", "--tasks-dir", str(corpus))
    assert proc.returncode == 2 and proc.stderr.startswith("reasonix: error:")
    assert "verify.sh" in proc.stderr


def test_arms_parse_typed_values_and_refuse_unknown_keys():
    arm = parse_arm(
        "small=agent.compact_ratio=0.5,provider.context_window=9000,model=deepseek-flash"
    )
    assert arm == Arm(
        "small",
        {"agent.compact_ratio": 0.5, "provider.context_window": 9000, "model": "deepseek-flash"},
    )
    assert parse_arm("plain") == Arm("plain", {})
    with pytest.raises(BenchError, match="permissions"):
        parse_arm("loose=permissions.allow=x")
    with pytest.raises(BenchError, match="not key=value"):
        parse_arm("a=model")
    for name in ("..", ".hidden", "a/b", ""):
        with pytest.raises(BenchError, match="the arm needs a name"):
            parse_arm(f"{name}=model=x")


def test_stream_parsing_is_tolerant_of_both_shapes():
    engine = "\n".join(
        json.dumps(x)
        for x in (
            {"type": "tool_call_started", "call_id": "c1", "name": "ls", "arguments": "{}"},
            {"type": "tool_call_finished", "call_id": "c1", "name": "ls", "is_error": True},
            {"type": "result", "is_error": False, "result": "done", "metrics": {"steps": 2}},
        )
    )
    parsed = read_stream("garbage line\n" + engine + "\n{not json")
    assert parsed["tool_calls"] == [{"id": "c1", "name": "ls", "arguments": "{}", "is_error": True}]
    assert parsed["final_answer"] == "done"
    claude = "\n".join(
        json.dumps(x)
        for x in (
            {"type": "system", "subtype": "init"},
            {"type": "assistant", "message": {"content": [
                {"type": "text", "text": "let me look"},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
            ]}},
            {"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "is_error": False},
            ]}},
            {"type": "result", "is_error": True, "result": "boom"},
        )
    )  # fmt: skip
    parsed = read_stream(claude)
    assert parsed["tool_calls"] == [
        {"id": "t1", "name": "read_file", "arguments": '{"path": "a"}', "is_error": False}
    ]
    assert parsed["final_answer"] is None  # a failed run has no answer
    fields = seed_fields({"stream_retries": 1, "cache_hit_tokens": 3, "cache_miss_tokens": 1})
    assert fields["stream_retries"] == 1 and fields["cache_hit_ratio"] == 0.75
    assert fields["ttft_ms"] is None and fields["planner_requests"] is None


def test_cost_estimate_is_an_upper_bound_per_run():
    tasks = load_tasks(CORPUS / "tasks", ["qa-max-items"])
    one, currency = estimate_cost(tasks, [Arm("a")], 1, "deepseek-flash", {})
    two, _ = estimate_cost(tasks, [Arm("a"), Arm("b")], 2, "deepseek-flash", {})
    assert currency == "USD" and one > 0 and two == pytest.approx(4 * one)
    assert estimate_cost(tasks, [Arm("a")], 1, "unknown-model", {}) == (0.0, "USD")


def test_run_and_version_never_import_the_bench(workspace):
    code = (
        "import sys\nfrom reasonix_tui.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "main(['run', 'hi'])\n"
        "assert 'reasonix_core.bench' not in sys.modules\n"
    )
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- the corpus


def test_the_corpus_has_five_tasks_per_category():
    tasks = load_tasks(CORPUS / "tasks", [])
    by_category: dict[str, int] = {}
    for task in tasks:
        by_category[task.spec.category] = by_category.get(task.spec.category, 0) + 1
        assert not (task.workdir / task.verifier.name).exists()  # outside the workspace
        cassette = load_cassette(CORPUS / "cassettes" / task.name / "cassette.json")
        assert cassette.source == "scripted" and "not a real model" in cassette.note
    assert by_category == {"qa": 5, "edit": 5, "context": 5}


def test_corpus_cassettes_replay_and_solve(tmp_path):
    # Fails when a change alters the request bytes (prompt, tool schemas, context):
    # if the change is meant, regenerate with `python bench/e2e/scripted.py`.
    proc = reasonix(
        ROOT,
        "bench", "run", "qa-max-items", "edit-fix-discount", "context-compaction-logs",
        "--replay", str(CORPUS / "cassettes"), "--out", str(tmp_path / "out"),
        "--jobs", "2", "--json",
    )  # fmt: skip
    runs = by_task(load_trajectories(tmp_path / "out"))
    mismatches = {k: (t.get("replay") or {}).get("mismatch") for k, t in runs.items()}
    assert proc.returncode == 0, (
        "the corpus replay failed; if the request bytes changed on purpose (prompt, tool "
        "schemas, workspace context), regenerate: python bench/e2e/scripted.py",
        proc.stderr,
        mismatches,
    )
    summary = json.loads(proc.stdout)
    assert summary["arms"]["default"]["solved"] == 3
    compaction = runs["context-compaction-logs"]
    assert compaction["compaction_requests"] >= 1 and compaction["metrics"]["compactions"] >= 1
    assert runs["edit-fix-discount"]["tool_calls"][-1]["name"] == "edit_file"


def test_interrupt_kills_the_runs_in_flight(tmp_path, home, monkeypatch):
    import os
    import signal
    import subprocess
    import time

    from tests.conftest import write_config

    corpus = tmp_path / "tasks"
    make_task(corpus, "slow", prompt="hang", verify="import sys\nsys.exit(1)\n")
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    with FixtureServer(ChatDialect("deepseek"), api_key=TEST_KEY) as server:
        server.enqueue(Stall(seconds=120))
        write_config(home, server.base_url)
        bench = subprocess.Popen(
            [sys.executable, "-m", "reasonix_tui.cli", "bench", "run", "--tasks-dir", str(corpus),
             "--out", str(tmp_path / "out")],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.requests, "the run never reached the model"
        # The live run found the key in the configuration's variable and was priced first.
        workspace = first_user_text(server.requests[0]).split("workspace: ")[1].split("\n")[0]
        bench.send_signal(signal.SIGINT)
        _, err = bench.communicate(timeout=60)
    assert bench.returncode == 130 and "estimated cost" in err
    # No process of the run is left working in its folder.
    left = []
    for proc in Path("/proc").iterdir():
        try:
            if os.readlink(proc / "cwd").startswith(workspace):
                left.append(proc.name)
        except OSError:
            continue
    assert left == []


def test_no_corpus_task_is_solved_by_doing_nothing(tmp_path):
    import subprocess

    for task in load_tasks(CORPUS / "tasks", []):
        ws = tmp_path / task.name
        task.materialise(ws)
        answer = tmp_path / f"{task.name}.answer"
        answer.write_text("", encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, str(task.verifier), str(ws), str(answer)],
            cwd=ws, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 1, (task.name, proc.stdout, proc.stderr)


@pytest.mark.parametrize("kind", ["anthropic", "responses"])
def test_record_and_replay_speak_every_wire_format(tmp_path, monkeypatch, kind):
    from reasonix_testkit import AnthropicDialect, ResponsesDialect

    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    corpus = tmp_path / "tasks"
    make_task(corpus, "read", prompt="What does note.txt say?",
              verify=VERIFY_ANSWER.format(word="plums"), files={"note.txt": "plums\n"})  # fmt: skip
    dialect = AnthropicDialect("anthropic") if kind == "anthropic" else ResponsesDialect("openai")
    with FixtureServer(dialect, api_key=TEST_KEY) as server:
        server.models = None
        server.enqueue(
            Reply(tool_calls=[ToolCallSpec("read_file", '{"path": "note.txt"}')]),
            Reply(content="It says plums."),
        )
        provider = {
            "kind": kind, "base_url": server.base_url + "/v1", "models": ["some-model"],
            "api_key_env": TEST_KEY_ENV, "reasoning_protocol": "openai",
        }  # fmt: skip
        options = BenchOptions(
            tasks=load_tasks(corpus, []), out=tmp_path / "rec", record=True, provider=provider
        )
        assert run_bench(options).trajectories[0]["status"] == "solved"
        paths = {r.path for r in server.requests}
    assert paths == {"/v1/messages" if kind == "anthropic" else "/v1/responses"}
    cassette = load_cassette(tmp_path / "rec/runs/read/default/1/cassette.json")
    assert cassette.kind == kind and len(cassette.interactions) == 2
    replay = run_bench(
        BenchOptions(tasks=load_tasks(corpus, []), out=tmp_path / "rep", replay=tmp_path / "rec")
    )
    run = replay.trajectories[0]
    assert run["status"] == "solved", run["replay"]
    assert run["replay"]["requests_served"] == 2


def test_a_recorded_provider_keeps_its_reasoning_protocol_behind_the_proxy(
    tmp_path, home, monkeypatch
):
    from reasonix_core.bench.runner import configured_provider, provider_request_url

    (home / "config.toml").write_text(
        '[[providers]]\nname = "ds"\nkind = "openai"\nbase_url = "https://api.deepseek.com"\n'
        'models = ["deepseek-flash"]\napi_key_env = "BENCH_TEST_DS_KEY"\n'
    )
    (home / ".env").write_text("BENCH_TEST_DS_KEY=sk-from-dotenv\n")
    entry, model, key_env = configured_provider(tmp_path, None)
    # Guessed from the host when unset: a proxy on 127.0.0.1 would have changed it.
    assert entry["reasoning_protocol"] == "deepseek" and model == "deepseek-flash"
    # The runs' homes have no .env: the key travels in the agent's environment.
    assert key_env == {"BENCH_TEST_DS_KEY": "sk-from-dotenv"}
    assert provider_request_url(entry) == "https://api.deepseek.com/chat/completions"


def test_arms_run_side_by_side_and_a_task_limits_what_they_vary(tmp_path, upstream):
    corpus = tmp_path / "tasks"
    make_task(corpus, "t", prompt="say ok", verify="import sys\nsys.exit(0)\n",
              extra='vary = ["agent.compact_ratio"]\n')  # fmt: skip
    upstream.responder = lambda r: Reply(content="ok")
    arms = [Arm("base"), parse_arm("tight=agent.compact_ratio=0.5,effort=high")]
    result = record(corpus, tmp_path / "out", upstream, [], arms=arms, repeat=2, jobs=2)
    runs = {(t["arm"], t["rep"]): t for t in result.trajectories}
    assert set(runs) == {("base", 1), ("base", 2), ("tight", 1), ("tight", 2)}
    tight = runs[("tight", 1)]
    assert tight["settings"] == {"agent.compact_ratio": 0.5}
    assert tight["ignored_arm_settings"] == ["effort"]
    assert set(result.summary["arms"]) == {"base", "tight"}
    assert result.summary["tasks"]["t"]["arms"]["tight"] == {"runs": 2, "solved": 2}
    header = render_summary(result.summary).splitlines()[0].split()
    assert header == ["base", "tight"]


def test_the_product_never_imports_the_test_kit():
    # The kit is not in the wheel: record and replay stand on the product's own
    # loopback server (bench/loopback_http.py), which the kit imports instead.
    import ast

    import reasonix_core
    import reasonix_tui

    offenders = []
    for package in (reasonix_core, reasonix_tui):
        root = Path(package.__file__).parent
        for path in root.rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                if any(n.split(".")[0] == "reasonix_testkit" for n in names):
                    offenders.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert offenders == []


def test_a_folder_of_task_folders_named_on_the_command_line_is_a_corpus(tmp_path, configured):
    # `reasonix bench run bench/e2e/tasks` took the corpus for one task and exited 2.
    corpus = tmp_path / "suite" / "tasks"
    for name in ("alpha", "beta"):
        make_task(corpus, name, prompt=f"task {name}", verify="import sys\nsys.exit(0)\n")
    configured.responder = lambda r: Reply(content="done")
    proc = reasonix(
        tmp_path, "bench", "run", "suite/tasks", "--out", str(tmp_path / "out"), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    runs = by_task(load_trajectories(tmp_path / "out"))
    assert sorted(runs) == ["alpha", "beta"] and all(t["solved"] for t in runs.values())
    # The corpus and one of its own tasks together name that task twice.
    proc = reasonix(
        tmp_path, "bench", "run", "suite/tasks", "suite/tasks/alpha", "--out", str(tmp_path / "o2")
    )
    assert proc.returncode == 2 and "named twice" in proc.stderr
    # A folder that is neither a task nor a corpus says what it looked for.
    (tmp_path / "empty").mkdir()
    proc = reasonix(tmp_path, "bench", "run", "./empty", "--out", str(tmp_path / "o3"))
    assert proc.returncode == 2
    assert "neither a task" in proc.stderr and "task.toml" in proc.stderr
