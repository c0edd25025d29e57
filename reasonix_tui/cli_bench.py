"""``reasonix bench run|report``: e2ebench from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from reasonix_tui.cli_common import EXIT_FAILED, EXIT_OK, SubParsers


def add_bench_parser(sub: SubParsers) -> None:
    bench = sub.add_parser("bench", help="e2ebench: run tasks end to end, compare runs")
    bench_sub = bench.add_subparsers(dest="bench_command", metavar="ACTION")
    run = bench_sub.add_parser("run", help="run tasks, verify them, write trajectories")
    run.add_argument("tasks", nargs="*", metavar="TASK", help="task names or folders (all)")
    run.add_argument(
        "--tasks-dir", type=Path, default=Path("bench/e2e/tasks"), metavar="DIR",
        help="the corpus (default: bench/e2e/tasks)",
    )  # fmt: skip
    run.add_argument(
        "--model", "-m", dest="bench_model", metavar="M", help="the model (default: configured)"
    )
    run.add_argument(
        "--arm", action="append", default=[], metavar="NAME=key=value,...",
        help="a named set of settings, compared side by side (repeatable)",
    )  # fmt: skip
    run.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per task and arm")
    run.add_argument("--jobs", type=int, default=1, metavar="N", help="runs at a time")
    run.add_argument("--json", dest="bench_json", action="store_true", help="summary as JSON")
    run.add_argument("--out", type=Path, metavar="DIR", help="output folder (bench-out/<time>)")
    run.add_argument("--max-cost", type=float, metavar="USD", help="start no run once spent")
    run.add_argument("--record", action="store_true", help="store each answer as a cassette")
    run.add_argument("--replay", type=Path, metavar="DIR", help="serve cassettes from DIR")
    report = bench_sub.add_parser("report", help="summarise a bench run, or diff two")
    report.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="one or two folders")
    report.add_argument("--json", dest="bench_json", action="store_true", help="one JSON object")


def bench_command(args: argparse.Namespace) -> int:
    """``reasonix bench run|report``: exit 0 when every run solved its task, else 1."""
    from reasonix_core.bench import command

    if args.bench_command == "report":
        command.report(args.dirs, as_json=args.bench_json)
        return EXIT_OK
    return EXIT_OK if command.run(args) else EXIT_FAILED
