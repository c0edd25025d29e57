"""Scripted turns shared by the snapshot modules."""

from __future__ import annotations

import dataclasses
import json

from reasonix_core.events import (
    Event,
    FleetItemChanged,
    StepStarted,
    SubagentFinished,
    SubagentStarted,
    ToolCallFinished,
    ToolCallStarted,
    UsageReported,
)
from reasonix_core.permission.approver import ApprovalRequest
from reasonix_core.usage import Usage
from reasonix_testkit.tui import Approval, Hold, reasoning_steps, text_steps, tool_steps

REASONING = (
    "The user wants the greeting changed. I should read src/reasonix_demo/app.py first, "
    "then edit the print call and run the tests to confirm nothing else depends on it."
)
ANSWER = """I changed the greeting in `src/reasonix_demo/app.py`:

```python
def greet(name: str) -> str:
    return f"Hello, {name}!"
```

- the tests still pass
- no other module imports `greet`
"""
RICH_ANSWER = """## Plan

The parser in `inventory.py` reads **each line twice**; *stream* it instead.

1. Read the file
2. Parse lazily
   - keep `cents`
   - drop ~~floats~~

> The old function stays for one release.

| name | type | note |
|---|---|---|
| total | int | cents |
| items | list | lazy |

```python
def total(items):
    return sum(item.cents for item in items)
```

---
That is all. See [the docs](https://example.com/inventory).
"""
DIFF = """--- a/src/reasonix_demo/app.py
+++ b/src/reasonix_demo/app.py
@@ -1,3 +1,3 @@
 def greet(name: str) -> str:
-    return "hi " + name
+    return f"Hello, {name}!"
"""
USAGE = UsageReported(
    usage=Usage(
        prompt_tokens=18_400,
        completion_tokens=620,
        cache_hit_tokens=16_900,
        cache_miss_tokens=1_500,
    ),
    model="deepseek-flash",
    cost=0.0031,
)


def streaming_turn() -> list:
    return [*reasoning_steps(REASONING), *text_steps(ANSWER[:140]), Hold()]


def thinking_turn() -> list:
    return [*reasoning_steps(REASONING), Hold()]


# What the model reads when the user denies a call (the TUI shows its summary).
DENIAL = (
    "The user denied this write_file call; it was not executed. "
    "Do not retry it unchanged; choose another approach or ask the user."
)


def tools_turn() -> list:
    return [
        *reasoning_steps(REASONING),
        *tool_steps(
            "c1",
            "read_file",
            {"path": "src/reasonix_demo/app.py"},
            'def greet(name: str) -> str:\n    return "hi " + name\n',
            summary="Read 2 lines",
        ),
        *tool_steps(
            "c2",
            "edit_file",
            {"path": "src/reasonix_demo/app.py"},
            "Edited src/reasonix_demo/app.py (1 replacement)\n" + DIFF,
        ),
        *tool_steps(
            "c3",
            "bash",
            {"command": "pytest -q"},
            "F.\nFAILED tests/test_app.py::test_greet\n1 failed, 1 passed in 0.02s",
            outcome="error",
        ),
        *tool_steps(
            "c4",
            "write_file",
            {"path": "NOTES.md"},
            DENIAL,
            outcome="denied",
            summary="You denied it.",
            for_model=True,
        ),
        USAGE,
        *text_steps(ANSWER),
    ]


def approval_turn() -> list:
    request = ApprovalRequest(
        tool="edit_file",
        arguments={
            "path": "src/reasonix_demo/app.py",
            "old_string": 'return "hi " + name',
            "new_string": 'return f"Hello, {name}!"',
        },
        call_id="c9",
        read_only=False,
        scope="Edit(src/**)",
        summary="Edit src/reasonix_demo/app.py",
        preview=DIFF,
    )
    return [
        *text_steps("I'll update the greeting."),
        ToolCallStarted(
            call_id="c9", name="edit_file", arguments='{"path": "src/reasonix_demo/app.py"}'
        ),
        Approval(request=request),
        Hold(),
    ]


def markdown_turn() -> list:  # type: ignore[type-arg]
    """An answer that uses every kind of block the transcript renders."""
    return [*text_steps(RICH_ANSWER, chunk=32), USAGE]


def _child(path: tuple[str, ...], event: Event) -> Event:
    return dataclasses.replace(event, agent_path=path)


def _item(
    item_id: str, state: str, *deps: str, reason: str = "", call: str = "f1"
) -> FleetItemChanged:
    return FleetItemChanged(
        tool_call_id=call,
        item_id=item_id,
        state=state,  # type: ignore[arg-type]
        depends_on=deps,
        reason=reason,
    )


def _child_usage(prompt: int, hit: int, cost: float) -> UsageReported:
    usage = Usage(
        prompt_tokens=prompt,
        completion_tokens=prompt // 10,
        cache_hit_tokens=hit,
        cache_miss_tokens=prompt - hit,
    )
    return UsageReported(usage=usage, model="deepseek-flash", source="subagent", cost=cost)


