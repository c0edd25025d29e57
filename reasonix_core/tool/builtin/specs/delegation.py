"""The delegation tools' specs (docs/SUBAGENTS.md): task, fleet and what a
subagent or planner hands back."""

from __future__ import annotations

from reasonix_core.tool.base import ToolFamily
from reasonix_core.tool.builtin.specs.base import ToolSpec

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

_CONTINUE_FROM = {
    "type": "string",
    "description": "The session id of an earlier subagent of yours (its result names it): "
    "go on in its context, with `prompt` as its next turn. Same profile and kind as before.",
}
_FORK_FROM = {
    "type": "string",
    "description": "As continue_from, on a copy of that subagent's context (the original "
    "is left as it was), e.g. to try two directions from one investigation.",
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
            "continue_from": _CONTINUE_FROM,
            "fork_from": _FORK_FROM,
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
        "properties": {
            "prompt": _DELEGATE_PROMPT,
            "profile": _DELEGATE_PROFILE,
            "continue_from": _CONTINUE_FROM,
            "fork_from": _FORK_FROM,
        },
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
                        "continue_from": _CONTINUE_FROM,
                        "fork_from": _FORK_FROM,
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
