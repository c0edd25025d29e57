"""The shell tools' specs: bash and its background jobs."""

from __future__ import annotations

from typing import Any

from reasonix_core.tool.base import ToolFamily
from reasonix_core.tool.builtin.specs.base import ToolSpec

# Limits the descriptions and schemas state; the tools' code imports them from here.
MAX_TIMEOUT_SECONDS = 600


JOB_ID_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {
            "type": "string",
            "description": 'The id returned by bash with run_in_background=true, e.g. "bash_1".',
        }
    },
    "required": ["job_id"],
    "additionalProperties": False,
}


BASH = ToolSpec(
    name="bash",
    description="""\
Run a shell command with bash in the workspace root and return its combined stdout and stderr plus the exit code.

- Each call is a fresh non-interactive shell: `cd`, variables and functions do not carry over between calls, and stdin is empty, so never run commands that wait for input (use flags like `-y`, `--no-edit`, `CI=1`).
- Prefer the dedicated tools: read_file instead of cat/head/tail, grep and glob instead of grep/find/ls, edit_file and write_file instead of sed/awk/echo redirection. Use bash for builds, tests, git, package managers and other programs.
- The command usually runs in a sandbox: the filesystem is read-only except the workspace and the session temp dir ($TMPDIR), some paths may be hidden, and network access may be disabled. A "Read-only file system" or network error means the sandbox blocked it; do not try to work around it.
- Only when a command must write to an existing folder outside the workspace (a sibling checkout, a shared build cache), list it in additional_write_dirs with a justification: the user grants or refuses it (unattended runs refuse unless the user configured the folder). It applies to this call only.
- Foreground commands are killed after timeout_seconds (default from configuration, at most 600). Processes a command leaves running are stopped when it finishes.
- For servers, watchers and other long-running commands, set run_in_background=true: you get a job id; read its output with bash_output and stop it with kill_shell.
- Long output is truncated to its beginning and end; pipe through `tail`, `head` or `grep` to see what matters.
- Quote paths containing spaces. Chain dependent commands with `&&`.""",
    read_only=False,
    family=ToolFamily.EXECUTE,
    parameters={
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The bash command line to run."},
            "timeout_seconds": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT_SECONDS,
                "description": "Kill the command after this many seconds (foreground only).",
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Start the command as a background job and return its job id at once.",
            },
            "additional_write_dirs": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Existing folders outside the workspace this command must write; asks the user. Needs justification.",
            },
            "justification": {
                "type": "string",
                "description": "Why the command must write to additional_write_dirs (shown to the user).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.bash:BashTool",
)


BASH_OUTPUT = ToolSpec(
    name="bash_output",
    description="Read the output a background bash job produced since the previous bash_output "
    "call, with its status (running, exited N, killed). Returns immediately; it does "
    "not wait for the job. Output beyond the buffer limit is dropped oldest-first.",
    read_only=True,
    family=ToolFamily.EXECUTE,
    parameters=JOB_ID_SCHEMA,
    implementation="reasonix_core.tool.builtin.bash_output:BashOutputTool",
)


KILL_SHELL = ToolSpec(
    name="kill_shell",
    description="Stop a background bash job and every process it started, and return its "
    "remaining unread output. Killing a job that already finished just reports its status.",
    read_only=False,
    family=ToolFamily.EXECUTE,
    parameters=JOB_ID_SCHEMA,
    implementation="reasonix_core.tool.builtin.kill_shell:KillShellTool",
)
