"""The plan-mode and goal-mode tools' specs (docs/MODES.md)."""

from __future__ import annotations

from reasonix_core.tool.base import ToolFamily
from reasonix_core.tool.builtin.specs.base import ToolSpec

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
