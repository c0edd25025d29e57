"""What several tool tests share: the file tools' names, a sandboxed bash call, and a
context and call for the walking tools (grep, glob, ls)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio

from reasonix_core.permission.policy import Policy
from reasonix_core.tool import ToolRegistry, builtin_tools
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.bash import BashTool
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.sandbox_keeper import SandboxKeeper

# The file tools, in the provider-visible order (the head of the built-in list,
# part of the cached prompt prefix).
FILE_TOOLS = [
    "read_file",
    "write_file",
    "edit_file",
    "multi_edit",
    "move_file",
    "ls",
    "glob",
    "grep",
]


def sandbox_ctx(ws: Path, tmp: Path, **policy: object) -> ToolContext:
    """A tool context whose bash runs under a SandboxPolicy for ``ws`` (``policy`` overrides)."""
    sandbox = SandboxPolicy(workspace=ws, temp_dir=tmp, **policy)  # type: ignore[arg-type]
    return ToolContext(
        env=SessionEnv(workspace=ws, temp_dir=tmp, bash_timeout_seconds=30, sandbox=sandbox)
    )


def kept_sandbox_ctx(keeper: SandboxKeeper, ws: Path, tmp: Path, **policy: object) -> ToolContext:
    """:func:`sandbox_ctx` whose bash runs in ``keeper``'s kept sandbox."""
    sandbox = SandboxPolicy(workspace=ws, temp_dir=tmp, **policy)  # type: ignore[arg-type]
    return ToolContext(
        env=SessionEnv(
            workspace=ws,
            temp_dir=tmp,
            bash_timeout_seconds=30,
            sandbox=sandbox,
            kept_sandboxes=keeper,
        )
    )


async def run_bash(ctx: ToolContext, command: str, **args: object) -> ToolResult:
    """One ``bash`` tool call (``args``: its other parameters, e.g. ``timeout_seconds``)."""
    return await BashTool().execute({"command": command, **args}, ctx)


def policy_for(ws: Path, deny: tuple[str, ...] = (), forbid: tuple[Path, ...] = ()) -> Policy:
    """An ``ask`` policy for ``ws`` with ``deny`` rules and ``forbid`` protected paths."""
    cfg = SimpleNamespace(mode="ask", preset="ask", allow=(), ask=(), deny=deny)
    return Policy.from_config(cfg, ws, forbid_read=forbid)


def walk_ctx(tmp_path: Path, ws: Path, policy: Policy) -> ToolContext:
    """A tool context as the session builds it for the walking tools: the sandbox with
    the policy's protected paths, the policy's ``read_denied``."""
    temp = tmp_path / "session-tmp"
    temp.mkdir(exist_ok=True)
    sandbox = SandboxPolicy(
        workspace=ws, temp_dir=temp, forbid_read=tuple(Path(p) for p in policy.forbid_read)
    )
    return ToolContext(
        env=SessionEnv(workspace=ws, temp_dir=temp, sandbox=sandbox, read_denied=policy.read_denied)
    )


async def call_tool(ctx: ToolContext, name: str, **args: Any) -> Any:
    """Call a built-in tool the way the agent does (JSON arguments through the registry)."""
    return await ToolRegistry(builtin_tools()).call(name, json.dumps(args), ctx)


def kept_pids(keeper: SandboxKeeper) -> list[int]:
    """The host pids of every kept sandbox's bubblewrap and zygote."""
    return [pid for kept in keeper.sandboxes for pid in (kept.bwrap.pid, kept.zygote_pid)]


def running(pid: int) -> bool:
    """True while ``pid`` is a process that is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat.rsplit(b")", 1)[1].split()[0] != b"Z"


async def all_gone(pids: list[int]) -> bool:
    """Poll (30 s at most) until none of ``pids`` runs."""
    with anyio.move_on_after(30):
        while True:
            if not any(running(pid) for pid in pids):
                return True
            await anyio.sleep(0.02)
    return False


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` on the host (through /proc/PID/task/*/children)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                found.append(child)
                pending.append(child)
    return found


def tagged(tag: str) -> list[int]:
    """Host pids whose command line holds ``tag``."""
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
        except OSError:
            continue
        if tag.encode() in cmdline and running(int(entry.name)):
            found.append(int(entry.name))
    return found


async def tag_gone(tag: str) -> bool:
    """Poll (30 s at most) until no running host process has ``tag`` in its command line."""
    with anyio.move_on_after(30):
        while True:
            if not tagged(tag):
                return True
            await anyio.sleep(0.02)
    return False
