"""``reasonix run``: one prompt to the end without the TUI, the answer printed.

Every usage problem is found before anything is built or sent (exit 2); the run's
own outcome is exit 0 or 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonix_core.permission_modes import MODE_CHOICES, mode_arg
from reasonix_tui.claude_flags import (
    FlagProblem,
    InlineMcpConfigs,
    add_claude_code_flags,
    check_claude_code_flags,
    system_prompt,
    tool_overrides,
)
from reasonix_tui.cli_common import (
    EFFORT_HELP,
    EXIT_FAILED,
    EXIT_OK,
    SubParsers,
    absolute_dirs,
    add_settings_option,
    fail,
    skip_httpx_cli,
    untrusted_project,
)

if TYPE_CHECKING:
    from reasonix_core.headless import HeadlessOptions
    from reasonix_core.session.settings import RunSettings
    from reasonix_core.stream_session import StreamOptions

RUN_EXAMPLES = """examples:
  reasonix run "Where is the retry policy configured?"
  git diff | reasonix run "Review this diff for bugs"
  reasonix run --allowed-tools "Edit Bash(pytest:*)" "Fix the failing test"
  reasonix run --output-format json --metrics run.json "Summarise README.md"
  reasonix run --output-format stream-json "List the TODOs"
  reasonix run "/review src/app.py"          a custom command (.reasonix/commands/review.md)
  reasonix run -c "Now add a test for it"
  reasonix -p "Fix the lint" --allowedTools "Read,Bash(ruff:*)" --permission-mode acceptEdits
  reasonix run --input-format stream-json --output-format stream-json < turns.jsonl
