"""Built-in tools are listed by spec and imported by their first call (start-up)."""

from __future__ import annotations

import subprocess
import sys

from reasonix_core.tool import builtin_tools
from reasonix_core.tool.builtin import BUILTIN_TOOLS
from reasonix_core.tool.registry import LazyTool

# The delegation tools run the subagent runner, which builds agents: they live
# above the tool layer (docs/SUBAGENTS.md), not in tool/builtin/.
DELEGATION_MODULE = "reasonix_core.subagent.tools"
# exit_plan_mode reaches the host's plan approval and saved plans (coordinator/).
PLAN_MODE_MODULE = "reasonix_core.coordinator.plan_mode"
# The goal tools read and change the session's goal projection (goal/).
GOAL_MODULE = "reasonix_core.goal.tools"


def test_each_spec_names_the_class_that_implements_it() -> None:
    for tool in builtin_tools():
        assert isinstance(tool, LazyTool)
        real = tool.load()
        module = type(real).__module__
        assert module in (
            f"reasonix_core.tool.builtin.{tool.name}",
            DELEGATION_MODULE,
            PLAN_MODE_MODULE,
            GOAL_MODULE,
        )
        for field in ("name", "description", "read_only", "family", "parameters"):
            assert getattr(real, field) == getattr(tool, field), (tool.name, field)
    assert [t.name for t in builtin_tools()] == [spec.name for spec in BUILTIN_TOOLS]


def test_building_the_tool_list_imports_no_tool_module() -> None:
    code = (
        "import sys\n"
        "from reasonix_core.tool import ToolRegistry, builtin_tools\n"
        "registry = ToolRegistry(builtin_tools())\n"
        "assert len(registry) == 29, len(registry)\n"
        "loaded = [m for m in sys.modules if m.startswith('reasonix_core.tool.builtin.')]\n"
        "specs = 'reasonix_core.tool.builtin.specs'\n"
        "assert specs in loaded, loaded\n"
        "assert all(m == specs or m.startswith(specs + '.') for m in loaded), loaded\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
