"""The ``reasonix`` entry point.

Only this module chooses exit codes (0 ok, 1 the run failed, 2 usage or
configuration error) and the words a user sees for an error. It imports
textual only when it launches the TUI: ``reasonix --version`` and
``reasonix run`` never load it.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from reasonix_core import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
VERSION = f"reasonix {__version__}"
MAIN_EXAMPLES = """examples:
  reasonix                                   open the terminal app here
  reasonix run "Where is the retry policy configured?"
  git diff | reasonix run "Review this diff for bugs"
  reasonix -p "Summarise README.md" --json   Claude Code's spelling of run
  reasonix -c                                continue the newest session in the app
  reasonix trust                             apply this folder's project settings
  eval "$(reasonix completion bash)"         shell completion
"""
RUN_EXAMPLES = """examples:
  reasonix run "Where is the retry policy configured?"
  git diff | reasonix run "Review this diff for bugs"
  reasonix run --allowed-tools "Edit Bash(pytest:*)" "Fix the failing test"
  reasonix run --output-format json --metrics run.json "Summarise README.md"
  reasonix run --output-format stream-json "List the TODOs"
  reasonix run "/review src/app.py"          a custom command (.reasonix/commands/review.md)
  reasonix run -c "Now add a test for it"
"""
# Checked against what the selected provider accepts (its efforts()) once the
# model is resolved, the same way as [agent] effort: no vocabulary of our own.
EFFORT_HELP = (
    "reasoning effort (auto, disabled, low, medium, high, max...: what the provider accepts)"
)


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one error line: a bad flag of `reasonix run` says
    `reasonix: error: ...`, not `reasonix run: error: ...`, after the usage."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"reasonix: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    from reasonix_core.checkpoint import SCOPES

    parser = _Parser(
        prog="reasonix",
        description="A cache-first coding agent for the terminal.",
        epilog=MAIN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=VERSION)
    # Rewritten to `run` before parsing (see _print_as_run); listed here for --help.
    parser.add_argument(
        "-p",
        "--print",
        dest="print_prompt",
        metavar="PROMPT",
        help='Claude Code\'s spelling of `run`: reasonix -p "PROMPT" [run options]',
    )
    parser.add_argument("--model", "-m", help="provider name, model id or provider/model")
    parser.add_argument("--effort", metavar="LEVEL", help=EFFORT_HELP)
    parser.add_argument(
        "--permission-mode",
        choices=("ask", "auto", "yolo", "plan"),
        help="permission preset; plan: start in plan mode (writes wait for the plan's approval)",
    )
    parser.add_argument(
        "--add-dir",
        dest="add_dir",
        action="append",
        type=Path,
        metavar="PATH",
        help="let the read tools reach PATH without asking (repeatable; reads only)",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_last",
        action="store_true",
        help="continue the newest session of this workspace",
    )
    parser.add_argument("-r", "--resume", dest="resume_id", metavar="ID", help="resume session ID")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run one prompt headless and exit",
        description="Run one prompt to the end without the TUI, print the answer, and exit "
        "(0 done, 1 the run failed, 2 usage or configuration error).",
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "prompt",
        nargs="?",
        help="the prompt; read from standard input when omitted; piped input beside a "
        "prompt is appended to it (fenced, at most 1 MiB); /command and @path expand",
    )
    run.add_argument(
        "--model", "-m", dest="run_model", help="provider name, model id or provider/model"
    )
    run.add_argument("--effort", dest="run_effort", metavar="LEVEL", help=EFFORT_HELP)
    run.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="text (the answer as it streams), json (one result object at the end) or "
        "stream-json (Claude Code's line format, then the result)",
    )
    run.add_argument(
        "--json",
        dest="output_format",
        action="store_const",
        const="json",
        help="the same as --output-format json",
    )
    run.add_argument("--metrics", type=Path, metavar="PATH", help="write RunMetrics JSON to PATH")
    run.add_argument(
        "--permission-mode",
        dest="run_permission_mode",
        choices=("ask", "auto", "yolo", "plan"),
        help="permission preset (default from config); plan: plan mode, writes blocked, "
        "the plan saved for --approve-plan",
    )
    run.add_argument("-y", "--auto", action="store_true", help="same as --permission-mode auto")
    run.add_argument(
        "--allowed-tools",
        default="",
        metavar="RULES",
        help='space-separated rules allowed for this run, e.g. "Bash(pytest:*) Edit"',
    )
    run.add_argument(
        "--max-steps",
        "--max-turns",
        dest="max_steps",
        type=int,
        metavar="N",
        help="stop after N model requests (--max-turns: Claude Code's name)",
    )
    run.add_argument(
        "--max-cost", type=float, metavar="USD", help="stop at a step boundary once the "
        "task has cost USD (every source counted; overrides [agent] task_cost_budget)"
    )  # fmt: skip
    run.add_argument(
        "--max-tokens", type=int, metavar="N", help="stop at a step boundary once the "
        "task has used N tokens (prompt + output, every source counted)"
    )  # fmt: skip
    run.add_argument(
        "--max-time", metavar="DURATION", help="stop at a step boundary once the task "
        "has run DURATION (90s, 15m, 1h30m)"
    )  # fmt: skip
    run.add_argument(
        "--append-system-prompt",
        default="",
        metavar="TEXT",
        help="add TEXT to the system prompt of a new session (after [agent] "
        "system_prompt_extra); a continued session keeps its own",
    )
    run.add_argument(
        "--mcp-config",
        action="append",
        type=Path,
        default=[],
        metavar="FILE",
        help="load MCP servers from FILE (.mcp.json format; repeatable; above the "
        "config files, no trust needed)",
    )
    run.add_argument(
        "--workspace",
        type=Path,
        metavar="PATH",
        help="work in PATH instead of the current directory (discovery, write scope)",
    )
    run.add_argument(
        "--add-dir",
        dest="run_add_dir",
        action="append",
        type=Path,
        metavar="PATH",
        help="let the read tools reach PATH without asking (repeatable; reads only)",
    )
    run.add_argument(
        "-c",
        "--continue",
        dest="run_continue",
        action="store_true",
        help="continue the newest session of this workspace",
    )
    run.add_argument("-r", "--resume", dest="run_resume", metavar="ID", help="continue session ID")
    run.add_argument(
        "--trust-project",
        action="store_true",
        help="apply this folder's risky project settings for this run only (for CI)",
    )
    run.add_argument(
        "--approve-plan",
        action="store_true",
        help="with -c or -r: execute the plan the session saved for approval (no prompt)",
    )
    run.add_argument(
        "--goal",
        metavar="OBJECTIVE",
        help="Goal mode: drive OBJECTIVE round by round until complete, blocked or a bound "
        "(exit 0 only when complete; no prompt)",
    )
    run.add_argument(
        "--max-goal-rounds", type=int, metavar="N", help="with --goal: at most N rounds"
    )
    run.add_argument(
        "--goal-token-budget", type=int, metavar="N", help="with --goal: stop after N tokens"
    )

    goal = sub.add_parser("goal", help="show or change a session's goal (Goal mode)")
    goal.add_argument(
        "goal_command",
        choices=("status", "pause", "resume", "clear"),
        help="show it, or pause, resume or clear it (nothing is driven)",
    )
    goal.add_argument("-c", "--continue", dest="goal_continue", action="store_true",
                      help="the newest session (the default)")  # fmt: skip
    goal.add_argument("-r", "--resume", dest="goal_resume", metavar="ID", help="that session")

    trust = sub.add_parser(
        "trust", help="trust a folder's project settings (providers, presets, MCP servers)"
    )
    trust.add_argument(
        "path", nargs="?", type=Path, default=None, help="the folder (default: this one)"
    )
    trust.add_argument("--revoke", action="store_true", help="forget the trust for the folder")

    perms = sub.add_parser("permissions", help="inspect permission rules")
    perms_sub = perms.add_subparsers(dest="permissions_command", metavar="ACTION")
    check = perms_sub.add_parser("check", help="show the decision for a tool call and why")
    check.add_argument("tool", help="tool name, e.g. bash or edit_file")
    check.add_argument("arg", nargs="?", default="", help="command (bash) or path (file tools)")
    check.add_argument(
        "--permission-mode",
        dest="check_permission_mode",
        choices=("ask", "auto", "yolo"),
        help="the preset to check under (default from config)",
    )

    mcp = sub.add_parser("mcp", help="inspect the configured MCP servers")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", metavar="ACTION")
    mcp_list = mcp_sub.add_parser("list", help="start each server and show its status")
    mcp_list.add_argument("--json", dest="mcp_json", action="store_true", help="one JSON array")
    mcp_list.add_argument(
        "--no-connect",
        action="store_true",
        help="show the declarations without starting any server",
    )

    config = sub.add_parser("config", help="show or change settings")
    config_sub = config.add_subparsers(dest="config_command", metavar="SETTING")
    ratio = config_sub.add_parser(
        "compact-ratio", help="show or set agent.compact_ratio (the compaction threshold)"
    )
    ratio.add_argument(
        "value",
        nargs="?",
        metavar="VALUE",
        help="0.30-0.85 (or 30%%-85%%); presets 0.70, 0.80, 0.85",
    )
    ratio.add_argument(
        "--local",
        action="store_true",
        help="write ./reasonix.toml (the project) instead of the user config",
    )

    subagent = sub.add_parser("subagent", help="list subagent profiles, run or try one")
    subagent_sub = subagent.add_subparsers(dest="subagent_command", metavar="ACTION")
    subagent_sub.add_parser("list", help="the profiles (skills with runAs: subagent)")
    for action, what in (
        ("run", "run a writer subagent with the regular permissions and sandbox"),
        ("try", "run a read-only subagent"),
    ):
        one = subagent_sub.add_parser(action, help=what)
        one.add_argument("prompt", help="the subagent's whole task")
        one.add_argument(
            "--profile",
            "-p",
            dest="subagent_profile",
            metavar="NAME",
            help="the subagent profile (see reasonix subagent list)",
        )
        one.add_argument(
            "--model", "-m", dest="subagent_model", metavar="MODEL", help="the subagent's model"
        )
        one.add_argument("--effort", dest="subagent_effort", metavar="LEVEL", help=EFFORT_HELP)
        if action == "run":
            one.add_argument(
                "-y", "--auto", dest="subagent_auto", action="store_true",
                help="permission preset auto for this run (else --permission-mode / config)",
            )  # fmt: skip
            one.add_argument(
                "--write-path",
                dest="write_paths",
                action="append",
                metavar="PATH",
                help="claim PATH for writing (repeatable; default: the whole workspace)",
            )

    completion = sub.add_parser(
        "completion", help="print a shell completion script (bash, zsh or fish)"
    )
    completion.add_argument(
        "shell",
        choices=("bash", "zsh", "fish"),
        help='the shell; e.g. eval "$(reasonix completion bash)" in ~/.bashrc',
    )

    compact = sub.add_parser("compact", help="compact a session's context now")
    compact.add_argument(
        "-r",
        "--resume",
        dest="compact_resume",
        metavar="ID",
        help="the session to compact (default: the newest of this workspace)",
    )
    rewind = sub.add_parser(
        "rewind", help="list a session's turns, or rewind its code and/or chat to a turn"
    )
    rewind.add_argument("turn", nargs="?", type=int, metavar="TURN", help="the turn to rewind to")
    rewind.add_argument("--list", dest="rewind_list", action="store_true", help="list the turns")
    rewind.add_argument(
        "--scope",
        choices=SCOPES,
        default="both",
        help="code: the files; chat: the conversation; both (default)",
    )
    rewind.add_argument(
        "-c", "--continue", dest="rewind_continue", action="store_true",
        help="the newest session of this workspace (the default)",
    )  # fmt: skip
    rewind.add_argument("-r", "--resume", dest="rewind_resume", metavar="ID", help="session ID")
    rewind.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")  # fmt: skip
    rewind.add_argument(
        "--force", action="store_true", help="overwrite files changed outside Reasonix since"
    )
    rewind.add_argument("--json", dest="rewind_json", action="store_true", help="one JSON object")

    cache = sub.add_parser(
        "cache", help="a session's prompt-cache account: hits, breaks and what they cost"
    )
    cache.add_argument(
        "-c",
        "--continue",
        dest="cache_continue",
        action="store_true",
        help="the newest session of this workspace (the default)",
    )
    cache.add_argument("-r", "--resume", dest="cache_resume", metavar="ID", help="session ID")
    cache.add_argument("--json", dest="cache_json", action="store_true", help="one JSON object")
    cache.add_argument(
        "--check", action="store_true", help="exit 1 when any cache break is unexplained"
    )
    from reasonix_tui.memory_cli import add_memory_parser

    add_memory_parser(sub)
    from reasonix_tui.setup_cli import add_setup_parser

    add_setup_parser(sub)
    _bench_parser(sub)
    return parser


def _goal(args: argparse.Namespace) -> int:
    """``reasonix goal status|pause|resume|clear``: the session's goal records only;
    nothing is driven (a goal is armed only by ``run --goal`` or the TUI)."""
    from reasonix_core.agent.session import open_session
    from reasonix_core.goal.state import GoalAction, GoalBook, GoalError
    from reasonix_core.home import reasonix_home

    loaded = open_session(reasonix_home() / "sessions", Path.cwd(), args.goal_resume)
    try:
        book = GoalBook(loaded.store)
        goal = book.current()
        if args.goal_command == "status":
            print(goal.describe() if goal is not None else "no goal in this session")
            return EXIT_OK
        if goal is None:
            return _fail("no goal in this session")
        if args.goal_command == "clear":
            book.clear()
            print(f"cleared {goal.id}")
            return EXIT_OK
        action = GoalAction.PAUSE if args.goal_command == "pause" else GoalAction.RESUME
        try:
            print(book.update(goal.id, goal.revision, action).describe())
        except GoalError as exc:
            return _fail(f"goal {args.goal_command}: {exc}")
        return EXIT_OK
    finally:
        loaded.store.close()


def _bench_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    sys.stderr.write(f"reasonix: error: {message}\n")
    return code


def _skip_httpx_cli() -> None:
    """httpx imports its optional command-line module (rich, click, pygments: ~35 ms)
    at import time whenever those are installed, as they are beside textual. Headless
    runs never use it; a None entry makes that import fail fast, and httpx falls back
    to its stub."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def _run(args: argparse.Namespace) -> int:
    from reasonix_core.startup_heap import pause_collection, resume_collection

    pause_collection()  # headless resumes it once the runtime is built
    try:
        return _start_run(args)
    finally:
        resume_collection()