"""


def add_run_parser(sub: SubParsers) -> None:
    parser = sub.add_parser(
        "run",
        help="run one prompt headless and exit",
        description="Run one prompt to the end without the TUI, print the answer, and exit "
        "(0 done, 1 the run failed, 2 usage or configuration error).",
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _output_flags(parser)
    _permission_flags(parser)
    _limit_flags(parser)
    _context_flags(parser)
    _session_flags(parser)
    add_claude_code_flags(parser)


def _output_flags(parser: argparse.ArgumentParser) -> None:
    """The prompt, the model answering it and how the answer is printed."""
    parser.add_argument(
        "prompt",
        nargs="?",
        help="the prompt; read from standard input when omitted; piped input beside a "
        "prompt is appended to it (fenced, at most 1 MiB); /command and @path expand",
    )
    parser.add_argument(
        "--model", "-m", dest="run_model", help="provider name, model id or provider/model"
    )
    parser.add_argument("--effort", dest="run_effort", metavar="LEVEL", help=EFFORT_HELP)
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="text (the answer as it streams), json (one result object at the end) or "
        "stream-json (Claude Code's line format, then the result)",
    )
    parser.add_argument(
        "--json",
        dest="output_format",
        action="store_const",
        const="json",
        help="the same as --output-format json",
    )
    parser.add_argument(
        "--metrics", type=Path, metavar="PATH", help="write RunMetrics JSON to PATH"
    )
    parser.add_argument(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="text (the prompt), or stream-json: user messages as JSON lines on standard "
        "input, several turns in one session, and claude-agent-sdk's control protocol "
        "(needs --output-format stream-json)",
    )
    parser.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="with stream-json: also each answer as it streams (Claude Code's stream_event lines)",
    )


def _permission_flags(parser: argparse.ArgumentParser) -> None:
    """Who approves what: the preset and the rules allowed for this run."""
    parser.add_argument(
        "--permission-mode",
        dest="run_permission_mode",
        type=mode_arg,
        choices=MODE_CHOICES,
        help="permission preset (default from config); plan: plan mode, writes blocked, "
        "the plan saved for --approve-plan; Claude Code's default, acceptEdits and "
        "bypassPermissions are ask, auto and yolo",
    )
    parser.add_argument("-y", "--auto", action="store_true", help="same as --permission-mode auto")
    parser.add_argument(
        "--allowed-tools",
        "--allowedTools",
        action="append",
        default=[],
        metavar="RULES",
        help='rules allowed for this run, separated by spaces or commas, e.g. "Bash(pytest:*) '
        'Edit" (repeatable)',
    )
    parser.add_argument(
        "--disallowed-tools",
        "--disallowedTools",
        action="append",
        default=[],
        metavar="RULES",
        help="rules denied for this run (Claude Code's rule grammar, like --allowed-tools)",
    )


def _limit_flags(parser: argparse.ArgumentParser) -> None:
    """Where the run stops: steps, cost, tokens, time."""
    parser.add_argument(
        "--max-steps",
        "--max-turns",
        dest="max_steps",
        type=int,
        metavar="N",
        help="stop after N model requests (--max-turns: Claude Code's name)",
    )
    parser.add_argument(
        "--max-cost", "--max-budget-usd", type=float, metavar="USD", help="stop at a step "
        "boundary once the task has cost USD (every source counted; overrides [agent] "
        "task_cost_budget; --max-budget-usd: Claude Code's name)"
    )  # fmt: skip
    parser.add_argument(
        "--max-tokens", type=int, metavar="N", help="stop at a step boundary once the "
        "task has used N tokens (prompt + output, every source counted)"
    )  # fmt: skip
    parser.add_argument(
        "--max-time", metavar="DURATION", help="stop at a step boundary once the task "
        "has run DURATION (90s, 15m, 1h30m)"
    )  # fmt: skip


def _context_flags(parser: argparse.ArgumentParser) -> None:
    """What the model sees beyond the prompt: system prompt, MCP servers, folders."""
    parser.add_argument(
        "--append-system-prompt",
        default="",
        metavar="TEXT",
        help="add TEXT to the system prompt of a new session (after [agent] "
        "system_prompt_extra); a continued session keeps its own",
    )
    add_settings_option(parser, "run_settings")
    parser.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="a new session's base system prompt instead of Reasonix's own (standing "
        "instructions and --append-system-prompt still follow); empty: Reasonix's own",
    )
    parser.add_argument(
        "--system-prompt-file",
        type=Path,
        metavar="FILE",
        help="the same as --system-prompt, read from FILE",
    )
    parser.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="FILE|JSON",
        help="load MCP servers from FILE, or from the JSON text itself (.mcp.json format; "
        "repeatable; above the config files, no trust needed)",
    )
    parser.add_argument(
        "--workspace",
        type=Path,
        metavar="PATH",
        help="work in PATH instead of the current directory (discovery, write scope)",
    )
    parser.add_argument(
        "--add-dir",
        dest="run_add_dir",
        action="append",
        type=Path,
        metavar="PATH",
        help="let the read tools reach PATH without asking (repeatable; reads only)",
    )


def _session_flags(parser: argparse.ArgumentParser) -> None:
    """Which session runs (new, continued, forked) and what it drives (a plan, a goal)."""
    parser.add_argument(
        "-c",
        "--continue",
        dest="run_continue",
        action="store_true",
        help="continue the newest session of this workspace",
    )
    parser.add_argument(
        "-r", "--resume", dest="run_resume", metavar="ID", help="continue session ID"
    )
    parser.add_argument(
        "--session-id",
        metavar="ID",
        help="start the new session under ID (a UUID, as Claude Code's, or any plain name)",
    )
    parser.add_argument(
        "--ablate",
        action="append",
        default=[],
        metavar="PART",
        help="take PART of the harness away for a comparison arm (subagent: no task, "
        "read_only_task or fleet); metrics name the arm",
    )
    parser.add_argument(
        "--fork-session",
        action="store_true",
        help="with -c or -r ID: run in a new session copied from that one (it stays as it was)",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="apply this folder's risky project settings for this run only (for CI)",
    )
    parser.add_argument(
        "--approve-plan",
        action="store_true",
        help="with -c or -r: execute the plan the session saved for approval (no prompt)",
    )
    parser.add_argument(
        "--goal",
        metavar="OBJECTIVE",
        help="Goal mode: drive OBJECTIVE round by round until complete, blocked or a bound "
        "(exit 0 only when complete; no prompt)",
    )
    parser.add_argument(
        "--max-goal-rounds", type=int, metavar="N", help="with --goal: at most N rounds"
    )
    parser.add_argument(
        "--goal-token-budget", type=int, metavar="N", help="with --goal: stop after N tokens"
    )


class _Refused(Exception):
    """A usage problem found while reading the command line (exit 2, its words)."""


def run_command(args: argparse.Namespace) -> int:
    from reasonix_core.startup_heap import pause_collection, resume_collection

    pause_collection()  # headless resumes it once the runtime is built
    try:
        return _start_run(args)
    finally:
        resume_collection()


def _start_run(args: argparse.Namespace) -> int:
    skip_httpx_cli()
    import anyio

    inline = InlineMcpConfigs()
    try:
        if args.input_format == "stream-json":
            from reasonix_core.stream_session import run_stream_session

            try:
                stream = _stream_options(args, inline)
            except (_Refused, FlagProblem) as exc:
                return fail(str(exc))
            ok = anyio.run(run_stream_session, stream)
        else:
            from reasonix_core.headless import run_headless

            try:
                options = _options(args, inline)
            except (_Refused, FlagProblem) as exc:
                return fail(str(exc))
            ok = anyio.run(run_headless, options).ok
    finally:
        inline.remove()
    return EXIT_OK if ok else EXIT_FAILED


def _stream_options(args: argparse.Namespace, inline: InlineMcpConfigs) -> StreamOptions:
    """--input-format stream-json: the session's turns come as JSON lines on stdin."""
    from reasonix_core.stream_session import StreamOptions

    if args.output_format != "stream-json":
        raise _Refused("--input-format stream-json needs --output-format stream-json")
    if args.prompt is not None:
        raise _Refused("--input-format stream-json takes no prompt: user messages come on stdin")
    for flag, given in (
        ("--goal", args.goal is not None),
        ("--approve-plan", args.approve_plan),
        ("--metrics", args.metrics is not None),
    ):
        if given:
            raise _Refused(
                f"{flag} cannot be used with --input-format stream-json "
                "(each turn's result line carries its metrics)"
            )
    return StreamOptions(
        settings=_settings(args, inline),
        partial=args.include_partial_messages,
        ask_program=args.permission_prompt_tool == "stdio",
        overrides=tool_overrides(args.tools),
    )


