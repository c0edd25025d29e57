"""What the model is told about each built-in tool, in provider-visible order.

One :class:`ToolSpec` per tool: name, description, argument schema, read-only flag,
family and where its code lives; their order is ``BUILTIN_TOOLS`` in
:mod:`reasonix_core.tool.builtin`. The registry builds the first request's tool list
from these alone; a tool's module (its argument model, its helpers) is imported by its
first call (:class:`reasonix_core.tool.registry.LazyTool`), so a run does not pay for
the tools it never calls. Each tool class reads its own entry from here: this is the
one place a tool's prompt-visible text is written, and changing it changes the
prompt-cache prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reasonix_core.tool.base import ToolFamily


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """What the model sees of a built-in tool, and where its code is."""

    name: str
    description: str
    read_only: bool
    family: ToolFamily
    parameters: dict[str, Any]
    # "module:Class", imported by the tool's first call.
    implementation: str
    # Argument keys naming the paths this tool writes: declared by path-aware
    # writers, which a subagent's write claim can bind (seed 000 §3.12). A
    # writer that declares none cannot be bound and is dropped from a child.
    writes: tuple[str, ...] = ()


class SpecifiedTool:
    """Base of the built-in tools: what the model sees comes from the tool's
    :class:`ToolSpec` (``class Ls(SpecifiedTool, spec=LS)``), written once in this
    module, where :class:`~reasonix_core.tool.registry.LazyTool` reads it too."""

    # Set on the class from the spec; declared as instance attributes so that the
    # class satisfies the Tool protocol (whose members are instance attributes).
    name: str
    description: str
    read_only: bool
    family: ToolFamily
    parameters: dict[str, Any]

    def __init_subclass__(cls, *, spec: ToolSpec, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = spec.name
        cls.description = spec.description
        cls.read_only = spec.read_only
        cls.family = spec.family
        cls.parameters = spec.parameters


# Limits the descriptions and schemas state; the tools' code imports them from here.
MAX_EDITS = 100
MAX_ENTRIES = 1000
MAX_RESULTS = 500
MAX_LINE_CHARS = 500
MAX_MATCHES = 200
MAX_OUTPUT_BYTES = 64 * 1024
MAX_TIMEOUT_SECONDS = 600
MAX_TODOS = 50
STATUSES = ("pending", "in_progress", "completed")
HISTORY_MAX_LIMIT = 30
MEMORY_MAX_LIMIT = 100
MAX_CONTENT = 4000
MAX_KEYWORDS = 8
MAX_TITLE = 120

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


READ_FILE = ToolSpec(
    name="read_file",
    description="Read a text file and return its lines numbered like `cat -n` (line number, tab, "
    "text). Use this instead of cat/head/tail. By default returns up to 2000 lines from "
    "the start; for longer files pass `offset` (1-based line to start at) and `limit` "
    "(number of lines) to read another window - the output ends with the offset to "
    "continue from. Lines longer than 2000 characters are truncated. Handles UTF-8 "
    "(with or without BOM), UTF-16 and GB18030; refuses binary files and directories "
    "(use ls for directories). Reading any window of a file is what allows edit_file, "
    "multi_edit and write_file to change it afterwards. When copying text into "
    "old_string, never include the line-number prefix.",
    read_only=True,
    family=ToolFamily.READ,
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read, relative to the workspace or absolute.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "1-based line number to start at (default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of lines to return (default 2000).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.read_file:ReadFile",
)


WRITE_FILE = ToolSpec(
    name="write_file",
    description="Write a whole file: create it (missing parent directories are created) or replace "
    "the entire content of an existing one. To overwrite an existing file you must have "
    "read it in this session (any read_file window counts) and it must not have changed "
    "on disk since; otherwise the call fails with FS_NOT_OBSERVED or FS_STALE_VERSION "
    "and you should read it again. Prefer edit_file or multi_edit for changing part of "
    "a file. Only paths inside the workspace (or the session temp dir / configured "
    "writable roots) can be written. An existing file keeps its encoding and CRLF line "
    "endings.",
    read_only=False,
    family=ToolFamily.EDIT,
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to write, relative to the workspace or absolute.",
            },
            "content": {
                "type": "string",
                "description": "The complete new content of the file.",
            },
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.write_file:WriteFile",
    writes=("path",),
)


EDIT_FILE = ToolSpec(
    name="edit_file",
    description="Replace an exact string in a file. old_string must match the file's current text "
    "exactly (indentation and whitespace included; never include read_file's line-number "
    "prefix) and must occur exactly once unless replace_all=true; include enough "
    "surrounding lines to make it unique. Read the file first in this session (any "
    "read_file window counts); if it changed on disk since, the call fails with "
    "FS_STALE_VERSION and you must read it again. A successful edit counts as a fresh "
    "read, so you can edit the same file again right away. Keeps the file's encoding "
    "and line endings. For several changes to one file use multi_edit; to create a file "
    "use write_file.",
    read_only=False,
    family=ToolFamily.EDIT,
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit, relative to the workspace or absolute.",
            },
            "old_string": {
                "type": "string",
                "description": "Exact existing text to replace.",
            },
            "new_string": {
                "type": "string",
                "description": "Replacement text (must differ from old_string).",
            },
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence instead of requiring exactly one "
                "(default false).",
            },
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.edit_file:EditFile",
    writes=("path",),
)


MULTI_EDIT = ToolSpec(
    name="multi_edit",
    description="Apply several exact string replacements to one file in a single atomic step. Edits "
    "are applied in order, each to the result of the previous ones, with the same rules "
    "as edit_file (exact match, unique unless replace_all, old_string != new_string). "
    "If any edit fails nothing is written and the error names the failing edit index. "
    "Requires having read the file in this session (any read_file window counts) and no "
    "change on disk since (FS_NOT_OBSERVED / FS_STALE_VERSION otherwise). Prefer it over "
    f"several edit_file calls on the same file. At most {MAX_EDITS} edits per call.",
    read_only=False,
    family=ToolFamily.EDIT,
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit, relative to the workspace or absolute.",
            },
            "edits": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_EDITS,
                "description": "Replacements applied in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "old_string": {
                            "type": "string",
                            "description": "Exact text to replace (as it is after earlier edits).",
                        },
                        "new_string": {"type": "string", "description": "Replacement text."},
                        "replace_all": {
                            "type": "boolean",
                            "description": "Replace every occurrence (default false).",
                        },
                    },
                    "required": ["old_string", "new_string"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["path", "edits"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.multi_edit:MultiEdit",
    writes=("path",),
)


MOVE_FILE = ToolSpec(
    name="move_file",
    description="Move or rename a file, directory or symlink. Both paths must be inside the "
    "workspace (or the session temp dir / configured writable roots); missing parent "
    "directories of the destination are created. Fails with FS_NOT_FOUND if the source "
    "does not exist and FS_ALREADY_EXISTS if the destination exists (it never "
    "overwrites). Use this instead of `mv` in bash. Earlier reads of a moved file stay "
    "valid at its new path.",
    read_only=False,
    family=ToolFamily.EDIT,
    parameters={
        "type": "object",
        "properties": {
            "source_path": {
                "type": "string",
                "description": "Existing file or directory to move.",
            },
            "destination_path": {
                "type": "string",
                "description": "New path; must not exist yet.",
            },
        },
        "required": ["source_path", "destination_path"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.move_file:MoveFile",
    writes=("source_path", "destination_path"),
)


LS = ToolSpec(
    name="ls",
    description="List a directory: one entry per line, sorted by name, directories ending with `/`, "
    "files with their size in bytes, symlinks as `name -> target`. With recursive=true "
    "lists the whole tree depth-first as paths relative to the listed directory, "
    "skipping .gitignore'd entries. Always skips .git, node_modules, __pycache__ and "
    "hidden (dot) entries - list a hidden directory by its path to see inside it. "
    f"Output is capped at {MAX_ENTRIES} entries. Use glob to find files by name "
    "pattern and grep to search contents.",
    read_only=True,
    family=ToolFamily.READ,
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Directory to list (default: the workspace root).",
            },
            "recursive": {
                "type": "boolean",
                "description": "List the whole tree, not just direct children (default false).",
            },
        },
        "required": [],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.ls:Ls",
)


GLOB = ToolSpec(
    name="glob",
    description="Find files whose path matches a glob pattern, e.g. `**/*.py`, `src/**/test_*.ts`, "
    "`*.{js,jsx}`. `*` and `?` match within one path segment, `**` matches any number of "
    "directories, `{a,b}` alternatives and `[abc]` classes work. The pattern is matched "
    "against paths relative to `path` (default: the workspace root), so `*.py` only "
    "matches the top level. Returns file paths relative to the workspace, most recently "
    f"modified first, at most {MAX_RESULTS}. Skips .git, node_modules, __pycache__, "
    "hidden entries (unless the pattern names them, e.g. `.github/**`) and "
    ".gitignore'd files. Use grep to search file contents.",
    read_only=True,
    family=ToolFamily.READ,
    parameters={
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob pattern, relative to `path` unless absolute.",
            },
            "path": {
                "type": "string",
                "description": "Directory to search from (default: the workspace root).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.glob:Glob",
)


GREP = ToolSpec(
    name="grep",
    description="Search file contents with a Python regular expression (re syntax; a match is "
    "searched within each line). Returns `path:line:text` lines with paths relative to "
    "the workspace. `path` is a file or directory (default: the workspace root); `glob` "
    "filters files (`*.py` matches file names at any depth, `src/**/*.ts` matches "
    "relative paths, `{a,b}` alternatives work). Skips binary files, hidden entries, "
    ".git, node_modules, __pycache__ and .gitignore'd files. At most "
    f"{MAX_MATCHES} matches / {MAX_OUTPUT_BYTES // 1024} KiB are returned; lines are "
    f"cut at {MAX_LINE_CHARS} characters. Use this instead of grep/rg in bash.",
    read_only=True,
    family=ToolFamily.READ,
    parameters={
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Python regular expression to search for.",
            },
            "path": {
                "type": "string",
                "description": "File or directory to search (default: the workspace root).",
            },
            "glob": {
                "type": "string",
                "description": "Only search files matching this glob, e.g. `*.py`.",
            },
            "case_insensitive": {
                "type": "boolean",
                "description": "Ignore case (default false).",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.grep:Grep",
)


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


TODO_WRITE = ToolSpec(
    name="todo_write",
    description="Create or update your task list for the current work. Send the whole list every "
    "time; it replaces the previous one. Use it for multi-step tasks (three or more "
    "steps) to plan and show progress; skip it for trivial requests.\n"
    "- status is pending, in_progress or completed; keep at most one item in_progress "
    "and mark it completed as soon as it is done, before starting the next.\n"
    '- content is the imperative form ("Run the tests"); active_form is the present '
    'continuous form shown while it is in progress ("Running the tests").\n'
    "- Only mark an item completed when it is fully done (tests pass, nothing left "
    "unresolved). An empty list clears it.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "maxItems": MAX_TODOS,
                "description": "The complete, updated task list.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {
                            "type": "string",
                            "description": "What to do, imperative form.",
                        },
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "active_form": {
                            "type": "string",
                            "description": "Present continuous form shown while in progress.",
                        },
                    },
                    "required": ["content", "status", "active_form"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.todo_write:TodoWriteTool",
)


WEB_FETCH = ToolSpec(
    name="web_fetch",
    description="Fetch an http or https URL and return its content as readable text: HTML is "
    "reduced to headings, paragraphs, list items and links written as `text (url)`; "
    "JSON and other text is returned as-is; binary content is refused. The first line "
    "is `status · content type · bytes · final URL`. Redirects are followed (at most 5). "
    "Limits: 15 s, 1 MiB body. Private-network, link-local and cloud-metadata addresses "
    "are refused. Use it to read documentation or a page the user points at; it does "
    "not run JavaScript and cannot log in.",
    read_only=True,
    family=ToolFamily.NETWORK,
    parameters={
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The absolute http:// or https:// URL."}
        },
        "required": ["url"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.web_fetch:WebFetchTool",
)


ASK = ToolSpec(
    name="ask",
    description="Ask the user one to four multiple-choice questions and wait for the answers. Use it "
    "only when a decision is genuinely the user's (requirements, preferences, a choice "
    "between approaches with real trade-offs) and you cannot settle it from the code or "
    "the conversation. Give 2-4 short, distinct options per question with the recommended "
    "one first; the user can also add a free-text note. Set multi_select when several "
    "options may apply. In a headless run nobody answers: state your assumption and continue.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {
                            "type": "string",
                            "description": "The question, ending with a question mark.",
                        },
                        "options": {
                            "type": "array",
                            "minItems": 2,
                            "maxItems": 4,
                            "items": {"type": "string"},
                            "description": "2-4 answer options, recommended first.",
                        },
                        "multi_select": {
                            "type": "boolean",
                            "description": "Allow choosing more than one option.",
                        },
                    },
                    "required": ["question", "options"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["questions"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.ask:AskTool",
)


HISTORY = ToolSpec(
    name="history",
    description="Search the transcripts of this project's earlier sessions (and the current one) "
    'with BM25 keyword ranking. Use it when the user refers to earlier work ("like we '
    'did last time", "the error from yesterday") or you need a past decision that is '
    "no longer in context.\n"
    "- operation=search: `query` (keywords; Chinese works too) returns the best "
    "matching messages, each with a ref like `20250101-120000-ab12cd#14`. By default "
    "only user and assistant messages are searched; set kind=tool to search tool "
    "output only, kind=all for everything, kind=user or kind=assistant to narrow. "
    "`limit` caps the hits (default 8, max 30).\n"
    "- operation=around: `ref` from a search shows that message with its neighbours "
    "(`limit` messages each side, default 3, max 10).\n"
    "Transcripts can be stale: verify against the current files before relying on them.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": ["search", "around"]},
            "query": {
                "type": "string",
                "description": "search: keywords to look for.",
            },
            "kind": {
                "type": "string",
                "enum": ["user", "assistant", "tool", "all"],
                "description": (
                    "search: which messages to search; omitted = user and assistant "
                    "messages (tool output excluded)."
                ),
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": HISTORY_MAX_LIMIT,
                "description": "search: max hits (default 8); around: messages each side (default 3, max 10).",
            },
            "ref": {
                "type": "string",
                "description": "around: a ref printed by search, `<session id>#<message number>`.",
            },
        },
        "required": ["operation"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.history:HistoryTool",
)


MEMORY = ToolSpec(
    name="memory",
    description="Look up background facts saved in earlier sessions (with the remember tool): "
    "project conventions, user preferences, feedback, pointers to references. Relevant "
    "facts are also recalled automatically into a <memory-recall> block of the user "
    "message; use this tool to look further.\n"
    "- operation=search: BM25 over titles, keywords and bodies for `query`.\n"
    "- operation=list: every fact (newest first); filter with `type` / `scope`; "
    "`archived=true` lists forgotten facts.\n"
    "- operation=read: the full fact `id` with its revision and timestamps.\n"
    "Facts can be outdated (marked stale): check them against the code before relying on them.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": ["search", "list", "read"]},
            "query": {"type": "string", "description": "search: keywords."},
            "id": {"type": "string", "description": "read: the fact id."},
            "type": {
                "type": "string",
                "enum": ["user", "feedback", "project", "reference"],
                "description": "search/list: only facts of this type.",
            },
            "scope": {
                "type": "string",
                "enum": ["project", "global"],
                "description": "search/list: only this scope.",
            },
            "archived": {
                "type": "boolean",
                "description": "search/list: the archived (forgotten) facts instead.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MEMORY_MAX_LIMIT,
                "description": "search: max hits (default 8); list: max facts (default 50).",
            },
        },
        "required": ["operation"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.memory:MemoryTool",
)


REMEMBER = ToolSpec(
    name="remember",
    description="Save a durable background fact for future sessions (one fact per call). Save only "
    "what will still be true and useful later and cannot be read off the code: a "
    "project convention or decision (type=project), where something lives outside the "
    "repo (type=reference), the user's role or preferences (type=user), or guidance the "
    "user gave about how to work (type=feedback). Do not save secrets, transient task "
    "state, or things the code or git history already records.\n"
    "- `title`: one line naming the fact; `content`: the fact itself, short and "
    "self-contained (include the why when it matters); `keywords`: optional search terms.\n"
    "- `scope`: project (this workspace) or global (every project); default: project for "
    "project/reference, global for user/feedback.\n"
    "- To change an existing fact pass its `id` (from the memory tool): the previous "
    "revision is kept. Without `id` a new fact is created; a fact with the same title in "
    "the same scope is refused (update it instead).\n"
    "New, short, non-sensitive project/reference facts are saved without asking; other "
    "saves may need the user's approval.",
    read_only=False,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "title": {
                "type": "string",
                "maxLength": MAX_TITLE,
                "description": "One line naming the fact.",
            },
            "content": {
                "type": "string",
                "maxLength": MAX_CONTENT,
                "description": "The fact, short and self-contained.",
            },
            "type": {"type": "string", "enum": ["user", "feedback", "project", "reference"]},
            "scope": {
                "type": "string",
                "enum": ["project", "global"],
                "description": "Default: project for project/reference, global for user/feedback.",
            },
            "keywords": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": MAX_KEYWORDS,
                "description": "Optional extra search terms.",
            },
            "id": {
                "type": "string",
                "description": "Update this existing fact instead of creating one.",
            },
        },
        "required": ["title", "content", "type"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.remember:RememberTool",
)


FORGET = ToolSpec(
    name="forget",
    description="Archive a saved background fact that is wrong or no longer true, so it stops being "
    "recalled. Pass its `id` (from the memory tool) and optionally a short `reason`. The "
    "fact is moved to the archive with its revision history, not deleted. To correct a "
    "fact rather than drop it, use remember with its id instead. `action=restore` brings "
    "an archived fact back (find it with memory operation=list archived=true).",
    read_only=False,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The fact id."},
            "action": {
                "type": "string",
                "enum": ["archive", "restore"],
                "description": "archive (default) or restore an archived fact.",
            },
            "reason": {
                "type": "string",
                "maxLength": 500,
                "description": "Why it is forgotten (kept in the archive).",
            },
        },
        "required": ["id"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.forget:ForgetTool",
)


RUN_SKILL = ToolSpec(
    name="run_skill",
    description="Load the instructions of a skill listed under '# Skills' in the system prompt, "
    "then follow them. Call it before starting work that matches a skill's description. "
    "`arguments` fills the skill's $ARGUMENTS (and $1, $2, ...): pass the task's details. "
    "A skill marked (subagent) runs as a separate agent and returns its result.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, as listed."},
            "arguments": {
                "type": "string",
                "description": "Arguments for the skill (the user's request, a path...).",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.run_skill:RunSkillTool",
)


# -- delegation (docs/SUBAGENTS.md) ------------------------------------------------

_DELEGATE_PROMPT = {
    "type": "string",
    "description": "The whole task for the subagent: what to do, where, and what done means. "
    "It sees nothing else of this conversation, no REASONIX.md/AGENTS.md and no memory.",
}
_DELEGATE_PROFILE = {
    "type": "string",
    "description": "Name of a subagent profile (a skill with runAs: subagent) to run as.",
}
_WRITE_PATHS = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Files or folders (relative to the workspace) the subagent may write; "
    "everything else is refused. Omitted: the whole workspace, and then it cannot run "
    "beside another writer.",
}

TASK = ToolSpec(
    name="task",
    description="Delegate a self-contained piece of work that changes files to a subagent with a "
    "fresh context, and get back its final answer plus the host's adjudicated report (which "
    "acceptance criteria it proved, what it wrote and ran). Use it when a subtask needs a "
    "lot of reading or trial and error whose detail you do not need to keep; do the work "
    "yourself when it is small or when you already know the edit. The subagent starts from "
    "nothing but `prompt`: state the goal, the files, the constraints and how to verify. "
    "Give `write_paths` to confine its writes.",
    read_only=False,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "prompt": _DELEGATE_PROMPT,
            "profile": _DELEGATE_PROFILE,
            "model": {"type": "string", "description": "Model for the subagent (default: yours)."},
            "effort": {
                "type": "string",
                "description": "Reasoning effort for the subagent (default: yours).",
            },
            "write_paths": _WRITE_PATHS,
        },
        "required": ["prompt"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.subagent.tools:TaskTool",
)


READ_ONLY_TASK = ToolSpec(
    name="read_only_task",
    description="Delegate an investigation to a read-only subagent with a fresh context (it can "
    "read, list and search files but never write or run commands) and get back its final "
    "answer. Use it to explore a large area and bring back only the conclusion; several "
    "read_only_task calls in one response run at the same time. The subagent sees nothing "
    "but `prompt`: say exactly what to find out and what to report.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {"prompt": _DELEGATE_PROMPT, "profile": _DELEGATE_PROFILE},
        "required": ["prompt"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.subagent.tools:ReadOnlyTaskTool",
)


FLEET = ToolSpec(
    name="fleet",
    description="Run several subagent tasks as a small dependency graph: each item starts as "
    "soon as the items in its `depends_on` finished, independent items run at the same "
    "time, and a failed item skips everything downstream of it. Items that may run at the "
    "same time must claim disjoint `write_paths`. Returns every item's result.",
    read_only=False,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {
                            "type": "string",
                            "description": "Name for depends_on (default: its 1-based index).",
                        },
                        "prompt": _DELEGATE_PROMPT,
                        "profile": _DELEGATE_PROFILE,
                        "depends_on": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Ids of items that must finish first.",
                        },
                        "write_paths": _WRITE_PATHS,
                        "read_only": {
                            "type": "boolean",
                            "description": "Run it as a read-only subagent (default false).",
                        },
                    },
                    "required": ["prompt"],
                    "additionalProperties": False,
                },
            },
            "fail_fast": {
                "type": "boolean",
                "description": "After a failure start no new items (running ones finish).",
            },
        },
        "required": ["items"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.subagent.tools:FleetTool",
)


COMPLETION_STATUSES = ("complete", "partial", "blocked", "failed")
EVIDENCE_KINDS = ("verification", "diff", "files", "manual")

COMPLETE_SUBTASK = ToolSpec(
    name="complete_subtask",
    description="Report the outcome of your task to the host (call it once, at the end, then "
    "answer with a short summary). The host checks every acceptance criterion against what "
    "it saw: `verification` must name a command you ran with bash (exactly as you ran it), "
    "`diff`/`files` must name paths you wrote, and `manual` proves nothing on its own. "
    "Criteria it cannot confirm become unsatisfied and the report cannot stay complete.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": list(COMPLETION_STATUSES)},
            "summary": {"type": "string", "description": "What was done, in a few sentences."},
            "acceptance_criteria": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "criterion": {"type": "string"},
                        "evidence": {
                            "type": "object",
                            "properties": {
                                "kind": {"type": "string", "enum": list(EVIDENCE_KINDS)},
                                "command": {
                                    "type": "string",
                                    "description": "For verification: the command you ran.",
                                },
                                "paths": {
                                    "type": "array",
                                    "items": {"type": "string"},
                                    "description": "For diff/files: the paths you wrote.",
                                },
                            },
                            "required": ["kind"],
                            "additionalProperties": False,
                        },
                    },
                    "required": ["criterion", "evidence"],
                    "additionalProperties": False,
                },
            },
            "unresolved": {
                "type": "array",
                "items": {"type": "string"},
                "description": "What is left undone or uncertain.",
            },
        },
        "required": ["status", "summary", "acceptance_criteria"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.subagent.completion:CompleteSubtaskTool",
)

SUBMIT_PLAN = ToolSpec(
    name="submit_plan",
    description="Deliver your plan to the host: the only way a plan reaches the executor or "
    "the user (prose without this call is not a plan). Call it once, when your research is "
    "done, then make no more tool calls. Write the plan in Markdown: the goal, the steps, "
    "the touch points you verified (file:line) apart from the candidates you did not, and, "
    "where the evidence supports them, non-goals, risks, acceptance criteria and the "
    "commands that verify the work.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "plan": {"type": "string", "description": "The plan, in Markdown."},
        },
        "required": ["plan"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.coordinator.submit_plan:SubmitPlanTool",
)


# Structured deletions and notebook cells (issue 19 item 7): appended after the
# delegation tools so every earlier byte of the tool list stays as it was.
DELETE_RANGE = ToolSpec(
    name="delete_range",
    description="Delete a range of lines from a file: start_line to end_line inclusive, numbered "
    "as read_file shows them (1-based). Read the file first in this session; if it changed "
    "on disk since, the call fails with FS_STALE_VERSION and you must read it again. Keeps "
    "the file's encoding and line endings.",
    read_only=False,
    family=ToolFamily.EDIT,
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit, relative to the workspace or absolute.",
            },
            "start_line": {"type": "integer", "minimum": 1, "description": "First line deleted."},
            "end_line": {
                "type": "integer",
                "minimum": 1,
                "description": "Last line deleted (inclusive, >= start_line).",
            },
        },
        "required": ["path", "start_line", "end_line"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.delete_range:DeleteRange",
    writes=("path",),
)

DELETE_SYMBOL = ToolSpec(
    name="delete_symbol",
    description="Delete a function, class or method by name, with its decorators, from a Python "
    "file (other languages are refused: use delete_range). `symbol` is the name or the "
    "dotted path (`Class.method`, `outer.inner`); a name that matches several definitions "
    "is refused with their dotted paths and lines. Read the file first in this session; "
    "if it changed on disk since, the call fails with FS_STALE_VERSION. The result must "
    "still parse, or nothing is written.",
    read_only=False,
    family=ToolFamily.EDIT,
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Python file, relative to the workspace or absolute.",
            },
            "symbol": {
                "type": "string",
                "description": "Name or dotted path of the function, class or method.",
            },
        },
        "required": ["path", "symbol"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.delete_symbol:DeleteSymbol",
    writes=("path",),
)

NOTEBOOK_EDIT = ToolSpec(
    name="notebook_edit",
    description="Edit a Jupyter notebook (.ipynb, nbformat 4) cell: operation=replace sets a "
    "cell's source (a code cell's outputs are cleared), insert adds a new cell before "
    "`index` (index = cell count appends), delete removes a cell. Name the cell by "
    "`index` (0-based) or `cell_id`. Read the notebook first in this session; if it "
    "changed on disk since, the call fails with FS_STALE_VERSION. The notebook stays "
    "valid nbformat 4 or nothing is written.",
    read_only=False,
    family=ToolFamily.EDIT,
    parameters={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Notebook, relative to the workspace or absolute.",
            },
            "operation": {"type": "string", "enum": ["replace", "insert", "delete"]},
            "index": {"type": "integer", "minimum": 0, "description": "0-based cell index."},
            "cell_id": {"type": "string", "description": "The cell's id (instead of index)."},
            "source": {"type": "string", "description": "replace/insert: the cell's text."},
            "cell_type": {
                "type": "string",
                "enum": ["code", "markdown", "raw"],
                "description": "insert: the new cell's type (default code); replace: "
                "change the type.",
            },
        },
        "required": ["path", "operation"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.tool.builtin.notebook_edit:NotebookEdit",
    writes=("path",),
)

EXIT_PLAN_MODE = ToolSpec(
    name="exit_plan_mode",
    description="In plan mode (which only the user turns on), present your plan to the user "
    "for approval. Until the user approves it, writes, bash and tools that may change "
    "anything are blocked. Call it when your read-only research is done, with the plan in "
    "Markdown: the goal, the steps, the files you will touch and how you will verify the "
    "work. The result says whether the user approved it (execute it then), wants you to "
    "keep planning, or saved it for later approval (then stop).",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "plan": {"type": "string", "description": "The plan, in Markdown."},
        },
        "required": ["plan"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.coordinator.plan_mode:ExitPlanModeTool",
)

CREATE_GOAL = ToolSpec(
    name="create_goal",
    description="Goal mode: record a standing objective for this session. Only when the user "
    "asks for a goal; one open goal at a time. The host then drives rounds until you mark it "
    "complete (or blocked) with update_goal: a final answer does not end it.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {"objective": {"type": "string", "description": "What done means."}},
        "required": ["objective"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.goal.tools:CreateGoalTool",
)

GET_GOAL = ToolSpec(
    name="get_goal",
    description="Goal mode: the session's goal - id, revision, status, rounds, tokens, objective.",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
    implementation="reasonix_core.goal.tools:GetGoalTool",
)

UPDATE_GOAL = ToolSpec(
    name="update_goal",
    description="Goal mode: change the goal at its current revision (from get_goal). action: "
    "edit (needs objective), pause, resume, complete (the objective is met and verified), "
    "blocked (only after at least 3 rounds of real attempts; say why in note).",
    read_only=True,
    family=ToolFamily.OTHER,
    parameters={
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "revision": {"type": "integer"},
            "action": {
                "type": "string",
                "enum": ["edit", "pause", "resume", "complete", "blocked"],
            },
            "objective": {"type": "string", "description": "The new objective (edit)."},
            "note": {"type": "string", "description": "Why (blocked, complete)."},
        },
        "required": ["id", "revision", "action"],
        "additionalProperties": False,
    },
    implementation="reasonix_core.goal.tools:UpdateGoalTool",
)