def _start_run(args: argparse.Namespace) -> int:
    _skip_httpx_cli()
    import anyio

    from reasonix_core.command.piped import PIPED_INPUT_CAP, cap_words, with_piped_input
    from reasonix_core.headless import HeadlessOptions, run_headless
    from reasonix_core.session.settings import RunSettings

    if args.approve_plan:
        # The approval is this flag, never a prompt's wording (docs/MODES.md).
        if not (args.run_continue or args.continue_last or args.run_resume or args.resume_id):
            return _fail("--approve-plan needs -c or -r ID (the session holding the plan)")
        if args.prompt is not None:
            return _fail("--approve-plan takes no prompt: it executes the saved plan")
        if "plan" in (args.run_permission_mode, args.permission_mode):
            return _fail("--approve-plan executes the plan: it cannot run in plan mode")
        args.prompt = ""
    if args.goal is not None:
        if args.prompt is not None:
            return _fail("--goal takes no prompt: the objective is the goal")
        if not args.goal.strip():
            return _fail("--goal needs an objective")
        args.prompt = args.goal
    elif args.max_goal_rounds is not None or args.goal_token_budget is not None:
        return _fail("--max-goal-rounds and --goal-token-budget need --goal")
    for flag, value in (
        ("--max-goal-rounds", args.max_goal_rounds),
        ("--goal-token-budget", args.goal_token_budget),
    ):
        if value is not None and value < 1:
            return _fail(f"{flag} must be at least 1")
    prompt = args.prompt
    if prompt is not None and not _utf8(prompt):
        return _fail("the prompt is not valid UTF-8")
    if prompt is None and (sys.stdin is None or sys.stdin.isatty()):
        return _fail("no prompt: pass it as an argument or on standard input")
    data = _read_stdin(PIPED_INPUT_CAP) if prompt is None or _stdin_is_piped() else b""
    if len(data) > PIPED_INPUT_CAP:
        return _fail(
            f"standard input is larger than {cap_words()}; pass a smaller part, "
            "or name the file in the prompt as @path"
        )
    try:
        piped = data.decode("utf-8")
    except UnicodeDecodeError:
        return _fail("standard input is not valid UTF-8")
    # `git diff | reasonix run "Review this diff"`: the diff follows the prompt, fenced.
    prompt = piped if prompt is None else with_piped_input(prompt, piped)
    if not prompt.strip() and not args.approve_plan:
        return _fail("the prompt is empty")
    if args.max_steps is not None and args.max_steps < 1:
        return _fail("--max-steps must be at least 1")
    budgets = _budget_flags(args)
    if isinstance(budgets, str):
        return _fail(budgets)
    problem = _rules_problem(args.allowed_tools) or _metrics_problem(args.metrics)
    if problem:
        return _fail(problem)
    mode = args.run_permission_mode or args.permission_mode
    # Plan mode is not a preset: it blocks writers whatever the preset (-y too).
    plan_mode = mode == "plan"
    if plan_mode:
        mode = None
    if args.auto:
        mode = "auto"
    workspace = Path.cwd()
    if args.workspace is not None:
        workspace = args.workspace.expanduser().absolute()
        if not workspace.is_dir():
            return _fail(f"--workspace {args.workspace}: not a directory")
    for path in args.mcp_config:
        if not path.is_file():
            return _fail(f"--mcp-config {path}: no such file")
    if not args.trust_project:
        refusal = _untrusted_project(workspace)
        if refusal is not None:
            return _fail(refusal)
    add_dirs = _add_dirs([*(args.add_dir or []), *(args.run_add_dir or [])])
    if isinstance(add_dirs, str):
        return _fail(add_dirs)
    resume = args.run_resume or args.resume_id
    if resume and "@" in resume:
        resume = _fork(resume)  # -r ID@TURN: run in a new session forked from the turn
    settings = RunSettings(
        workspace=workspace,
        model=args.run_model or args.model,
        effort=args.run_effort or args.effort,
        permission_mode=mode,
        allowed_tools=_split_rules(args.allowed_tools),
        max_steps=args.max_steps,
        continue_last=args.run_continue or args.continue_last,
        resume_id=resume,
        trust_project=args.trust_project,
        add_dirs=add_dirs,
        append_system_prompt=args.append_system_prompt,
        mcp_config=[p.expanduser().absolute() for p in args.mcp_config],
        **budgets,
        plan_mode=plan_mode,
    )
    options = HeadlessOptions(
        prompt=prompt,
        settings=settings,
        output_format=args.output_format,
        metrics_path=args.metrics,
        approve_plan=args.approve_plan,
        goal=args.goal is not None,
        max_goal_rounds=args.max_goal_rounds,
        goal_token_budget=args.goal_token_budget,
    )
    outcome = anyio.run(run_headless, options)
    return EXIT_OK if outcome.ok else EXIT_FAILED