def _options(args: argparse.Namespace, inline: InlineMcpConfigs) -> HeadlessOptions:
    from reasonix_core.headless import HeadlessOptions

    _plan_and_goal_flags(args)
    prompt = _prompt(args)
    return HeadlessOptions(
        prompt=prompt,
        settings=_settings(args, inline),
        output_format=args.output_format,
        metrics_path=args.metrics,
        approve_plan=args.approve_plan,
        goal=args.goal is not None,
        max_goal_rounds=args.max_goal_rounds,
        goal_token_budget=args.goal_token_budget,
        partial_messages=args.include_partial_messages,
        overrides=tool_overrides(args.tools),
    )


def _plan_and_goal_flags(args: argparse.Namespace) -> None:
    """--approve-plan and --goal stand for the prompt: check them, and set it."""
    if args.approve_plan:
        # The approval is this flag, never a prompt's wording (docs/MODES.md).
        if not (args.run_continue or args.continue_last or args.run_resume or args.resume_id):
            raise _Refused("--approve-plan needs -c or -r ID (the session holding the plan)")
        if args.prompt is not None:
            raise _Refused("--approve-plan takes no prompt: it executes the saved plan")
        if "plan" in (args.run_permission_mode, args.permission_mode):
            raise _Refused("--approve-plan executes the plan: it cannot run in plan mode")
        args.prompt = ""
    if args.goal is not None:
        if args.prompt is not None:
            raise _Refused("--goal takes no prompt: the objective is the goal")
        if not args.goal.strip():
            raise _Refused("--goal needs an objective")
        args.prompt = args.goal
    elif args.max_goal_rounds is not None or args.goal_token_budget is not None:
        raise _Refused("--max-goal-rounds and --goal-token-budget need --goal")
    for flag, value in (
        ("--max-goal-rounds", args.max_goal_rounds),
        ("--goal-token-budget", args.goal_token_budget),
    ):
        if value is not None and value < 1:
            raise _Refused(f"{flag} must be at least 1")


def _prompt(args: argparse.Namespace) -> str:
    """The prompt argument, standard input, or both (the piped text appended, fenced)."""
    from reasonix_core.command.piped import PIPED_INPUT_CAP, cap_words, with_piped_input

    prompt = args.prompt
    if prompt is not None and not _utf8(prompt):
        raise _Refused("the prompt is not valid UTF-8")
    if prompt is None and (sys.stdin is None or sys.stdin.isatty()):
        raise _Refused("no prompt: pass it as an argument or on standard input")
    data = _read_stdin(PIPED_INPUT_CAP) if prompt is None or _stdin_is_piped() else b""
    if len(data) > PIPED_INPUT_CAP:
        raise _Refused(
            f"standard input is larger than {cap_words()}; pass a smaller part, "
            "or name the file in the prompt as @path"
        )
    try:
        piped = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused("standard input is not valid UTF-8") from None
    # `git diff | reasonix run "Review this diff"`: the diff follows the prompt, fenced.
    prompt = piped if prompt is None else with_piped_input(prompt, piped)
    if not prompt.strip() and not args.approve_plan:
        raise _Refused("the prompt is empty")
    return prompt


