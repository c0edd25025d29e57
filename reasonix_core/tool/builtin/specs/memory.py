"""The history and memory tools' specs (docs/MEMORY.md)."""

from __future__ import annotations

from reasonix_core.tool.base import ToolFamily
from reasonix_core.tool.builtin.specs.base import ToolSpec

# Limits the descriptions and schemas state; the tools' code imports them from here.
HISTORY_MAX_LIMIT = 30
MEMORY_MAX_LIMIT = 100
MAX_CONTENT = 4000
MAX_KEYWORDS = 8
MAX_TITLE = 120


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