def _budget_flags(args: argparse.Namespace) -> dict[str, Any] | str:
    """--max-cost / --max-tokens / --max-time as RunSettings fields, or the usage error."""
    from reasonix_core.agent.budget import parse_duration

    if args.max_cost is not None and not args.max_cost > 0:
        return "--max-cost must be more than 0"
    if args.max_tokens is not None and args.max_tokens < 1:
        return "--max-tokens must be at least 1"
    seconds = None
    if args.max_time is not None:
        try:
            seconds = parse_duration(args.max_time)
        except ValueError as exc:
            return f"--max-time: {exc}"
    return {"max_cost": args.max_cost, "max_tokens": args.max_tokens, "max_time": seconds}


def _untrusted_project(workspace: Path | None = None) -> str | None:
    """Why a headless run must not start in ``workspace`` (default: here), or None.
    Checked before anything is built: an untrusted folder's settings could send
    the key elsewhere or start commands, and nobody is here to be asked."""
    from reasonix_core.home import reasonix_home
    from reasonix_core.trust import review_project

    review = review_project(workspace or Path.cwd(), reasonix_home())
    if not review.needs_trust:
        return None
    return (
        f"{review.folder} is not trusted and its project files set "
        f"{review.summary()}; run `reasonix trust` to trust this folder, "
        "or pass --trust-project for this run"
    )


