"""The plan-approval dialog: the host's boundary between a plan and its execution.

Shows the plan as Markdown and returns a :class:`PlanVerdict`: approve and
execute, keep planning (nothing executes; the plan stays pending) or reject.
Escape keeps planning - closing the dialog never executes anything. Used by the
Coordinator's plan-for-approval route and by Plan mode's ``exit_plan_mode``;
no permission preset answers it.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static, TextArea

from reasonix_core.coordinator.plans import PlanVerdict
from reasonix_core.permission.summary import visible
from reasonix_tui.screens.overlay import DialogBox, DockedOverlay

#: Above this many characters the plan is shown as plain text: laying out a huge
#: Markdown document stalls the app for seconds, and a plan is approved whole, so
#: it is never cut.
MARKDOWN_CHARS = 40_000


class PlanApprovalScreen(DockedOverlay[PlanVerdict]):
    opens_unasked = True  # keys typed for the composer stay there (overlay.py)

    DEFAULT_CSS = """
    PlanApprovalScreen #plan { background: $surface; }
    PlanApprovalScreen #plan Markdown { margin: 0; padding: 0; background: $surface; }
    PlanApprovalScreen #plan-text { height: auto; border: none; margin-top: 1; }
    """

    BODY_SHARE = 0.55

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a,enter", f"answer('{PlanVerdict.APPROVE.value}')", "Approve", show=False),
        Binding("k,escape", f"answer('{PlanVerdict.KEEP.value}')", "Keep planning", show=False),
        Binding("r", f"answer('{PlanVerdict.REJECT.value}')", "Reject", show=False),
    ]

    def __init__(self, plan: str, title: str = "Plan ready for approval") -> None:
        super().__init__()
        self.plan = plan
        self.title_text = title

    def compose(self) -> ComposeResult:
        with DialogBox(id="dialog"):
            yield Static(visible(self.title_text), id="title", markup=False)
            # The model's text: escape sequences and bidi overrides shown escaped.
            shown = visible(self.plan)
            if len(shown) > MARKDOWN_CHARS:
                yield TextArea(
                    shown, read_only=True, soft_wrap=True, id="plan-text", classes="body"
                )
            else:
                with VerticalScroll(id="plan", classes="body"):
                    yield Markdown(shown)
            yield Static(
                "a/Enter approve and execute · k/Esc keep planning · r reject", classes="hint"
            )

    def action_answer(self, verdict: str) -> None:
        self.dismiss(PlanVerdict(verdict))
