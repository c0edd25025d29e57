"""The ``reasonix`` entry point.

Only the CLI chooses exit codes (0 ok, 1 the run failed, 2 usage or
configuration error) and the words a user sees for an error. It imports
textual only when it launches the TUI: ``reasonix --version`` and
``reasonix run`` never load it. Each subcommand's flags and its command live
together in a ``cli_*`` module; this one assembles the parser and dispatches.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from reasonix_core import __version__
from reasonix_core.permission_modes import MODE_CHOICES, mode_arg
from reasonix_tui import (
    cli_acp,
    cli_bench,
    cli_mcp,
    cli_run,
    cli_sessions,
    cli_settings,
    cli_subagent,
)
from reasonix_tui.cli_common import (
    EFFORT_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    Parser,
    SubParsers,
    absolute_dirs,
    add_settings_option,
    fail,
)

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


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
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
        type=mode_arg,
        choices=MODE_CHOICES,
        help="permission preset; plan: start in plan mode (writes wait for the plan's "
        "approval); Claude Code's default, acceptEdits and bypassPermissions are ask, auto "
        "and yolo",
    )
    parser.add_argument(
        "--add-dir",
        dest="add_dir",
        action="append",
        type=Path,
        metavar="PATH",
        help="let the read tools reach PATH without asking (repeatable; reads only)",
    )
    add_settings_option(parser, "settings")
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_last",
        action="store_true",
        help="continue the newest session of this workspace",
    )
    parser.add_argument("-r", "--resume", dest="resume_id", metavar="ID", help="resume session ID")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    cli_run.add_run_parser(sub)
    cli_sessions.add_goal_parser(sub)
    cli_settings.add_trust_parser(sub)
    cli_settings.add_permissions_parser(sub)
    cli_mcp.add_mcp_parser(sub)
    cli_settings.add_config_parser(sub)
    cli_subagent.add_subagent_parser(sub)
    _add_completion_parser(sub)
    cli_sessions.add_compact_parser(sub)
    cli_sessions.add_rewind_parser(sub)
    cli_sessions.add_cache_parser(sub)
    from reasonix_tui.memory_cli import add_memory_parser

    add_memory_parser(sub)
    from reasonix_tui.setup_cli import add_setup_parser

    add_setup_parser(sub)
    cli_bench.add_bench_parser(sub)
    cli_acp.add_acp_parser(sub)
    # Imported here, not at the top: `reasonix --version` never builds the parser.
    from reasonix_tui.cli_serve import add_serve_parser

    add_serve_parser(sub)
    return parser


def _add_completion_parser(sub: SubParsers) -> None:
    completion = sub.add_parser(
        "completion", help="print a shell completion script (bash, zsh or fish)"
    )
    completion.add_argument(
        "shell",
        choices=("bash", "zsh", "fish"),
        help='the shell; e.g. eval "$(reasonix completion bash)" in ~/.bashrc',
    )


def _tui(args: argparse.Namespace) -> int:
    from reasonix_tui.launch import launch

    add_dirs = absolute_dirs(args.add_dir or [])
    if isinstance(add_dirs, str):
        return fail(add_dirs)
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
    for token in argv:
        if token in commands or token == "--":
            break
        if token.partition("=")[0] in _PRINT_MODE_FLAGS:
            # `claude --output-format stream-json --input-format stream-json ...`, the
            # command line claude-agent-sdk runs: Claude Code's print mode is `run`
            # (whose parser takes the global options too).
            return ["run", *argv]
    return argv


# Flags only Claude Code's print mode takes: given without a command, they mean `run`.
_PRINT_MODE_FLAGS = ("--output-format", "--input-format")


def _completion(args: argparse.Namespace) -> int:
    from reasonix_tui.shell_completion import completion_script

    sys.stdout.write(completion_script(args.shell, _parser()))
    return EXIT_OK


def _memory_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from reasonix_core.home import reasonix_home
    from reasonix_tui.memory_cli import ACTIONS, run_memory

    if args.memory_command not in ACTIONS:
        parser.parse_args(["memory", "--help"])
    sys.stdout.write(run_memory(args, reasonix_home(), Path.cwd()))
    return EXIT_OK


def _serve_command(args: argparse.Namespace) -> int:
    from reasonix_tui.cli_serve import serve_command

    return serve_command(args)


def _setup_command(args: argparse.Namespace) -> int:
    from reasonix_core.home import reasonix_home
    from reasonix_tui.setup_cli import run_setup

    sys.stdout.write(run_setup(args, reasonix_home()))
    return EXIT_OK


Command = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, Command] = {
    "run": cli_run.run_command,
    "permissions": cli_settings.permissions_command,
    "mcp": cli_mcp.mcp_command,
    "config": cli_settings.config_command,
    "compact": cli_sessions.compact_command,
    "subagent": cli_subagent.subagent_command,
    "cache": cli_sessions.cache_command,
    "trust": cli_settings.trust_command,
    "completion": _completion,
    "rewind": cli_sessions.rewind_command,
    "setup": _setup_command,
    "goal": cli_sessions.goal_command,
    "bench": cli_bench.bench_command,
    "acp": cli_acp.acp_command,
    "serve": _serve_command,
}
# A command whose action is missing or unknown prints its help (and exits 0).
NEEDS_ACTION: dict[str, tuple[str, tuple[str, ...]]] = {
    "permissions": ("permissions_command", ("check",)),
    "mcp": ("mcp_command", cli_mcp.ACTIONS),
    "config": ("config_command", ("compact-ratio",)),
    "subagent": ("subagent_command", ("list", "run", "try")),
    "bench": ("bench_command", ("run", "report")),
}


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        # What argparse's version action prints, without building the parser and
        # its every subcommand first: that was most of the command's own time.
        print(VERSION)
        return EXIT_OK
    from reasonix_core.errors import ReasonixError, SessionBusy
    from reasonix_core.home import secure_home

    parser = _parser()
    args = parser.parse_args(_print_as_run(sys.argv[1:] if argv is None else argv, parser))
    try:
        os.getcwd()
    except FileNotFoundError:
        return fail("the current directory no longer exists")
    home_env = os.environ.get("REASONIX_HOME", "")
    if home_env and not os.path.isabs(os.path.expanduser(home_env)):
        # A relative home names a folder of whichever project runs: a repository's
        # `.reasonix/config.toml` and `trusted.toml` would count as the user's own.
        return fail(f"REASONIX_HOME must be an absolute path (got {home_env!r})")
    refusal = _home_inside_project()
    if refusal is not None:
        return fail(refusal)
    secure_home()  # sessions hold code and conversations: 0700 / 0600 (home.py)
    try:
        return _dispatch(args, parser)
    except KeyboardInterrupt:
        sys.stderr.write("reasonix: interrupted\n")
        return EXIT_INTERRUPTED
    except SessionBusy as exc:  # the command was right; the session was not free
        return fail(str(exc), EXIT_FAILED)
    except ReasonixError as exc:
        return fail(str(exc))


def _dispatch(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.command == "memory":
        return _memory_command(args, parser)
    if args.command in NEEDS_ACTION:
        attribute, known = NEEDS_ACTION[args.command]
        if getattr(args, attribute) not in known:
            parser.parse_args([args.command, "--help"])
    return COMMANDS.get(args.command, _tui)(args)


if __name__ == "__main__":
    sys.exit(main())