def _add_dirs(paths: list[Path]) -> list[Path] | str:
    """``--add-dir`` values as absolute folders, or the usage error to print."""
    out: list[Path] = []
    for path in paths:
        full = path.expanduser().absolute()
        if not full.is_dir():
            return f"--add-dir {path}: not a directory"
        out.append(full)
    return out


def _utf8(text: str) -> bool:
    # Undecodable bytes in argv arrive as lone surrogates (surrogateescape).
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _stdin_is_piped() -> bool:
    """Standard input is a pipe or a file (``git diff |``, ``< notes.md``). A
    terminal, ``/dev/null``, a closed or a replaced stream carry nothing to append."""
    import stat

    if sys.stdin is None or not hasattr(sys.stdin, "fileno"):
        return False
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _read_stdin(cap: int) -> bytes:
    """Standard input, at most one byte over ``cap`` (the caller refuses beyond it)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream put in place by an embedder or a test
        return sys.stdin.read(cap + 1).encode("utf-8", "surrogatepass")
    return buffer.read(cap + 1)


def _split_rules(text: str) -> list[str]:
    # The one rule splitter is the core's: a CLI copy split `Bash=echo a b` in three.
    from reasonix_core.permission.rules import split_rules

    return split_rules(text)


def _rules_problem(text: str) -> str | None:
    from reasonix_core.permission import RuleError, parse_rule

    for rule in _split_rules(text):
        try:
            parse_rule(rule)
        except RuleError as exc:
            return f"--allowed-tools: {exc}"
    return None


def _metrics_problem(path: Path | None) -> str | None:
    """Refuse a --metrics path the run could not write, before anything is sent."""
    if path is None:
        return None
    if path.is_dir():
        return f"--metrics {path}: is a directory"
    folder = path.parent
    if not folder.is_dir():
        return f"--metrics {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"--metrics {path}: the folder {folder} is not writable"
    return None


def _permissions_check(args: argparse.Namespace) -> int:
    from reasonix_core.config import load_config
    from reasonix_core.permission import explain
    from reasonix_core.session.policy import build_policy
    from reasonix_core.session.settings import RunSettings

    workspace = Path.cwd()
    loaded = load_config(workspace)
    config = loaded.config
    add_dirs = _add_dirs(args.add_dir or [])
    if isinstance(add_dirs, str):
        return _fail(add_dirs)
    settings = RunSettings(
        workspace=workspace, permission_mode=args.check_permission_mode, add_dirs=add_dirs
    )
    policy = build_policy(config, settings, workspace)
    sys.stdout.write(explain(policy, args.tool, args.arg) + "\n")
    if loaded.withheld:
        settings_named = ", ".join(dict.fromkeys(s.setting for s in loaded.withheld))
        sys.stdout.write(
            f"note: this folder is not trusted; not applied: {settings_named} "
            "(`reasonix trust` applies them)\n"
        )
    return EXIT_OK


def _mcp_list(args: argparse.Namespace) -> int:
    import json

    import anyio

    from reasonix_core.config import load_config, reasonix_home
    from reasonix_core.mcp import make_host

    home = reasonix_home()
    config = load_config(Path.cwd(), home=home).config
    workspace = Path(config.sandbox.workspace_root or Path.cwd()).resolve()
    host = make_host(config, workspace, home)

    async def collect() -> list:
        if args.no_connect:
            return host.status()
        async with host:
            return await host.wait_ready()

    statuses = anyio.run(collect)
    if args.mcp_json:
        sys.stdout.write(json.dumps([s.to_json() for s in statuses], ensure_ascii=False) + "\n")
        return EXIT_OK
    from reasonix_core.trust import review_project

    review = review_project(workspace, home)
    if review.needs_trust:
        sys.stdout.write(
            f"note: {review.folder} is not trusted: its project settings "
            f"({review.summary()}) are not applied; `reasonix trust` applies them\n"
        )
    if not statuses:
        sys.stdout.write(
            "No MCP servers configured (add [[mcp.servers]] to reasonix.toml or a .mcp.json).\n"
        )
        return EXIT_OK
    rows = [("NAME", "TRANSPORT", "STATE", "TOOLS", "PROMPTS", "RESOURCES", "RECONNECTS", "ERROR")]
    for s in statuses:
        error = f"{s.error_class}: {s.reason}" if s.error_class else s.reason
        rows.append(
            (
                s.name,
                s.transport,
                s.phase,
                str(s.tools),
                str(s.prompts),
                str(s.resources),
                str(s.reconnects),
                error or "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)]
        sys.stdout.write("  ".join([*cells, row[-1]]).rstrip() + "\n")
    for problem in host.problems:
        sys.stdout.write(f"\n{problem}")
    if host.problems:
        sys.stdout.write("\n")
    return EXIT_OK


def _parse_ratio(text: str) -> float:
    from reasonix_core.errors import UsageError

    raw = text.strip().rstrip("%")
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(
            f"compact ratio must be a number like 0.80 or 80% (got {text!r})"
        ) from None
    if text.strip().endswith("%") or value > 1:
        value /= 100
    return round(value, 4)


def _config_compact_ratio(args: argparse.Namespace) -> int:
    from reasonix_core.config import PROJECT_FILE, USER_FILE, load_config, reasonix_home
    from reasonix_core.config.loader import read_toml

    workspace = Path.cwd()
    home = reasonix_home()
    project, user = workspace / PROJECT_FILE, home / USER_FILE
    if args.value is not None:
        from reasonix_core.config.writeback import set_config_value

        target = project if args.local else user
        set_config_value(target, "agent.compact_ratio", _parse_ratio(args.value))
        sys.stdout.write(f"wrote agent.compact_ratio to {target}\n")

    def declared(path: Path) -> float | None:
        agent = (read_toml(path) or {}).get("agent")
        value = agent.get("compact_ratio") if isinstance(agent, dict) else None
        return value if isinstance(value, int | float) else None

    loaded = load_config(workspace, home=home)
    value = loaded.config.agent.compact_ratio
    from_env = "REASONIX_AGENT__COMPACT_RATIO"
    if from_env in loaded.environment:
        source = f"environment variable {from_env}"
    elif declared(project) is not None:
        source = str(project)
    elif declared(user) is not None:
        source = str(user)
    else:
        source = "built-in default"
    sys.stdout.write(f"compact_ratio = {value:.2f} ({source})\n")
    if args.value is not None and from_env in loaded.environment:
        sys.stdout.write(f"note: {from_env} is set, which takes precedence over the files\n")
    elif args.value is not None and not args.local and declared(project) is not None:
        sys.stdout.write(f"note: {project} sets its own value, which takes precedence here\n")
    try:
        from reasonix_core.config import resolve_model

        resolved = resolve_model(loaded.config, None)
        window = resolved.provider.context_window_for(resolved.model)
        sys.stdout.write(
            f"compaction starts at {int(window * value):,} of {window:,} tokens ({resolved.ref})\n"
        )
    except Exception:  # no usable model configured: the ratio alone is still shown
        pass
    return EXIT_OK


def _compact(args: argparse.Namespace) -> int:
    import anyio

    from reasonix_core import events as ev
    from reasonix_core.permission.approver import FailClosedApprover
    from reasonix_core.session.build import build_session
    from reasonix_core.session.settings import RunSettings

    resume = args.compact_resume or args.resume_id
    settings = RunSettings(
        workspace=Path.cwd(), continue_last=resume is None, resume_id=resume, mcp_wait=False
    )

    async def go() -> bool:
        ok = False
        failure = ""
        async with build_session(settings, approver=FailClosedApprover()) as runtime:
            agent = runtime.agent
            before = agent.estimated_prompt_tokens()
            notices: list[ev.Notice] = []
            async for event in agent.compact():
                if isinstance(event, ev.Notice):
                    notices.append(event)
                elif isinstance(event, ev.CompactionFinished):
                    ok, failure = event.ok, event.failure
            for notice in notices:
                if not (failure and notice.text.endswith(failure)):  # said once, below
                    sys.stderr.write(f"{notice.level}: {notice.text}\n")
            after = agent.estimated_prompt_tokens()
            state = "compacted" if ok else "not compacted"
            sys.stdout.write(
                f"session {agent.session_id}: {state} (about {before:,} -> {after:,} tokens)\n"
            )
        if failure:
            sys.stderr.write(f"reasonix: error: compaction failed: {failure}\n")
        return ok

    return EXIT_OK if anyio.run(go) else EXIT_FAILED


def _rewind(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from reasonix_core.agent.session import open_session
    from reasonix_core.checkpoint.report import (
        format_outcome,
        format_turns,
        outcome_json,
        turns_json,
    )
    from reasonix_core.checkpoint.rewind import rewind, summarize_turns
    from reasonix_core.errors import CheckpointError, RewindConflict
    from reasonix_core.home import reasonix_home

    if args.rewind_list == (args.turn is not None):
        return _fail("rewind: give either --list or a TURN number")
    if args.rewind_continue and args.rewind_resume:
        return _fail("rewind: -c and -r cannot be combined")
    loaded = open_session(
        reasonix_home() / "sessions", Path.cwd(), args.rewind_resume or args.resume_id
    )
    # The folder the session's checkpoints were taken in (-r may name a session of
    # another workspace, and [sandbox] workspace_root may differ from here).
    workspace = Path(loaded.header.workspace or Path.cwd()).resolve()
    if args.rewind_list:
        turns = summarize_turns(loaded.store.path, workspace)
        text = _json_line(turns_json(turns)) if args.rewind_json else format_turns(turns)
        sys.stdout.write(text)
        return EXIT_OK
    try:
        outcome = rewind(
            loaded.store, workspace, args.turn, args.scope, lambda: datetime.now(UTC),
            dry_run=args.dry_run, force=args.force,
        )  # fmt: skip
    except (RewindConflict, CheckpointError) as exc:
        return _fail(str(exc), EXIT_FAILED)
    finally:
        loaded.store.close()
    sys.stdout.write(_json_line(outcome_json(outcome)) if args.rewind_json else format_outcome(outcome))  # fmt: skip
    return EXIT_OK


def _json_line(data: object) -> str:
    import json

    return json.dumps(data, ensure_ascii=False) + "\n"


def _fork(text: str) -> str:
    """``-r ID@TURN``: fork session ID before TURN; the new session's id."""
    from datetime import UTC, datetime

    from reasonix_core.agent.session import open_session
    from reasonix_core.checkpoint.rewind import fork, parse_fork
    from reasonix_core.home import reasonix_home

    parsed = parse_fork(text)
    assert parsed is not None
    workspace = Path.cwd().resolve()
    loaded = open_session(reasonix_home() / "sessions", workspace, parsed[0])
    forked = fork(reasonix_home() / "sessions", workspace, loaded, parsed[1], datetime.now(UTC))
    forked.close()
    return forked.id


