"""Scripted turns shared by the snapshot modules."""

from __future__ import annotations

from reasonix_core.events import ToolCallStarted, UsageReported
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


def tools_turn() -> list:
    return [
        *reasoning_steps(REASONING),
        *tool_steps(
            "c1",
            "read_file",
            {"path": "src/reasonix_demo/app.py"},
            'def greet(name: str) -> str:\n    return "hi " + name\n',
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
            "c4", "write_file", {"path": "NOTES.md"}, "Denied by the user.", outcome="denied"
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
