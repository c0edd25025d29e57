"""Claude Code's spellings on ``reasonix run`` (and the command line
claude-agent-sdk builds): the flags that mean nothing more here, and the checks
and mappings of the ones that do (docs/CLI.md#claude-codes-flags).

Every value is checked before anything is built or sent: a flag Reasonix cannot
honour is a usage error naming it (exit 2), never silently dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

#: What ``--setting-sources`` may list (Claude Code's settings layers).
SETTING_SOURCES = ("user", "project", "local")
# A session id given with --session-id: a plain name (a UUID is one), never a path.
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def add_claude_code_flags(parser: argparse.ArgumentParser) -> None:
    """The flags Claude Code's command line passes that change nothing here, or
    only say what is already so (why each is harmless: docs/CLI.md)."""
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="accepted (Claude Code needs it with stream-json; Reasonix's stream-json is "
        "always complete)",
    )
    parser.add_argument(
        "--permission-prompt-tool",
        metavar="stdio",
        help="stdio: ask the program driving --input-format stream-json (claude-agent-sdk's "
        "can_use_tool) when a call needs approval; other values are refused",
    )
    parser.add_argument(
        "--setting-sources",
        metavar="LIST",
        help="accepted (user, project, local) and ignored: Reasonix reads its own config "
        "layers, the project's once trusted",
    )
    parser.add_argument(
        "--include-hook-events",
        action="store_true",
        help="accepted: claude-agent-sdk's hooks are not run here, so there are no hook "
        "events to include",
    )
    parser.add_argument(
        "--tools",
        metavar="LIST",
        help="the built-in tools offered, e.g. \"Read,Grep,Glob\" (Claude Code's names or "
        "Reasonix's; replaces [tools] enabled); default: all of them",
    )


class FlagProblem(Exception):
    """A Claude Code flag this run cannot honour (its one-line usage error)."""


def check_claude_code_flags(args: argparse.Namespace) -> None:
    """FlagProblem for a value Reasonix cannot honour."""
    prompt_tool = args.permission_prompt_tool
    if prompt_tool is not None and prompt_tool != "stdio":
        raise FlagProblem(
            f"--permission-prompt-tool {prompt_tool}: only stdio (the program driving "
            "--input-format stream-json) can approve calls; an MCP tool cannot"
        )
    if prompt_tool == "stdio" and args.input_format != "stream-json":
        raise FlagProblem("--permission-prompt-tool stdio needs --input-format stream-json")
    if args.setting_sources is not None:
        unknown = [
            name
            for name in args.setting_sources.split(",")
            if name.strip() and name.strip() not in SETTING_SOURCES
        ]
        if unknown:
            raise FlagProblem(
                f"--setting-sources: unknown source {unknown[0]!r} "
                f"(choose from {', '.join(SETTING_SOURCES)})"
            )
    if args.session_id is not None:
        _check_session_id(args)


def _check_session_id(args: argparse.Namespace) -> None:
    from reasonix_core.home import reasonix_home

    session_id = args.session_id
    if not _SESSION_ID.fullmatch(session_id):
        raise FlagProblem(f"--session-id {session_id!r}: not a plain name (letters, digits, . _ -)")
    if args.run_continue or args.continue_last or args.run_resume or args.resume_id:
        raise FlagProblem("--session-id names a new session: it cannot be given with -c or -r")
    if any((reasonix_home() / "sessions").glob(f"*/{session_id}.jsonl")):
        raise FlagProblem(f"--session-id {session_id}: a session with this id already exists")


def tool_overrides(text: str | None) -> dict[str, list[str]]:
    """``--tools`` as the config override it is (``tools.enabled``): Claude Code's
    tool names mapped to Reasonix's built-ins; ``default`` (the SDK's claude_code
    preset) or no flag: the config's own set."""
    if text is None or text.strip() == "default":
        return {}
    from reasonix_core.permission.rules import canonical_tool, family_of, split_rules

    names = split_rules(text)
    if not names:
        raise FlagProblem(
            "--tools with no tool: a session without tools is not supported; "
            "deny what must not run with --disallowed-tools"
        )
    enabled: list[str] = []
    for name in names:
        tools = _SPECIAL_TOOLS.get(name) or family_of(canonical_tool(name))
        if tools is None:
            raise FlagProblem(f"--tools: {name!r} is not a tool Reasonix has")
        enabled.extend(sorted(tools))
    return {"tools.enabled": list(dict.fromkeys(enabled))}


# Claude Code's tool names whose Reasonix tool is not found by the rule grammar.
_SPECIAL_TOOLS: dict[str, frozenset[str]] = {
    "Skill": frozenset({"run_skill"}),
    "LS": frozenset({"ls"}),
}


def system_prompt(args: argparse.Namespace) -> str | None:
    """``--system-prompt`` or ``--system-prompt-file``'s text (None: Reasonix's own)."""
    if args.system_prompt is not None and args.system_prompt_file is not None:
        raise FlagProblem("--system-prompt and --system-prompt-file: give one of them")
    if args.system_prompt_file is None:
        return args.system_prompt
    path: Path = args.system_prompt_file
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise FlagProblem(f"--system-prompt-file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FlagProblem(f"--system-prompt-file {path}: cannot be read ({exc})") from None


class InlineMcpConfigs:
    """``--mcp-config`` values: files, or the JSON text itself (what claude-agent-sdk
    passes), which is written to a private file the session reads like any other
    (it may hold tokens: 0600 in a 0700 folder) and removed after the run."""

    def __init__(self) -> None:
        self._folder: Path | None = None

    def paths(self, values: list[str]) -> list[Path]:
        out: list[Path] = []
        for index, value in enumerate(values):
            if value.lstrip().startswith("{"):
                out.append(self._write(index, value))
                continue
            path = Path(value).expanduser().absolute()
            if not path.is_file():
                raise FlagProblem(f"--mcp-config {value}: no such file")
            out.append(path)
        return out

    def _write(self, index: int, text: str) -> Path:
        try:
            declared = json.loads(text)
        except ValueError as exc:
            raise FlagProblem(f"--mcp-config: the JSON text is not valid JSON ({exc})") from None
        servers = declared.get("mcpServers") if isinstance(declared, dict) else None
        if not isinstance(servers, dict):
            raise FlagProblem('--mcp-config: the JSON text has no "mcpServers" object')
        for name, server in servers.items():
            if isinstance(server, dict) and server.get("type") == "sdk":
                raise FlagProblem(
                    f"--mcp-config: server {name!r} is an in-process SDK server (type sdk), "
                    "which Reasonix cannot call; run it as a stdio or HTTP MCP server"
                )
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="reasonix-mcp-config-"))
        path = self._folder / f"inline-{index}.mcp.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(declared, fh)
        return path

    def remove(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
