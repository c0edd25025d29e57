"""The file tools' specs: read, write, edit, move, list, search, structured deletions
and notebook cells (docs/TOOL_CONTRACT.md)."""

from __future__ import annotations

from reasonix_core.tool.base import ToolFamily
from reasonix_core.tool.builtin.specs.base import ToolSpec

# Limits the descriptions and schemas state; the tools' code imports them from here.
MAX_EDITS = 100
MAX_ENTRIES = 1000
MAX_RESULTS = 500
MAX_LINE_CHARS = 500
MAX_MATCHES = 200
MAX_OUTPUT_BYTES = 64 * 1024


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
