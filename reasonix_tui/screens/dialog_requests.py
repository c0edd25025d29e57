# pyright: reportGeneralTypeIssues=false
# (the mixin annotates self as the SessionHost protocol, as transcript_keys.py does)
"""The engine's questions to the user, asked one docked dialog at a time.

An approval, a plan approval and the ``ask`` tool's questions arrive as messages from the
turn's worker, each with a future the engine awaits. They share one lock, so a second
request waits for the dialog in front of it, and a future the turn has already given up
on (cancelled, or answered elsewhere) closes its dialog instead of leaving it up.
The handlers live on :class:`SessionScreen` through this mixin; they see the screen only
through :class:`SessionHost`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import work

if TYPE_CHECKING:
    from reasonix_tui.messages import ApprovalNeeded, PlanApprovalNeeded, QuestionsNeeded
    from reasonix_tui.screens.session_host import SessionHost


class DialogRequests:
    """``on_approval_needed``, ``on_plan_approval_needed`` and ``on_questions_needed``
    for :class:`SessionScreen` (a mixin)."""

    @work(group="approval", exit_on_error=False)
    async def on_approval_needed(self: SessionHost, message: ApprovalNeeded) -> None:
        from reasonix_core.permission.approver import ApprovalDecision
        from reasonix_tui.screens.approval import ApprovalScreen

        future = message.future
        async with self.approval_lock:
            if future.done():
                return
            screen = ApprovalScreen(message.request)
            if self.services.notify_after is not None:
                from reasonix_tui.notify import notify

                who = message.request.requester
                asker = f" (subagent {who.name})" if who is not None else ""
                notify(self.app, "Reasonix", f"approval needed{asker}: {message.request.summary}")

            def closed_elsewhere(done: asyncio.Future[ApprovalDecision]) -> None:
                if done.cancelled() and screen.is_current:
                    screen.dismiss(None)

            future.add_done_callback(closed_elsewhere)
            decision = await self.app.push_screen_wait(screen)
            if future.done():
                return
            if decision is None:
                future.set_result(ApprovalDecision.DENY)
                self.cancel_turn()
            else:
                future.set_result(decision)

    @work(group="approval", exit_on_error=False)
    async def on_plan_approval_needed(self: SessionHost, message: PlanApprovalNeeded) -> None:
        from reasonix_core.coordinator.plans import PlanVerdict
        from reasonix_tui.screens.plan_approval import PlanApprovalScreen

        future = message.future
        async with self.approval_lock:
            if future.done():
                return
            screen = PlanApprovalScreen(message.plan)

            def closed_elsewhere(done: asyncio.Future[PlanVerdict]) -> None:
                if done.cancelled() and screen.is_current:
                    screen.dismiss(PlanVerdict.KEEP)

            future.add_done_callback(closed_elsewhere)
            verdict = await self.app.push_screen_wait(screen)
            if not future.done():
                future.set_result(verdict if verdict is not None else PlanVerdict.KEEP)

    @work(group="approval", exit_on_error=False)
    async def on_questions_needed(self: SessionHost, message: QuestionsNeeded) -> None:
        from reasonix_core.permission.approver import QuestionAnswer

        future = message.future
        async with self.approval_lock:
            from reasonix_tui.screens.question import QuestionScreen

            answers: list[QuestionAnswer] = []
            for question in message.questions:
                if future.done():
                    return
                screen = QuestionScreen(question.question, list(question.options))
                choice = await self.app.push_screen_wait(screen)
                if choice is None:  # Esc: the user declines (an empty list says so)
                    answers = []
                    break
                answers.append(QuestionAnswer(question=question.question, answers=(choice,)))
            if not future.done():
                future.set_result(answers)
