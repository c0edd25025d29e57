"""The core stays UI-free: no module under reasonix_core imports textual, rich or reasonix_tui."""

from __future__ import annotations

import ast
from pathlib import Path

import reasonix_core

FORBIDDEN = ("textual", "rich", "reasonix_tui")


def test_no_core_module_imports_ui_packages():
    root = Path(reasonix_core.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in FORBIDDEN:
                    offenders.append(f"{path.relative_to(root)}:{node.lineno} imports {name}")
    assert offenders == []


def test_no_asyncio_run_in_core():
    root = Path(reasonix_core.__file__).parent
    hits = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "asyncio.run(" in p.read_text(encoding="utf-8")
    ]
    assert hits == []


#: What sits above ``agent/``: the session (the composition root) builds these over
#: the agent, so the agent imports none of them, deferred or for types only.
ABOVE_AGENT = ("coordinator", "goal", "subagent", "checkpoint", "session")


def test_agent_imports_nothing_above_it():
    root = Path(reasonix_core.__file__).parent
    offenders = []
    for path in (root / "agent").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == "reasonix_core" and len(parts) > 1 and parts[1] in ABOVE_AGENT:
                    offenders.append(
                        f"agent/{path.relative_to(root / 'agent')}:{node.lineno} {name}"
                    )
    assert offenders == []