def fleet_turn() -> list:  # type: ignore[type-arg]
    """A fleet mid-run: every item state at once (done, running, failed, skipped, waiting)."""
    research, backend, frontend = ("f1/research",), ("f1/backend",), ("f1/frontend",)
    items = json.dumps(
        {
            "items": [
                {"id": "research", "prompt": "Map the greeting code", "read_only": True},
                {"id": "backend", "prompt": "Rename in the API", "depends_on": ["research"]},
                {"id": "frontend", "prompt": "Rename in the UI", "depends_on": ["research"]},
                {"id": "integration", "prompt": "Run it", "depends_on": ["frontend"]},
                {"id": "docs", "prompt": "Update the docs", "depends_on": ["backend"]},
            ]
        }
    )
    return [
        *reasoning_steps(REASONING),
        ToolCallStarted(call_id="f1", name="fleet", arguments=items),
        _item("research", "waiting"),
        _item("backend", "waiting", "research"),
        _item("frontend", "waiting", "research"),
        _item("integration", "waiting", "frontend"),
        _item("docs", "waiting", "backend"),
        _item("research", "running"),
        SubagentStarted(
            name="explore", child_path=research, tool_call_id="f1", fleet_item="research"
        ),
        _child(research, StepStarted(step=1, model="deepseek-flash")),
        _child(research, _child_usage(9_000, 7_200, 0.0004)),
        SubagentFinished(name="explore", child_path=research, tool_call_id="f1", status="done"),
        _item("research", "done"),
        _item("backend", "running", "research"),
        _item("frontend", "running", "research"),
        SubagentStarted(name="task", child_path=backend, tool_call_id="f1", fleet_item="backend"),
        SubagentStarted(name="task", child_path=frontend, tool_call_id="f1", fleet_item="frontend"),
        _child(backend, StepStarted(step=1, model="deepseek-flash")),
        _child(
            backend,
            ToolCallStarted(
                call_id="b1", name="read_file", arguments='{"path": "src/reasonix_demo/app.py"}'
            ),
        ),
        _child(backend, ToolCallFinished(call_id="b1", name="read_file", result="...")),
        _child(backend, _child_usage(12_000, 10_800, 0.0006)),
        _child(backend, StepStarted(step=2, model="deepseek-flash")),
        _child(
            backend,
            ToolCallStarted(call_id="b2", name="edit_file", arguments='{"path": "src/api.py"}'),
        ),
        _child(frontend, _child_usage(11_000, 9_900, 0.0005)),
        SubagentFinished(
            name="task", ok=False, child_path=frontend, tool_call_id="f1", status="blocked"
        ),
        _item("frontend", "failed", "research"),
        _item(
            "integration",
            "skipped",
            "frontend",
            reason="skipped: depends on 'frontend', which failed",
        ),
        Hold(),
    ]


PLAN_MARKDOWN = """\
# Rename the greeting helper

## Steps
1. Rename `greet` to `welcome` in `src/reasonix_demo/app.py` (verified: app.py:4)
2. Update the one caller in `src/reasonix_demo/cli.py` (candidate: not read yet)
3. Run `pytest -q tests/test_app.py`

## Risks
- A plugin may import `greet` by name: keep an alias for one release.
"""


def subagent_approval_turn() -> list:
    """A fleet item's child asks to run bash: the dialog names the child."""
    from reasonix_core.permission.approver import Requester

    request = ApprovalRequest(
        tool="bash",
        arguments={"command": "rm -rf build && pytest -q tests/backend"},
        call_id="c12",
        read_only=False,
        scope="Bash(rm:*)",
        summary="Run: rm -rf build && pytest -q tests/backend",
        requester=Requester(
            agent_path=("c11#backend",),
            name="task",
            task="Clean the build and rerun the backend tests",
            lineage=("backend · task",),
        ),
    )
    return [
        *text_steps("I'll delegate the backend to a subagent."),
        ToolCallStarted(call_id="c11", name="fleet", arguments='{"items": [{"id": "backend"}]}'),
        Approval(request=request),
        Hold(),
    ]


def write_scope_turn() -> list:
    """bash asks for a folder outside the workspace: the grant dialog."""
    command = "make -C ../shared-lib generate"
    request = ApprovalRequest(
        tool="bash",
        arguments={"command": command},
        call_id="c10",
        read_only=False,
        scope="/home/dev/src/shared-lib",
        summary="Write outside the workspace: /home/dev/src/shared-lib",
        write_dirs=("/home/dev/src/shared-lib",),
        justification="the generator writes its output into the sibling checkout",
    )
    return [
        *text_steps("I'll regenerate the shared bindings."),
        ToolCallStarted(call_id="c10", name="bash", arguments=json.dumps({"command": command})),
        Approval(request=request),
        Hold(),
    ]


def plan_approval_turn() -> list:
    """The Coordinator's plan-for-approval route: the dialog over a plan."""
    from reasonix_core.events import RouteDecided
    from reasonix_testkit.tui import PlanApproval

    return [
        RouteDecided(route="plan_for_approval", reason="directive:plan_for_approval"),
        PlanApproval(plan=PLAN_MARKDOWN),
    ]


