"""Structural guarantees of delegation, checked on the source and the types:
one construction primitive (seed 000 §3.15) and profiles that never widen (§3.10)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import ClassVar

import pytest

import reasonix_core
import reasonix_tui
from reasonix_core.skills import Skill
from reasonix_core.subagent.completion import Kind, Status
from reasonix_core.subagent.profile import Profile, ProfileError, profile_from_skill
from reasonix_core.tool.builtin.specs import COMPLETION_STATUSES, EVIDENCE_KINDS

# One module constructs the underlying Agent, and two call it: the session's
# builder (the top-level agent) and the subagent runner (every child). A new
# entry point must compile a SubagentSpec instead; adding a module here needs a
# reason (seed 000 §3.15: the list is debt, not precedent).
AGENT_CONSTRUCTORS = {"reasonix_core/agent/assemble.py"}
AGENT_ASSEMBLERS = {
    "reasonix_core/coordinator/build.py",
    "reasonix_core/session/build.py",
    "reasonix_core/subagent/runner.py",
}


def _sources() -> list[Path]:
    roots = [Path(reasonix_core.__file__).parent, Path(reasonix_tui.__file__).parent]
    return [p for root in roots for p in sorted(root.rglob("*.py"))]


def _calls(tree: ast.AST, callee: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name == callee:
                return True
    return False


def _constructs_agent(tree: ast.AST) -> bool:
    return _calls(tree, "Agent")


def _found(callee: str) -> set[str]:
    base = Path(reasonix_core.__file__).parent.parent
    return {
        p.relative_to(base).as_posix()
        for p in _sources()
        if _calls(ast.parse(p.read_text(encoding="utf-8")), callee)
    }


def test_spawn_boundary_only_the_runner_builds_child_agents() -> None:
    assert _found("Agent") == AGENT_CONSTRUCTORS
    assert _found("assemble_agent") == AGENT_ASSEMBLERS


def test_spawn_boundary_sees_a_new_construction(tmp_path: Path) -> None:
    # The check itself works: a module that builds an Agent is found.
    assert _constructs_agent(ast.parse("from x import Agent\nAgent(provider=p)\n"))
    assert _constructs_agent(ast.parse("import loop\nloop.Agent()\n"))
    assert not _constructs_agent(ast.parse("Agent\n"))


# A profile carries capability upper bounds, never per-run values.
PROFILE_FIELDS = {
    "name",
    "description",
    "system_prompt",
    "model",
    "effort",
    "read_only",
    "allowed_tools",
}


def test_profile_fields_never_widen() -> None:
    fields = {f.name for f in dataclasses.fields(Profile)}
    assert fields == PROFILE_FIELDS, (
        "Profile gained or lost a field: a profile holds only capability upper bounds "
        "(model, effort, read-only, allowed-tools); per-run values such as max_turns, "
        "write_paths or retries belong to the task (SubagentSpec) or the scheduler"
    )
    assert Profile.__dataclass_params__.frozen  # type: ignore[attr-defined]


def _skill(**overrides: object) -> Skill:
    values: dict[str, object] = {
        "name": "reviewer",
        "description": "reviews diffs",
        "body": "You review code.\n",
        "path": Path("/skills/reviewer/SKILL.md"),
        "run_as": "subagent",
        "model": None,
        "effort": None,
        "read_only": False,
        "allowed_tools": None,
    }
    values.update(overrides)
    return Skill(**values)  # type: ignore[arg-type]


def test_profile_from_skill_narrows_only() -> None:
    profile = profile_from_skill(
        _skill(read_only=True, allowed_tools=("read_file", "grep"), model="p/m", effort="high")
    )
    assert profile == Profile(
        name="reviewer",
        description="reviews diffs",
        system_prompt="You review code.\n",
        model="p/m",
        effort="high",
        read_only=True,
        allowed_tools=("read_file", "grep"),
    )
    # No limit in the file stays no limit; an empty body falls back to the default prompt.
    loose = profile_from_skill(_skill(body="  \n"))
    assert loose.allowed_tools is None and loose.system_prompt is None
    assert loose.read_only is False
    # An empty allowed-tools list is a limit (nothing), not "no limit".
    assert profile_from_skill(_skill(allowed_tools=())).allowed_tools == ()


def test_an_inline_skill_is_not_a_profile() -> None:
    with pytest.raises(ProfileError, match="runAs: subagent"):
        profile_from_skill(_skill(run_as="inline"))


def test_completion_vocabulary_matches_the_schema() -> None:
    assert set(Status.__args__) == set(COMPLETION_STATUSES)  # type: ignore[attr-defined]
    assert set(Kind.__args__) == set(EVIDENCE_KINDS)  # type: ignore[attr-defined]


def _capsule(**overrides: object):
    from reasonix_core.subagent.capsule import ContextCapsule

    values: dict[str, object] = {
        "workspace": "/ws",
        "system_prompt_source": "default_task",
        "system_prompt_sha256": "a" * 64,
        "tools": ("read_file", "write_file"),
        "tool_schema_sha256": "b" * 64,
        "model": "p/m",
        "effort": "high",
        "read_only": False,
        "write_claim": ("src",),
        "depth": 1,
        "parent_session_id": "s1",
        "parent_tool_call_id": "c1",
    }
    values.update(overrides)
    return ContextCapsule(**values)  # type: ignore[arg-type]


def test_capsule_hash_is_stable_and_covers_what_the_child_sees() -> None:
    base = _capsule()
    assert base.capsule_hash == _capsule().capsule_hash
    assert base.to_json()["capsuleHash"] == base.capsule_hash
    # Who asked does not change the starting context ...
    assert _capsule(parent_session_id="s2", parent_tool_call_id="c9").capsule_hash == (
        base.capsule_hash
    )
    # ... anything the child sees does.
    for change in (
        {"model": "p/other"},
        {"effort": "low"},
        {"tools": ("read_file",)},
        {"tool_schema_sha256": "c" * 64},
        {"system_prompt_sha256": "d" * 64},
        {"system_prompt_source": "profile:x"},
        {"write_claim": ("docs",)},
        {"read_only": True},
        {"depth": 2},
        {"workspace": "/elsewhere"},
        {"inherited": {"memory": True}},
    ):
        assert _capsule(**change).capsule_hash != base.capsule_hash, change


def test_unknown_writers_are_dropped_from_a_child() -> None:
    from reasonix_core.subagent.scope import child_scope
    from reasonix_core.tool import ToolFamily, builtin_tools

    class Custom:
        name = "deploy"
        description = "ships it"
        read_only = False
        family = ToolFamily.OTHER
        parameters: ClassVar[dict[str, object]] = {"type": "object"}

        async def execute(self, args, ctx):  # pragma: no cover
            raise AssertionError

    class CustomEdit(Custom):
        name = "patch_file"
        family = ToolFamily.EDIT  # a file writer that does not declare its paths

    session = [*builtin_tools(), Custom(), CustomEdit()]
    scope = child_scope(session, read_only=False, can_nest=True, bash_problem="no", allowed=None)
    assert "write_file" in scope.names and "move_file" in scope.names
    for dropped in ("deploy", "patch_file", "bash", "ask", "remember", "kill_shell"):
        assert dropped not in scope.names and dropped in scope.dropped
    assert scope.dropped["bash"] == "no"
    readers = child_scope(session, read_only=True, can_nest=False, bash_problem=None, allowed=None)
    assert {"read_file", "grep", "ls", "glob", "todo_write", "web_fetch"} == set(readers.names)