def _settings(args: argparse.Namespace, inline: InlineMcpConfigs) -> RunSettings:
    from reasonix_core.session.settings import RunSettings

    check_claude_code_flags(args)
    if args.include_partial_messages and args.output_format != "stream-json":
        raise _Refused("--include-partial-messages needs --output-format stream-json")

    if args.max_steps is not None and args.max_steps < 1:
        raise _Refused("--max-steps must be at least 1")
    budgets = _budget_flags(args)
    if isinstance(budgets, str):
        raise _Refused(budgets)
    problem = (
        _rules_problem("--allowed-tools", args.allowed_tools)
        or _rules_problem("--disallowed-tools", args.disallowed_tools)
        or _metrics_problem(args.metrics)
    )
    if problem:
        raise _Refused(problem)
    mode = args.run_permission_mode or args.permission_mode
    # Plan mode is not a preset: it blocks writers whatever the preset (-y too).
    plan_mode = mode == "plan"
    if plan_mode:
        mode = None
    if args.auto:
        mode = "auto"
    workspace = _workspace(args)
    add_dirs = absolute_dirs([*(args.add_dir or []), *(args.run_add_dir or [])])
    if isinstance(add_dirs, str):
        raise _Refused(add_dirs)
    # `is not None`, not `or`: `-r ""` is an (empty, refused) id, never "no resume".
    resume = args.run_resume if args.run_resume is not None else args.resume_id
    fork_session = args.fork_session
    if fork_session and not (args.run_continue or args.continue_last or resume):
        raise _Refused("--fork-session needs -c or -r ID (the session to copy)")
    if resume and "@" in resume:
        resume = _fork(resume)  # -r ID@TURN: run in a new session forked from the turn
        fork_session = False  # that is a fork already
    return RunSettings(
        workspace=workspace,
        model=args.run_model or args.model,
        effort=args.run_effort or args.effort,
        permission_mode=mode,
        allowed_tools=_split_rules(args.allowed_tools),
        disallowed_tools=_split_rules(args.disallowed_tools),
        max_steps=args.max_steps,
        continue_last=args.run_continue or args.continue_last,
        resume_id=resume,
        fork_session=fork_session,
        ablate=_ablations(args.ablate),
        trust_project=args.trust_project,
        add_dirs=add_dirs,
        append_system_prompt=args.append_system_prompt,
        mcp_config=inline.paths(args.mcp_config),
        system_prompt=system_prompt(args),
        session_id=args.session_id,
        settings_files=[*(getattr(args, "settings", None) or []), *(args.run_settings or [])],
        **budgets,
        plan_mode=plan_mode,
    )


def _workspace(args: argparse.Namespace) -> Path:
    """--workspace (or here), once its MCP files exist and its project is trusted."""
    workspace = Path.cwd()
    if args.workspace is not None:
        workspace = args.workspace.expanduser().absolute()
        if not workspace.is_dir():
            raise _Refused(f"--workspace {args.workspace}: not a directory")
    if not args.trust_project:
        refusal = untrusted_project(workspace)
        if refusal is not None:
            raise _Refused(refusal)
    return workspace


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


def _split_rules(values: list[str]) -> list[str]:
    # The one rule splitter is the core's: a CLI copy split `Bash=echo a b` in three.
    # Each value on its own: a `Tool=<literal>` rule takes the rest of its value only.
    from reasonix_core.permission.rules import split_rules

    return [rule for text in values for rule in split_rules(text)]


def _rules_problem(flag: str, values: list[str]) -> str | None:
    from reasonix_core.permission import RuleError, parse_rule

    for rule in _split_rules(values):
        try:
            parse_rule(rule)
        except RuleError as exc:
            return f"{flag}: {exc}"
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


def _ablations(parts: list[str]) -> tuple[str, ...]:
    from reasonix_core.session.settings import ABLATIONS

    for part in parts:
        if part not in ABLATIONS:
            raise _Refused(f"--ablate {part!r}: one of {', '.join(ABLATIONS)}")
    return tuple(sorted(set(parts)))


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