def _subagent(args: argparse.Namespace) -> int:
    from reasonix_core.home import reasonix_home

    if args.subagent_command == "list":
        from reasonix_core.subagent.command import list_profiles

        for name, kind, description in list_profiles(Path.cwd(), reasonix_home()):
            sys.stdout.write(f"{name}\t{kind}\t{description}\n")
        return EXIT_OK
    _skip_httpx_cli()
    import anyio

    from reasonix_core.session.settings import RunSettings
    from reasonix_core.subagent.command import run_subagent

    if not args.prompt.strip():
        return _fail("the prompt is empty")
    if args.permission_mode == "plan":
        # A child has no plan-approval dialog of its own (docs/MODES.md#plan-mode).
        return _fail("a subagent cannot run in plan mode; use ask, auto or yolo")
    refusal = _untrusted_project()
    if refusal is not None:
        return _fail(refusal.replace(", or pass --trust-project for this run", ""))
    settings = RunSettings(
        workspace=Path.cwd(),
        model=args.model,
        effort=args.effort,
        permission_mode="auto" if getattr(args, "subagent_auto", False) else args.permission_mode,
        add_dirs=list(args.add_dir or []),
        mcp_wait=True,
    )
    outcome = anyio.run(
        functools.partial(
            run_subagent,
            settings,
            args.prompt,
            read_only=args.subagent_command == "try",
            profile=args.subagent_profile,
            write_paths=tuple(args.write_paths) if getattr(args, "write_paths", None) else None,
            model=args.subagent_model,
            effort=args.subagent_effort,
            err=sys.stderr,
        )
    )
    sys.stdout.write(outcome.result.render() + "\n")
    return EXIT_OK if outcome.result.ok else EXIT_FAILED


