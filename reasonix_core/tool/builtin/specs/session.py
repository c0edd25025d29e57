"""The session tools' specs: the todo list, web_fetch, ask and run_skill."""

from __future__ import annotations

from reasonix_core.tool.base import ToolFamily
from reasonix_core.tool.builtin.specs.base import ToolSpec

# Limits the descriptions and schemas state; the tools' code imports them from here.
MAX_TODOS = 50
STATUSES = ("pending", "in_progress", "completed")


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
