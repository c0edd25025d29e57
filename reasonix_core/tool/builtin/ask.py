"""``ask``: put 1-4 multiple-choice questions to the user through the Approver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import FOR_MODEL, SUMMARY, ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import ASK as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool
from reasonix_core.tool.questions import Question, QuestionAnswer

if TYPE_CHECKING:
    from reasonix_core.permission.approver import Approver

HEADLESS = (
    "No user is available to answer (headless run). State your assumption explicitly and continue."
)
# The approver returned no answers: the user was there and closed the question.
DECLINED = (
    "The user declined to answer. Do not ask again; state your assumption explicitly and "
    "continue, or stop and say what you need."
)


class QuestionArg(BaseModel):
    model_config = ARGS_CONFIG

    question: str = Field(min_length=1)
    options: list[str] = Field(min_length=2, max_length=4)
    multi_select: bool = False


class AskArgs(BaseModel):
    model_config = ARGS_CONFIG

    questions: list[QuestionArg] = Field(min_length=1, max_length=4)


def render_answers(answers: list[QuestionAnswer]) -> str:
    lines: list[str] = []
    for answer in answers:
        chosen = ", ".join(answer.answers) if answer.answers else "(no option chosen)"
        lines.append(f"Q: {answer.question}\nA: {chosen}")
        if answer.note:
            lines.append(f"Note from the user: {answer.note}")
    return "\n".join(lines)


async def _ask_notified(
    ctx: ToolContext, approver: Approver, questions: list[Question]
) -> Sequence[QuestionAnswer] | None:
    """The approver's answers; the user's input is needed, so the Notification hooks
    (docs/HOOKS.md) run beside the question."""
    hooks = ctx.env.hooks
    if hooks is None:
        return await approver.ask(questions)
    return await hooks.while_asking(
        "Reasonix has a question for you", "elicitation_dialog", lambda: approver.ask(questions)
    )


class AskTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        parsed: AskArgs = validate_args(AskArgs, args)
        approver = ctx.approver
        if approver is None or not getattr(approver, "interactive", False):
            return ToolResult(text=HEADLESS, meta={"answered": False})
        questions = [
            Question(question=q.question, options=tuple(q.options), multi_select=q.multi_select)
            for q in parsed.questions
        ]
        answers = await _ask_notified(ctx, approver, questions)
        if answers is None:
            return ToolResult(text=HEADLESS, meta={"answered": False})
        if not answers:
            return ToolResult(
                text=DECLINED,
                meta={
                    "answered": False,
                    "declined": True,
                    SUMMARY: "You declined to answer.",
                    FOR_MODEL: True,
                },
            )
        return ToolResult(
            text=render_answers(list(answers)) or "The user gave no answers.",
            meta={"answered": True},
        )
