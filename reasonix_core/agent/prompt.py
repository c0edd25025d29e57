"""The stable system prompt and the standing instructions loaded into it.

Everything here is built once per session and frozen: no timestamps, no session
ids, nothing that changes between requests. Volatile context goes in the user
turn instead (see :func:`workspace_context`).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path

from reasonix_core.agent.instructions import load_instructions

__all__ = ["build_system_prompt", "language_instruction", "load_instructions", "workspace_context"]


BASE_PROMPT = """\
You are Reasonix, a coding agent working in the user's terminal, inside their project.

How to work:
- Understand before you change: read the relevant files (read_file, ls, glob, grep) first.
- Make the smallest correct change. Edit files with the file tools, not with shell redirection.
  Structured edits require that you have read the current version of a file.
- Verify your work: run the project's tests or the command that shows the change works.
- Tool calls in one response run in order; independent read-only calls may run together.
- A tool error is information: read it, adjust, and continue. Do not repeat a call that was
  denied; choose another approach or ask the user.
- When you are done, answer briefly: what you changed, how you verified it, and anything left.
- Be direct and concise. Use Markdown for code and paths.
"""


# Names the model reads for the common codes; any other value is written as given
# ("Japanese", "pt-BR"): the config validates it is one short line.
LANGUAGE_NAMES = {
    "en": "English",
    "zh": "Chinese (Simplified)",
    "zh-cn": "Chinese (Simplified)",
    "zh-tw": "Chinese (Traditional)",
    "ja": "Japanese",
    "ko": "Korean",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "ru": "Russian",
}


def language_instruction(reasoning_language: str) -> str:
    """The system prompt's language line for ``[agent] reasoning_language``:
    ``auto`` follows the user's prompt; a value fixes the language for the session
    (written once at session start, frozen with the rest of the prompt)."""
    value = reasoning_language.strip()
    if not value or value.lower() == "auto":
        return (
            "Language: think and answer in the language of the user's latest message; "
            "keep code, identifiers, paths and commands as they are."
        )
    name = LANGUAGE_NAMES.get(value.lower(), value)
    return (
        f"Language: think and answer in {name}, whatever language the user writes in; "
        "keep code, identifiers, paths and commands as they are."
    )


def build_system_prompt(
    workspace: Path,
    home: Path | None = None,
    extra: str = "",
    protected: Iterable[Path | str] = (),
    denied: Callable[[str], bool] | None = None,
    skills_index: str = "",
    reasoning_language: str = "auto",
    instructions: Sequence[tuple[str, str]] | None = None,
    base: str = BASE_PROMPT,
) -> str:
    """``skills_index``: the session's skills index (reasonix_core/skills/index.py),
    last, so a session with skills shares every earlier byte with one without.
    ``instructions``: the standing instructions the session gathered (with the
    outside imports the user approved); None: read them here, none approved.
    ``base``: the agent's role and rules (``--system-prompt`` replaces them)."""
    parts = [base.rstrip(), language_instruction(reasoning_language)]
    if extra.strip():
        parts.append(extra.strip())
    if instructions is None:
        instructions = load_instructions(workspace, home, protected, denied)
    for label, text in instructions:
        parts.append(f"# Standing instructions from {label}\n\n{text}")
    if skills_index:
        parts.append(skills_index)
    return "\n\n".join(parts) + "\n"


def workspace_context(workspace: Path, now: datetime) -> str:
    """Volatile facts appended to the first user turn of a session, never the prefix."""
    return (
        "<workspace-context>\n"
        f"workspace: {workspace}\n"
        f"platform: {platform.system()} {platform.release()}\n"
        f"date: {now.date().isoformat()}\n"
        "</workspace-context>"
    )
