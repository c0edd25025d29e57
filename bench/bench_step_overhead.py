"""Harness overhead per step with an instant provider and instant tools.

Drives the real ``Agent`` (built by ``reasonix_core.session.build.build_session``
from a temporary ``REASONIX_HOME`` and workspace, exactly as ``reasonix run``
builds it) through one turn of N steps against the loopback fixture server.
The scripted "model" answers at once: a ``read_file`` of a one-line file or an
``ls`` of a one-file folder on every step but the last, a short final answer
on the last. Every event goes through a ``MetricsSink`` writing a metrics file,
as in ``reasonix run --metrics``.

Baseline: the very request bodies the Agent sent (captured from the provider),
replayed in order with bare ``httpx`` to a fresh server with the same script,
reading each streamed response to the end without parsing it. That is the time
spent in the server, on loopback and in httpx's transport.

    harness overhead per step = (agent turn wall - sum of baseline walls) / N

What the overhead therefore includes: building and JSON-encoding each request
(the whole growing transcript, every step), SSE line splitting and JSON
decoding of every chunk, tool-call accumulation, event objects, the permission
gate, argument validation, running the tool (a real file read / directory
listing, in a worker thread), result bounding, the session JSONL append and
flush per message, and the metrics sink. What it excludes: process start-up,
config loading and ``build_session`` (see bench_startup.py).

The server runs in its own process by default (``--server process``: the
harness does not share a GIL with it, as with a real remote API); ``--server
thread`` runs it in a thread of this process, where the harness and the server
take turns on the GIL, a stricter (pessimistic) setting. By default both are
measured; the summary line reports the process figure.

Run: ``.venv/bin/python bench/bench_step_overhead.py [--steps 50] [--reps 5]
[--server both|process|thread] [--profile]``

Per bash step (``--bash``): the scripted model runs ``bash true`` on every step
but the last, once with ``[sandbox] bash = "off"`` and once with ``"enforce"``
(bubblewrap, seccomp, the git guard), the two turns back to back in every
repetition, against the server in its own process. The **floor** is measured in
the same repetition: one streamed loopback request (the bare httpx replay of the
unsandboxed turn's requests) plus one ``sh -c true`` spawned with
``subprocess.run``. A step is the interval from one ``StepStarted`` to the next
(request i on the wire, its bash call, building request i+1); the figures are
medians over steps 2..N-1 (step 1 creates the httpx client, step N has no tool
call), then the median repetition. Targets (issue 24): unsandboxed <= 3x the
floor, sandboxed <= 1.3x unsandboxed. ``--checkpoints off`` adds ``[checkpoints]
enabled = false`` (``both``: measure each, to split out the checkpoint's share).

    .venv/bin/python bench/bench_step_overhead.py --bash [--steps 30] [--reps 5]
        [--checkpoints on|off|both] [--git] [--fresh] [--profile]

The sandboxed turn runs in the session's kept sandbox (``[sandbox] keep``, the default;
docs/SECURITY.md). ``--fresh`` adds a third turn to every repetition with a fresh
bubblewrap per command (``keep = false``), what every sandboxed command cost before.
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import io
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
from _common import tool_loop_server, use_env, verdict, write_config

from reasonix_core import events as ev
from reasonix_core.metrics import MetricsSink
from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.provider.base import PreparedRequest
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings

TARGET_MS = 5.0
BASH_FLOOR_RATIO = 3.0  # unsandboxed bash step / (loopback request + sh -c true)
SANDBOX_RATIO = 1.3  # sandboxed bash step / unsandboxed bash step
PROMPT = "Look at tiny.txt and the folder listing a few times, then tell me what the file says."


@dataclass
class Turn:
    wall: float
    marks: list[float]  # perf_counter at each StepStarted, then at the end of the turn
    sent: list[PreparedRequest]
    parts: dict[str, float]  # seconds spent in instrumented parts of the harness
    cpu: float = 0.0  # CPU seconds of this process and the processes it reaped meanwhile


def cpu_now() -> float:
    """CPU seconds used so far by this process (all threads) and its reaped children
    (a sandboxed command's processes are reaped by bubblewrap, and counted with it)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def kept_cpu(keeper: Any) -> float:
    """CPU seconds of a session's kept sandboxes so far (docs/SECURITY.md, "A sandbox
    kept per session"): each zygote, the commands it reaped, and its bubblewrap.
    They are not this process's children until the session closes, so ``cpu_now``
    does not see them. Clock ticks (10 ms on most kernels): coarse per process,
    summed over a whole turn."""
    if keeper is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for kept in keeper.sandboxes:
        for pid in (kept.zygote_pid, kept.bwrap.pid):
            try:
                fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            # utime, stime, cutime, cstime: fields 14-17 of stat(5), 12-15 after the name
            total += sum(int(f) for f in fields[11:15])
    return total / tick


def _timed(parts: dict[str, float], key: str, fn: Any) -> Any:
    """Wrap a sync or async callable so its wall time adds up in ``parts[key]``."""
    if inspect.iscoroutinefunction(fn):

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                parts[key] += time.perf_counter() - started

        return timed_async

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            parts[key] += time.perf_counter() - started

    return timed


async def agent_turn(
    home: Path, workspace: Path, base_url: str, steps: int, extra: str = "", bash: str = "off"
) -> Turn:
    write_config(home, base_url, extra, bash)
    settings = RunSettings(workspace=workspace, home=home)
    async with build_session(settings, approver=FailClosedApprover()) as rt:
        agent = rt.agent
        provider = agent.provider
        sent: list[PreparedRequest] = []
        original = provider.stream

        def capture(prepared: PreparedRequest):  # type: ignore[no-untyped-def]
            sent.append(prepared)
            return original(prepared)

        provider.stream = capture  # type: ignore[method-assign]
        # Instrument the parts of a step that are easy to isolate (public seams only).
        parts = dict.fromkeys(("prepare", "gate", "tool", "session"), 0.0)
        provider.prepare = _timed(parts, "prepare", provider.prepare)  # type: ignore[method-assign]
        agent.tools.call = _timed(parts, "tool", agent.tools.call)  # type: ignore[method-assign]
        agent.session.append = _timed(parts, "session", agent.session.append)  # type: ignore[method-assign]
        if agent.gate is not None:
            agent.gate.authorize = _timed(parts, "gate", agent.gate.authorize)
        sink = MetricsSink(home / "metrics.json")
        marks: list[float] = []
        finished: ev.TurnFinished | None = None
        cpu = cpu_now()
        started = time.perf_counter()
        async with aclosing(agent.run(PROMPT)) as events:
            async for event in events:
                sink.record(event)
                if isinstance(event, ev.StepStarted):
                    marks.append(time.perf_counter())
                elif isinstance(event, ev.TurnFinished):
                    finished = event
                elif isinstance(event, ev.TurnFailed):
                    raise SystemExit(f"the turn failed: {event.error}")
                elif isinstance(event, ev.ToolCallFinished) and event.is_error:
                    raise SystemExit(f"{event.name} failed: {event.result}")
        wall = time.perf_counter() - started
        # The session's kept sandbox started with its first command: all its CPU is this turn's.
        cpu = cpu_now() - cpu + kept_cpu(agent.tool_context.env.kept_sandboxes)
        marks.append(started + wall)
        sink.finish("success")
    if finished is None or finished.steps != steps or len(sent) != steps:
        raise SystemExit(f"expected {steps} steps, got {finished and finished.steps} / {len(sent)}")
    return Turn(wall=wall, marks=marks, sent=sent, parts=parts, cpu=cpu)


async def replay(base_url: str, sent: list[PreparedRequest]) -> list[float]:
    """Bare httpx: POST each recorded body, read the stream to the end, nothing else."""
    url = base_url + "/chat/completions"
    walls: list[float] = []
    async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
        for prepared in sent:
            started = time.perf_counter()
            async with client.stream(
                "POST", url, content=prepared.body, headers=list(prepared.headers)
            ) as response:
                async for _ in response.aiter_bytes():
                    pass
            walls.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise SystemExit(f"baseline request answered {response.status_code}")
    return walls


def measure(mode: str, steps: int, reps: int, root: Path) -> dict[str, float]:
    home, workspace = root / f"home-{mode}", root / f"ws-{mode}"
    workspace.mkdir()
    (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
    use_env(home)
    turns: list[dict[str, float]] = []
    for rep in range(reps + 1):  # the first repetition warms up and is not counted
        with tool_loop_server(mode, steps) as url:
            turn = anyio.run(agent_turn, home, workspace, url, steps)
        with tool_loop_server(mode, steps) as url:
            base = anyio.run(replay, url, turn.sent)
        if rep == 0:
            continue
        # Step i runs from its StepStarted to the next one: request i on the
        # wire, its tool call, and building request i+1.
        intervals = [b - a for a, b in zip(turn.marks, turn.marks[1:], strict=False)]
        over = [i - b for i, b in zip(intervals, base, strict=True)]
        row = {
            "agent": turn.wall / steps,
            "base": sum(base) / steps,
            "over": (turn.wall - sum(base)) / steps,
            "first": over[0],
            "steady": statistics.median(over[1:]),
            "early": statistics.median(over[1:11]),
            "late": statistics.median(over[-10:]),
        }
        row.update({k: v / steps for k, v in turn.parts.items()})
        turns.append({k: v * 1000 for k, v in row.items()})
    turns.sort(key=lambda r: r["over"])
    out = turns[(len(turns) - 1) // 2]  # the median turn (by overhead): its figures add up
    spread = f"{turns[0]['over']:.2f} .. {turns[-1]['over']:.2f}"
    known = out["prepare"] + out["gate"] + out["tool"] + out["session"]
    print(f"== server in a {mode}: {reps} turns of {steps} steps; the median turn by overhead")
    print(f"  agent wall per step (turn wall / {steps})   {out['agent']:6.2f} ms")
    print(f"  bare httpx baseline per step           {out['base']:6.2f} ms")
    print(
        f"  harness overhead per step (all in)     {out['over']:6.2f} ms   (all turns: {spread} ms)"
    )
    print(f"    build + encode the request            {out['prepare']:6.2f} ms")
    print(f"    permission gate                       {out['gate']:6.2f} ms")
    print(f"    tool execution (worker thread)        {out['tool']:6.2f} ms")
    print(f"    session JSONL appends                 {out['session']:6.2f} ms")
    print(
        f"    the rest                              {out['over'] - known:6.2f} ms   (SSE and JSON "
        "parsing, events, metrics sink, scheduling, httpx beyond the bare read)"
    )
    print(
        f"  step 1 alone                           {out['first']:6.2f} ms   "
        "(the provider's first request creates its httpx client and TLS context)"
    )
    print(f"  typical step (median of steps 2..{steps})    {out['steady']:6.2f} ms")
    print(
        f"  median at steps 2-11: {out['early']:.2f} ms, at steps {steps - 9}-{steps}: "
        f"{out['late']:.2f} ms   (request body {len(turn.sent[0].body)} -> "
        f"{len(turn.sent[-1].body)} bytes)"
    )
    return out


def profile(steps: int, root: Path) -> None:
    home, workspace = root / "home-prof", root / "ws-prof"
    workspace.mkdir()
    (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
    use_env(home)
    with tool_loop_server("process", steps) as url:
        anyio.run(agent_turn, home, workspace, url, steps)  # warm-up
    with tool_loop_server("process", steps) as url:
        prof = cProfile.Profile()
        prof.enable()
        anyio.run(agent_turn, home, workspace, url, steps)
        prof.disable()
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("tottime").print_stats(20)
    print("\n== cProfile of one turn (includes build_session), top 20 by own time")
    print(text.getvalue())


# --------------------------------------------------------------------------- bash steps


def sh_true(n: int) -> tuple[list[float], float]:
    """Walls of ``sh -c true`` spawned with ``subprocess.run`` (the floor's process),
    and the CPU seconds of one (spawning included)."""
    walls = []
    cpu = cpu_now()
    for _ in range(n):
        started = time.perf_counter()
        subprocess.run(["sh", "-c", "true"], check=True)
        walls.append(time.perf_counter() - started)
    return walls, (cpu_now() - cpu) / n


def bare_spawns(workspace: Path, temp: Path, n: int) -> tuple[float, float, float]:
    """Median walls of the very argv ``bash true`` spawns, without the harness:
    unsandboxed (``/bin/bash -c true``), under a fresh bubblewrap (the argv
    ``prepare_command`` builds for this workspace, seccomp descriptor included), and
    through a kept sandbox (``SandboxKeeper.lease`` with its checks, the command sent
    to the zygote, its output read, the sweep; built once before timing). The
    differences are what each sandbox itself adds to a step, whatever the harness."""
    from reasonix_core.tool.sandbox import SandboxPolicy
    from reasonix_core.tool.shell_sandbox import prepare_command

    policy = SandboxPolicy(workspace=workspace, temp_dir=temp, bash="enforce")
    plain: list[float] = []
    boxed: list[float] = []
    for _ in range(n):
        for walls, sandboxed in ((plain, False), (boxed, True)):
            prepared = prepare_command(policy, "true") if sandboxed else None
            argv = prepared.argv if prepared else ["/bin/bash", "-c", "true"]
            fds = prepared.pass_fds if prepared else ()
            started = time.perf_counter()
            subprocess.run(argv, pass_fds=fds, stdin=subprocess.DEVNULL, check=True)
            walls.append(time.perf_counter() - started)
            if prepared:
                prepared.close()
    kept = anyio.run(kept_spawns, policy, n)
    return statistics.median(plain), statistics.median(boxed), statistics.median(kept)


async def kept_spawns(policy: Any, n: int) -> list[float]:
    """Walls of ``bash true`` through a kept sandbox, as the bash tool runs it."""
    from reasonix_core.tool.builtin.bash import collect
    from reasonix_core.tool.sandbox_keeper import SandboxKeeper
    from reasonix_core.tool.shell_sandbox import sanitized_env, shell_argv

    keeper = SandboxKeeper()
    env = sanitized_env()
    walls: list[float] = []
    try:
        for i in range(n + 1):
            started = time.perf_counter()
            lease = keeper.lease(policy)
            if lease is None:
                raise SystemExit(f"no kept sandbox: {keeper.disabled}")
            await lease.start(shell_argv("true"), env=env, cwd=policy.workspace)
            run = await collect(lease, time_limit=30)
            if run.exit_code != 0 or lease.failure:
                raise SystemExit(f"the kept sandbox failed: {lease.failure or run.output}")
            if i:  # the first call builds it
                walls.append(time.perf_counter() - started)
    finally:
        await keeper.aclose()
    return walls


def _git_init(workspace: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b", "HOME": str(workspace.parent)}  # fmt: skip
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "init"]):
        subprocess.run(argv, cwd=workspace, env=env, check=True, capture_output=True)


def bash_turn(
    home: Path, workspace: Path, steps: int, sandbox: str, checkpoints: bool, keep: bool = True
) -> tuple[Turn, list[float]]:
    """One agent turn of ``bash true`` steps; returns it and its step intervals.
    ``keep=False``: ``[sandbox] keep = false``, a fresh bubblewrap per command."""
    # -y/--auto: bash runs without asking (the gate still parses and judges it).
    extra = ("" if keep else "keep = false\n") + '\n[permissions]\npreset = "auto"\n'
    if not checkpoints:
        extra += "\n[checkpoints]\nenabled = false\n"
    with tool_loop_server("process", steps, tool="bash") as url:
        turn = anyio.run(agent_turn, home, workspace, url, steps, extra, sandbox)
    intervals = [b - a for a, b in zip(turn.marks, turn.marks[1:], strict=False)]
    return turn, intervals


def measure_bash(
    steps: int, reps: int, root: Path, checkpoints: bool, git: bool, fresh: bool = False
) -> dict:
    """``fresh``: a third turn in every repetition, sandboxed with a fresh bubblewrap per
    command (``[sandbox] keep = false``: what every sandboxed command cost before)."""
    tag = "cp" if checkpoints else "nocp"
    modes = ("off", "enforce", "fresh") if fresh else ("off", "enforce")
    homes = {s: root / f"home-bash-{s}-{tag}" for s in modes}
    spaces = {s: root / f"ws-bash-{s}-{tag}" for s in modes}
    for workspace in spaces.values():
        workspace.mkdir()
        (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
        if git:
            _git_init(workspace)
    rows = []
    for rep in range(reps + 1):  # the first repetition warms up and is not counted
        row: dict[str, float] = {}
        sent: list[PreparedRequest] = []
        for sandbox in modes:
            use_env(homes[sandbox])
            turn, intervals = bash_turn(
                homes[sandbox],
                spaces[sandbox],
                steps,
                "off" if sandbox == "off" else "enforce",
                checkpoints,
                keep=sandbox != "fresh",
            )
            row[sandbox] = statistics.median(intervals[1:-1])
            row[f"{sandbox}-wall"] = turn.wall / steps
            row[f"{sandbox}-tool"] = turn.parts["tool"] / (steps - 1)
            row[f"{sandbox}-gate"] = turn.parts["gate"] / (steps - 1)
            row[f"{sandbox}-session"] = turn.parts["session"] / steps
            row[f"{sandbox}-prepare"] = turn.parts["prepare"] / steps
            if sandbox == "off":
                sent = turn.sent
            row[f"{sandbox}-cpu"] = turn.cpu / steps
        with tool_loop_server("process", steps, tool="bash") as url:
            cpu = cpu_now()
            base = anyio.run(replay, url, sent)
            request_cpu = (cpu_now() - cpu) / steps
        row["request"] = statistics.median(base[1:-1])
        sh_walls, sh_cpu = sh_true(max(steps // 2, 10))
        row["sh"] = statistics.median(sh_walls)
        row["floor"] = row["request"] + row["sh"]
        row["floor-cpu"] = request_cpu + sh_cpu
        temp = root / f"tmp-{tag}"
        temp.mkdir(exist_ok=True)
        row["bare-bash"], row["bare-bwrap"], row["bare-kept"] = bare_spawns(
            spaces["enforce"], temp, 10
        )
        if rep:
            rows.append({k: v * 1000 for k, v in row.items()})
    for row in rows:
        row["ratio-floor"] = row["off"] / row["floor"]
        row["ratio-sandbox"] = row["enforce"] / row["off"]
        # The best a fresh bubblewrap per command allows: the unsandboxed step plus
        # what bubblewrap adds to a bare spawn, nothing else.
        row["bwrap-extra"] = row["bare-bwrap"] - row["bare-bash"]
        row["ratio-bwrap"] = (row["off"] + row["bwrap-extra"]) / row["off"]
        # The same for the kept sandbox the sandboxed turn now runs its commands in.
        row["kept-extra"] = row["bare-kept"] - row["bare-bash"]
        row["ratio-kept"] = (row["off"] + row["kept-extra"]) / row["off"]
        row["harness-extra"] = row["enforce"] - row["off"] - row["kept-extra"]
        row["cpu-floor"] = row["off-cpu"] / row["floor-cpu"]
        row["cpu-sandbox"] = row["enforce-cpu"] / row["off-cpu"]
        if fresh:
            row["ratio-fresh"] = row["fresh"] / row["off"]
            row["cpu-fresh"] = row["fresh-cpu"] / row["off-cpu"]
    rows.sort(key=lambda r: r["ratio-floor"])
    out = rows[(len(rows) - 1) // 2]
    spread_floor = ", ".join(f"{r['ratio-floor']:.2f}" for r in rows)
    spread_sandbox = ", ".join(
        f"{r['ratio-sandbox']:.2f}" for r in sorted(rows, key=lambda r: r["ratio-sandbox"])
    )
    cp = "on" if checkpoints else "off"
    print(
        f"== bash steps, checkpoints {cp}{', git workspace' if git else ''}: {reps} paired "
        f"repetitions of {steps} steps; the median repetition (by unsandboxed / floor)"
    )
    print(f"  floor: loopback request {out['request']:6.2f} ms + sh -c true {out['sh']:5.2f} ms"
          f" = {out['floor']:6.2f} ms")  # fmt: skip
    labels = [("off", "unsandboxed"), ("enforce", "sandboxed  ")]
    if fresh:
        labels.append(("fresh", "fresh bwrap"))
    for sandbox, label in labels:
        print(
            f"  {label} step {out[sandbox]:6.2f} ms, turn wall / steps "
            f"{out[sandbox + '-wall']:6.2f} ms   (in it: bash tool call "
            f"{out[sandbox + '-tool']:5.2f} ms, gate {out[sandbox + '-gate']:4.2f} ms; "
            f"session appends {out[sandbox + '-session']:4.2f} ms, request build "
            f"{out[sandbox + '-prepare']:4.2f} ms per step)"
        )
    print(f"  unsandboxed / floor      {out['ratio-floor']:5.2f} x   (all: {spread_floor})")
    print(f"  sandboxed / unsandboxed  {out['ratio-sandbox']:5.2f} x   (all: {spread_sandbox})")
    if fresh:
        spread_fresh = ", ".join(
            f"{r['ratio-fresh']:.2f}" for r in sorted(rows, key=lambda r: r["ratio-fresh"])
        )
        out["cpu-fresh"] = statistics.median(r["cpu-fresh"] for r in rows)
        print(
            f"  fresh bwrap / unsandboxed {out['ratio-fresh']:5.2f} x   (all: {spread_fresh}; "
            f"[sandbox] keep = false, as before; CPU {out['cpu-fresh']:4.2f} x)"
        )
    cpu_floor = statistics.median(r["cpu-floor"] for r in rows)
    cpu_sandbox = statistics.median(r["cpu-sandbox"] for r in rows)
    print(
        f"  CPU per step (this process + its commands; medians over repetitions): floor "
        f"{statistics.median(r['floor-cpu'] for r in rows):5.2f} ms, unsandboxed "
        f"{statistics.median(r['off-cpu'] for r in rows):5.2f} ms ({cpu_floor:4.2f} x), sandboxed "
        f"{statistics.median(r['enforce-cpu'] for r in rows):5.2f} ms ({cpu_sandbox:4.2f} x "
        "unsandboxed)"
    )
    out["cpu-floor"], out["cpu-sandbox"] = cpu_floor, cpu_sandbox
    print(
        f"  bare spawns: /bin/bash -c true {out['bare-bash']:5.2f} ms; under a fresh bubblewrap "
        f"{out['bare-bwrap']:5.2f} ms (adds {out['bwrap-extra']:5.2f} ms: a fresh sandbox per "
        f"command allows at best {out['ratio-bwrap']:4.2f} x); through the kept sandbox "
        f"{out['bare-kept']:5.2f} ms, its checks included (adds {out['kept-extra']:5.2f} ms: at "
        f"best {out['ratio-kept']:4.2f} x); the harness adds {out['harness-extra']:5.2f} ms more "
        "(git guard, thread trips)"
    )
    return out


def profile_bash(steps: int, root: Path, sandbox: str, checkpoints: bool) -> None:
    home, workspace = root / f"home-prof-{sandbox}", root / f"ws-prof-{sandbox}"
    workspace.mkdir()
    (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
    use_env(home)
    bash_turn(home, workspace, steps, sandbox, checkpoints)  # warm-up
    prof = cProfile.Profile()
    prof.enable()
    bash_turn(home, workspace, steps, sandbox, checkpoints)
    prof.disable()
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("cumulative").print_stats(45)
    print(f"\n== cProfile of one bash turn, sandbox {sandbox} (includes build_session)")
    print(text.getvalue())


def main_bash(args: argparse.Namespace) -> int:
    settings = {"on": [True], "off": [False], "both": [True, False]}[args.checkpoints]
    results = {}
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-") as tmp:
        for checkpoints in settings:
            results[checkpoints] = measure_bash(
                args.steps, args.reps, Path(tmp), checkpoints, args.git, args.fresh
            )
        if args.profile:
            for sandbox in ("off", "enforce"):
                profile_bash(args.steps, Path(tmp), sandbox, settings[0])
    for checkpoints, out in results.items():
        cp = "on" if checkpoints else "off"
        print(
            f"SUMMARY bash step (checkpoints {cp}): unsandboxed {out['off']:.2f} ms = "
            f"{out['ratio-floor']:.2f} x the floor {out['floor']:.2f} ms (target <= "
            f"{BASH_FLOOR_RATIO:g} x: {verdict(out['ratio-floor'], BASH_FLOOR_RATIO)}); "
            f"sandboxed {out['enforce']:.2f} ms = {out['ratio-sandbox']:.2f} x unsandboxed "
            f"(target <= {SANDBOX_RATIO:g} x: {verdict(out['ratio-sandbox'], SANDBOX_RATIO)}); "
            f"CPU {out['cpu-floor']:.2f} x the floor's, sandboxed {out['cpu-sandbox']:.2f} x"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--server", choices=("both", "process", "thread"), default="both")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one turn")
    parser.add_argument("--bash", action="store_true", help="per bash step against its floor")
    parser.add_argument("--checkpoints", choices=("on", "off", "both"), default="on")
    parser.add_argument("--git", action="store_true", help="--bash: the workspace is a git repo")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="--bash: also a sandboxed turn with a fresh bubblewrap per command ([sandbox] keep = false)",
    )
    args = parser.parse_args()
    if args.steps < 20:
        parser.error("--steps must be at least 20")
    if args.bash:
        return main_bash(args)
    modes = ["process", "thread"] if args.server == "both" else [args.server]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-") as tmp:
        for mode in modes:
            results[mode] = measure(mode, args.steps, args.reps, Path(tmp))
        if args.profile:
            profile(args.steps, Path(tmp))
    head = modes[0]
    over = results[head]["over"]
    extra = ""
    if "thread" in results and head != "thread":
        extra = f"; {results['thread']['over']:.2f} ms with the server in-process"
    print(
        f"SUMMARY step overhead: {over:.2f} ms per step (server in a {head}, {args.steps} steps"
        f"{extra}); target <= {TARGET_MS:.0f} ms: {verdict(over, TARGET_MS)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