def _cache(args: argparse.Namespace) -> int:
    import json

    from reasonix_core.agent.cache_report import build_report, render_text
    from reasonix_core.agent.session import open_session, read_request_records
    from reasonix_core.home import reasonix_home

    resume = args.cache_resume or args.resume_id
    if resume and args.cache_continue:
        return _fail("-c and -r name different sessions: give one")
    loaded = open_session(reasonix_home() / "sessions", Path.cwd(), resume)
    report = build_report(loaded.header.id, read_request_records(loaded.store.path))
    if args.cache_json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(report))
    if args.check and report.unexplained:
        if not args.cache_json:
            sys.stderr.write(
                f"reasonix: {report.unexplained} unexplained cache break(s) "
                f"in session {loaded.header.id}\n"
            )
        return EXIT_FAILED
    return EXIT_OK


def _memory(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from reasonix_core.home import reasonix_home
    from reasonix_tui.memory_cli import ACTIONS, run_memory

    if args.memory_command not in ACTIONS:
        parser.parse_args(["memory", "--help"])
    sys.stdout.write(run_memory(args, reasonix_home(), Path.cwd()))
    return EXIT_OK


def _bench(args: argparse.Namespace) -> int:
    """``reasonix bench run|report``: exit 0 when every run solved its task, else 1."""
    from reasonix_core.bench import command

    if args.bench_command == "report":
        command.report(args.dirs, as_json=args.bench_json)
        return EXIT_OK
    return EXIT_OK if command.run(args) else EXIT_FAILED


def _trust(args: argparse.Namespace) -> int:
    from reasonix_core.home import reasonix_home
    from reasonix_core.trust import record_trust, review_project, revoke_trust

    folder = args.path if args.path is not None else Path.cwd()
    if not folder.is_dir():
        return _fail(f"{folder}: not a folder")
    home = reasonix_home()
    if args.revoke:
        if revoke_trust(folder, home):
            sys.stdout.write(f"no longer trusted: {folder.resolve()}\n")
        else:
            sys.stdout.write(f"{folder.resolve()} was not trusted\n")
        return EXIT_OK
    review = review_project(folder, home)
    if not review.risky:
        sys.stdout.write(
            f"nothing to trust in {review.folder}: its project files change no provider, "
            "permission loosening, sandbox loosening or MCP server\n"
        )
        return EXIT_OK
    record_trust(review, home)
    sys.stdout.write(f"trusted {review.folder} with these project settings:\n")
    for setting in review.risky:
        sys.stdout.write(f"  {setting}\n")
    sys.stdout.write("a change to any of them will ask again\n")
    return EXIT_OK


def _tui(args: argparse.Namespace) -> int:
    from reasonix_tui.launch import launch

    add_dirs = _add_dirs(args.add_dir or [])
    if isinstance(add_dirs, str):
        return _fail(add_dirs)
    args.add_dir = add_dirs
    return launch(args)


def _home_inside_project() -> str | None:
    """Why the Reasonix home may not be used from this folder, or None.

    A home inside the folder (``REASONIX_HOME=$PWD/.reasonix`` in a CI job) holds
    files the repository can ship: its ``config.toml`` and ``trusted.toml`` would
    count as the user's own. Working in ``$HOME`` (or above it) is fine: the
    home is the user's there, not the project's."""
    from reasonix_core.fsutil import within
    from reasonix_core.home import reasonix_home

    cwd = os.path.realpath(os.getcwd())
    home = os.path.realpath(reasonix_home())
    user_home = os.path.realpath(os.path.expanduser("~"))

    if within(home, cwd) and not within(user_home, cwd):
        return (
            f"the Reasonix home {home} is inside this folder, so the project could supply "
            "its config and trust; set REASONIX_HOME to a folder outside it"
        )
    return None


def _print_as_run(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``reasonix [global options] -p PROMPT [run options]`` (Claude Code's habit) as
    ``reasonix [global options] run PROMPT [run options]``."""
    commands = {
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    }
    for index, token in enumerate(argv):
        if token in commands or token == "--":
            break
        if token in ("-p", "--print"):
            return [*argv[:index], "run", *argv[index + 1 :]]
        if token.startswith("--print="):
            return [*argv[:index], "run", token.partition("=")[2], *argv[index + 1 :]]
    return argv


def _completion(args: argparse.Namespace) -> int:
    from reasonix_tui.shell_completion import completion_script

    sys.stdout.write(completion_script(args.shell, _parser()))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        # What argparse's version action prints, without building the parser and
        # its every subcommand first: that was most of the command's own time.
        print(VERSION)
        return EXIT_OK
    from reasonix_core.errors import ReasonixError

    parser = _parser()
    args = parser.parse_args(_print_as_run(sys.argv[1:] if argv is None else argv, parser))
    try:
        os.getcwd()
    except FileNotFoundError:
        return _fail("the current directory no longer exists")
    home_env = os.environ.get("REASONIX_HOME", "")
    if home_env and not os.path.isabs(os.path.expanduser(home_env)):
        # A relative home names a folder of whichever project runs: a repository's
        # `.reasonix/config.toml` and `trusted.toml` would count as the user's own.
        return _fail(f"REASONIX_HOME must be an absolute path (got {home_env!r})")
    refusal = _home_inside_project()
    if refusal is not None:
        return _fail(refusal)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "permissions":
            if args.permissions_command != "check":
                parser.parse_args(["permissions", "--help"])
            return _permissions_check(args)
        if args.command == "mcp":
            if args.mcp_command != "list":
                parser.parse_args(["mcp", "--help"])
            return _mcp_list(args)
        if args.command == "config":
            if args.config_command != "compact-ratio":
                parser.parse_args(["config", "--help"])
            return _config_compact_ratio(args)
        if args.command == "compact":
            return _compact(args)
        if args.command == "subagent":
            if args.subagent_command not in ("list", "run", "try"):
                parser.parse_args(["subagent", "--help"])
            return _subagent(args)
        if args.command == "cache":
            return _cache(args)
        if args.command == "trust":
            return _trust(args)
        if args.command == "completion":
            return _completion(args)
        if args.command == "rewind":
            return _rewind(args)
        if args.command == "memory":
            return _memory(args, parser)
        if args.command == "setup":
            from reasonix_core.home import reasonix_home
            from reasonix_tui.setup_cli import run_setup

            sys.stdout.write(run_setup(args, reasonix_home()))
            return EXIT_OK
        if args.command == "goal":
            return _goal(args)
        if args.command == "bench":
            if args.bench_command not in ("run", "report"):
                parser.parse_args(["bench", "--help"])
            return _bench(args)
        return _tui(args)
    except KeyboardInterrupt:
        sys.stderr.write("reasonix: interrupted\n")
        return EXIT_INTERRUPTED
    except ReasonixError as exc:
        return _fail(str(exc))


if __name__ == "__main__":
    sys.exit(main())
