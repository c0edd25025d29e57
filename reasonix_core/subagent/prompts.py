"""What a child is told: its system prompt and the completion contract.

Seed 000 §3.13: the default task prompt, the read-only prompt, or the
profile's body, and nothing else (no REASONIX.md / AGENTS.md, no memory, no
parent conversation). Fixed text, so children of one profile share a
byte-identical prefix and hit the provider's cache.
"""

from __future__ import annotations

DEFAULT_TASK_PROMPT = """\
You are a Reasonix subagent: a coding agent given one task by another agent.
You see only the task below; nothing of the conversation that produced it.

How to work:
- Read the relevant files (read_file, ls, glob, grep) before changing anything.
- Make the smallest correct change with the file tools. Write only the paths you
  were given; writes elsewhere are refused.
- Verify with the project's tests or a command that shows the change works.
- A tool error is information: read it, adjust, continue.
- Finish by calling complete_subtask once, then answer in a few sentences.
"""

DEFAULT_READ_ONLY_PROMPT = """\
You are a Reasonix read-only subagent: an investigator given one question by another agent.
You see only the task below; nothing of the conversation that produced it.

How to work:
- Read, list and search files (read_file, ls, glob, grep); you cannot change anything.
- Independent reads may go in one response: they run together.
- Answer with what you found: the facts, the file paths and line numbers that
  support them, and what you could not establish. Be concise; your answer is all
  the other agent sees.
"""

COMPLETION_CONTRACT = """\
<completion-contract>
When you are done (or cannot continue), call complete_subtask once with:
- status: complete, partial, blocked or failed;
- summary: what you did;
- acceptance_criteria: each criterion the task asked for, with evidence the host can
  check: {"kind": "verification", "command": "<a command you ran with bash, exactly>"},
  {"kind": "diff" or "files", "paths": ["<paths you wrote>"]}, or {"kind": "manual"}
  (which proves nothing by itself);
- unresolved: what is left.
The host checks each item against what it saw you run and write; anything it cannot
confirm becomes unsatisfied. Then answer briefly.
</completion-contract>"""


def run_options_block(plan_mode: bool, language: str) -> str:
    """The run options a child is told (seed 000 §3.13), "" when none is set: the
    parent's plan mode and the configured language, never anything else."""
    lines: list[str] = []
    if plan_mode:
        lines.append(
            "plan-mode: on. The user is reviewing a plan before anything changes: "
            "investigate and report; do not modify files or run commands that do."
        )
    if language:
        lines.append(f"language: think and answer in {language}.")
    if not lines:
        return ""
    return "<run-options>\n" + "\n".join(lines) + "\n</run-options>"


def subagent_context(depth: int, max_depth: int) -> str:
    """The delegation note on a nested child's fresh session (seed 000 §3.13):
    where it sits, so it neither expects the caller's context nor delegates past
    the limit. Fixed per depth: children at one depth share it."""
    further = (
        "you may delegate further"
        if depth < max_depth
        else "you cannot delegate further (the depth limit)"
    )
    return (
        "<subagent-context>\n"
        f"You were delegated this task by another subagent (depth {depth} of {max_depth}); "
        f"{further}.\n"
        "</subagent-context>"
    )