def long_write_turn() -> list:
    """write_file of an 80-line file after a lead-in: the diff scrolls inside the
    dialog, the lead-in and the answers stay on screen."""
    content = "".join(f"line {n}: the report goes on\n" for n in range(1, 81))
    diff = "--- /dev/null\n+++ b/REPORT.md\n@@ -0,0 +1,80 @@\n" + "".join(
        f"+{line}\n" for line in content.splitlines()
    )
    request = ApprovalRequest(
        tool="write_file",
        arguments={"path": "REPORT.md", "content": content},
        call_id="c20",
        read_only=False,
        scope="Edit(REPORT.md)",
        summary="Write REPORT.md",
        preview=diff,
    )
    return [
        *text_steps("Let me write the report to REPORT.md."),
        ToolCallStarted(call_id="c20", name="write_file", arguments='{"path": "REPORT.md"}'),
        Approval(request=request),
        Hold(),
    ]


def _fleet_result():  # type: ignore[no-untyped-def]
    """A finished fleet's result, as the core renders it for the model and for people."""
    from reasonix_core.subagent.fleet import FleetResult, ItemOutcome

    found = "greet is defined in src/reasonix_demo/app.py and called from cli.py"
    return FleetResult(
        outcomes=(
            ItemOutcome(
                item_id="research",
                state="done",
                text=f"{found}\n\n[subagent session: 20261208-0101-a1 - give it as continue_from]",
                status="done",
                brief=found,
            ),
            ItemOutcome(
                item_id="backend",
                state="failed",
                text="[subagent status: blocked]\nSummary: the API tests need a database",
                status="blocked",
                brief="the API tests need a database that is not running",
            ),
            ItemOutcome(
                item_id="docs",
                state="skipped",
                reason="skipped: depends on 'backend', which failed",
            ),
        )
    )


def wording_turn() -> list:  # type: ignore[type-arg]
    """Tool cards in people's words (issue 30 item 5): a read file collapsed to how much
    was read, a denial without the model's instructions, a fleet's items as a list."""
    research, backend = ("f2/research",), ("f2/backend",)
    items = json.dumps(
        {
            "items": [
                {"id": "research", "prompt": "Map the greeting code", "read_only": True},
                {"id": "backend", "prompt": "Rename in the API", "depends_on": ["research"]},
                {"id": "docs", "prompt": "Update the docs", "depends_on": ["backend"]},
            ]
        }
    )
    numbered = "".join(f"{n:>6}\tline {n}\n" for n in range(1, 43))
    fleet = _fleet_result()
    return [
        *text_steps("I'll read the module first."),
        *tool_steps(
            "c1",
            "read_file",
            {"path": "src/reasonix_demo/app.py"},
            numbered,
            summary="Read 42 lines",
        ),
        *tool_steps(
            "c2",
            "bash",
            {"command": "rm -rf build"},
            DENIAL.replace("write_file", "bash"),
            outcome="denied",
            summary="You denied it.",
            for_model=True,
        ),
        ToolCallStarted(call_id="f2", name="fleet", arguments=items),
        _item("research", "waiting", call="f2"),
        _item("backend", "waiting", "research", call="f2"),
        _item("docs", "waiting", "backend", call="f2"),
        SubagentStarted(
            name="explore", child_path=research, tool_call_id="f2", fleet_item="research"
        ),
        _child(research, _child_usage(9_000, 7_200, 0.0004)),
        SubagentFinished(name="explore", child_path=research, tool_call_id="f2", status="done"),
        _item("research", "done", call="f2"),
        SubagentStarted(name="task", child_path=backend, tool_call_id="f2", fleet_item="backend"),
        SubagentFinished(
            name="task", ok=False, child_path=backend, tool_call_id="f2", status="blocked"
        ),
        _item("backend", "failed", "research", call="f2"),
        _item(
            "docs",
            "skipped",
            "backend",
            reason="skipped: depends on 'backend', which failed",
            call="f2",
        ),
        ToolCallFinished(
            call_id="f2",
            name="fleet",
            result=fleet.render(),
            is_error=True,
            outcome="error",
            summary=fleet.summary(),
            for_model=True,
        ),
        *text_steps("The backend item is blocked on its database."),
    ]


def fleet_approval_turn() -> list:  # type: ignore[type-arg]
    """The approval of a fleet: its items one per line (issue 30 item 5), as the
    engine asks it (summarize_call, detail_lines)."""
    from reasonix_core.permission.summary import summarize_call

    args = {
        "items": [
            {"id": "research", "prompt": "Map where greet is used", "read_only": True},
            {
                "id": "backend",
                "prompt": "Rename greet to welcome in the API\nand its tests",
                "depends_on": ["research"],
                "write_paths": ["src/api"],
            },
            {"id": "docs", "prompt": "Update the docs", "profile": "writer"},
        ]
    }
    request = ApprovalRequest(
        tool="fleet",
        arguments=args,
        call_id="call_00_9f3c",
        read_only=False,
        scope="fleet",
        summary=summarize_call("fleet", args),
    )
    return [
        *text_steps("I'll split the rename across three subagents."),
        ToolCallStarted(call_id="call_00_9f3c", name="fleet", arguments=json.dumps(args)),
        Approval(request=request),
        Hold(),
    ]
