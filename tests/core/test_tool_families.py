"""The built-in list is written once, in order, and each tool declares its
family; the permission rules read the family instead of lists of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasonix_core.permission import Policy, Verdict, explain, parse_rule
from reasonix_core.tool import ToolFamily, ToolRegistry, builtin_names, builtin_tools
from reasonix_core.tool.builtin import BUILTIN_TOOLS
from tests.core.tool_helpers import FILE_TOOLS

# The provider-visible order: part of the cached prompt prefix.
ORDER = [
    *FILE_TOOLS,
    "bash",
    "bash_output",
    "kill_shell",
    "todo_write",
    "web_fetch",
    "ask",
    "history",
    "memory",
    "remember",
    "forget",
    "run_skill",
    "task",
    "read_only_task",
    "fleet",
    "delete_range",
    "delete_symbol",
    "notebook_edit",
    "exit_plan_mode",
    "create_goal",
    "get_goal",
    "update_goal",
]
FAMILIES = {
    "read": {"read_file", "ls", "glob", "grep"},
    "edit": {
        "write_file",
        "edit_file",
        "multi_edit",
        "move_file",
        "delete_range",
        "delete_symbol",
        "notebook_edit",
    },
    "execute": {"bash", "bash_output", "kill_shell"},
    "network": {"web_fetch"},
    "other": {
        "todo_write",
        "ask",
        "history",
        "memory",
        "remember",
        "forget",
        "run_skill",
        "task",
        "read_only_task",
        "fleet",
        "exit_plan_mode",
        "create_goal",
        "get_goal",
        "update_goal",
    },
}


def test_the_builtin_list_is_the_provider_order() -> None:
    assert [tool.name for tool in BUILTIN_TOOLS] == ORDER
    assert builtin_names() == ORDER
    assert ToolRegistry(builtin_tools()).names == ORDER


def test_enabled_subset_keeps_the_list_order() -> None:
    assert [t.name for t in builtin_tools(["forget", "grep", "read_file"])] == [
        "read_file",
        "grep",
        "forget",
    ]


def test_every_builtin_declares_its_family() -> None:
    declared: dict[str, set[str]] = {}
    for tool in BUILTIN_TOOLS:
        assert isinstance(tool.family, ToolFamily), tool.name
        declared.setdefault(tool.family.value, set()).add(tool.name)
    assert declared == FAMILIES


@pytest.mark.parametrize(("alias", "family"), [("Read", "read"), ("Edit", "edit")])
def test_family_aliases_cover_exactly_their_family(alias: str, family: str) -> None:
    rule = parse_rule(alias)
    assert {name for name in ORDER if rule.applies_to(name)} == FAMILIES[family]


def test_rules_name_no_tool_that_does_not_exist() -> None:
    # A name that is not a built-in is not folded to lower case: it is not ours.
    assert parse_rule("Notebook_Run").tool == "Notebook_Run"
    assert not parse_rule("Edit").applies_to("notebook_run")
    # notebook_edit is a built-in now (docs/TOOL_CONTRACT.md): an Edit, folded like one.
    assert parse_rule("Notebook_Edit").tool == "notebook_edit"
    assert parse_rule("Edit").applies_to("notebook_edit")
    assert parse_rule("Read_File").tool == "read_file"


def test_explain_uses_what_the_tool_declares(tmp_path: Path) -> None:
    policy = Policy(workspace=tmp_path)
    assert "decision: allow" in explain(policy, "bash_output")
    assert "decision: ask" in explain(policy, "kill_shell")
    # web_fetch declares itself read-only, but network egress still asks.
    assert policy.decide("web_fetch", True, {"url": "https://example.com/"}).verdict is (
        Verdict.ASK
    )
