"""The ``reasonix bench`` commands over parsed arguments: output on stdout, progress
on stderr. The CLI picks the exit code from what these return."""

from __future__ import annotations

import sys
import time
from argparse import Namespace
from pathlib import Path

from reasonix_core.bench.runner import BenchOptions, load_trajectories, parse_arm, run_bench
from reasonix_core.bench.summary import (
    diff,
    render_diff,
    render_failures,
    render_summary,
    summarise,
)
from reasonix_core.bench.task import load_tasks
from reasonix_core.errors import BenchError
from reasonix_core.jsontext import dumps_utf8


def _progress(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def run(args: Namespace) -> bool:
    """Run the bench; True when every run solved its task."""
    if args.max_cost is not None and args.max_cost < 0:
        raise BenchError("--max-cost must not be negative")
    tasks = load_tasks(args.tasks_dir, list(args.tasks))
    arms = [parse_arm(text) for text in args.arm]
    out = args.out or Path("bench-out") / time.strftime("%Y%m%d-%H%M%S")
    replay = args.replay
    if replay is not None and not replay.is_dir():
        raise BenchError(f"--replay {replay}: not a folder")
    options = BenchOptions(
        tasks=tasks,
        out=out,
        model=args.bench_model,
        repeat=args.repeat,
        jobs=args.jobs,
        max_cost=args.max_cost,
        record=args.record,
        replay=replay,
        **({"arms": arms} if arms else {}),  # pyright: ignore[reportArgumentType]
    )
    result = run_bench(options, log=_progress)
    if args.bench_json:
        sys.stdout.write(dumps_utf8(result.summary) + "\n")
    else:
        sys.stdout.write(render_summary(result.summary))
        sys.stdout.write(render_failures(result.trajectories))
        sys.stdout.write(f"\ntrajectories: {result.out / 'runs'}\n")
    return all(t.get("solved") for t in result.trajectories)


def report(dirs: list[Path], *, as_json: bool) -> None:
    if len(dirs) > 2:
        raise BenchError("bench report takes one folder, or two to compare")
    runs = [load_trajectories(d) for d in dirs]
    if len(runs) == 1:
        summary = summarise(runs[0])
        if as_json:
            sys.stdout.write(dumps_utf8(summary) + "\n")
        else:
            sys.stdout.write(render_summary(summary) + render_failures(runs[0]))
        return
    before, after = runs
    result = {"before": summarise(before), "after": summarise(after), "diff": diff(before, after)}
    if as_json:
        sys.stdout.write(dumps_utf8(result) + "\n")
        return
    sys.stdout.write(f"before: {dirs[0]}\n" + render_summary(result["before"]))
    sys.stdout.write(f"\nafter: {dirs[1]}\n" + render_summary(result["after"]))
    sys.stdout.write("\n" + render_diff(result["diff"]))
