"""What reusing the provider's connection saves a subagent, side by side.

Two sessions in one process (built by ``build_session`` as ``reasonix run`` builds
them), each against its own fixture server in its own process: one keeps
connections alive between streamed answers, as a real API does, the other closes
every stream's connection (the fixture's default), so each request opens a new
one. The same read-only child (``STEPS - 1`` ``read_file`` / ``ls`` calls, then an
answer, an instant provider) runs alternately in each, ``--runs`` times after a
warm-up; the medians of its wall and of this process's CPU time
(``time.process_time``: the servers' work is in their own processes) are printed.

Run: ``.venv/bin/python bench/bench_connection_reuse.py [--runs 80] [--steps 8]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path

import anyio
from _common import KEY, KEY_ENV, tool_loop_server, write_config

from reasonix_core.permission.approver import FailClosedApprover
from reasonix_core.session.build import build_session
from reasonix_core.session.settings import RunSettings
from reasonix_core.subagent.runner import SubagentRunner

SETTINGS = (("closing each stream", False), ("keep-alive", True))


async def alternate(
    sessions: dict[str, tuple[Path, Path]], runs: int
) -> dict[str, tuple[list[float], list[float]]]:
    async with AsyncExitStack() as stack:
        runners: dict[str, SubagentRunner] = {}
        for name, (home, workspace) in sessions.items():
            os.environ["REASONIX_HOME"] = str(home)
            rt = await stack.enter_async_context(
                build_session(
                    RunSettings(workspace=workspace, home=home), approver=FailClosedApprover()
                )
            )
            runner = rt.agent.tool_context.subagents.runner()  # type: ignore[union-attr]
            assert isinstance(runner, SubagentRunner)
            runners[name] = runner
        out: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in runners}
        for run in range(runs + 1):  # the first is a warm-up
            for name, runner in runners.items():
                spec = runner.spec(f"CHILD-{run}: look at tiny.txt", read_only=True)
                started, cpu_started = time.perf_counter(), time.process_time()
                result = await runner.run(spec)
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
                assert result.ok, result.render()
                if run:
                    out[name][0].append(wall)
                    out[name][1].append(cpu)
        return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    for name in [k for k in os.environ if k.endswith("_API_KEY")]:
        del os.environ[name]
    os.environ[KEY_ENV] = KEY
    with tempfile.TemporaryDirectory(prefix="reasonix-bench-") as tmp, ExitStack() as servers:
        sessions: dict[str, tuple[Path, Path]] = {}
        for name, keep_alive in SETTINGS:
            home, workspace = Path(tmp) / f"home-{keep_alive}", Path(tmp) / f"ws-{keep_alive}"
            workspace.mkdir(parents=True)
            (workspace / "tiny.txt").write_text("hello\n", encoding="utf-8")
            url = servers.enter_context(
                tool_loop_server("process", args.steps, keep_alive=keep_alive)
            )
            write_config(home, url)
            sessions[name] = (home, workspace)
        results = anyio.run(alternate, sessions, args.runs)
    medians: dict[str, tuple[float, float]] = {}
    print(f"== one read-only child of {args.steps} steps, {args.runs} runs in each, alternately")
    for name, (walls, cpus) in results.items():
        medians[name] = (statistics.median(walls), statistics.median(cpus))
        print(
            f"  {name:20s} wall median {medians[name][0] * 1000:6.1f} ms   "
            f"CPU median {medians[name][1] * 1000:6.1f} ms"
        )
    (closed_wall, closed_cpu), (kept_wall, kept_cpu) = (medians[n] for n, _ in SETTINGS)
    print(
        "SUMMARY "
        + json.dumps(
            {
                "bench": "connection_reuse",
                "runs": args.runs,
                "steps": args.steps,
                "cpu_kept_over_closed": round(kept_cpu / closed_cpu, 3),
                "wall_kept_over_closed": round(kept_wall / closed_wall, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
