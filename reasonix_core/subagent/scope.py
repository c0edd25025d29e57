"""A child's tool scope: which of the session's tools it gets, and why not the rest.

Seed 000 §3.12-§3.13. Built from the session's built-ins and its use_capability proxy:

- read-only tools stay (they touch nothing);
- path-aware writers (a spec declaring ``writes``) stay for writer children,
  bound by the claim through the child's sandbox policy;
- ``bash`` stays only for a writer child whose claim bubblewrap can rebind;
- any other writer (custom, unknown, undeclared paths) is dropped;
- ``use_capability`` becomes a fresh front end that calls read-only targets only;
- what a child must not have: the user's questions and the memory tools
  (a child has no memory), background-job tools (a child leaves no jobs);
- the delegation tools only while a child may still nest (depth);
- a profile's ``allowed-tools`` can only narrow all of this.

Writer children then get ``complete_subtask`` (a child-only tool; its spec is
``specs.COMPLETE_SUBTASK``), last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reasonix_core.subagent.receipts import written_keys
from reasonix_core.tool.base import Tool

#: Session tools no child gets, with the reason.
NOT_FOR_CHILDREN: dict[str, str] = {
    "ask": "a subagent does not question the user; it reports what is unresolved",
    "history": "a subagent has no memory",
    "memory": "a subagent has no memory",
    "remember": "a subagent cannot write memory",
    "forget": "a subagent cannot write memory",
    "bash_output": "a subagent runs no background jobs",
    "kill_shell": "a subagent runs no background jobs",
    "run_skill": "a subagent's prompt carries no skills index (a profile is its whole prompt)",
    "exit_plan_mode": "plan mode and its approval belong to the user's session",
    "create_goal": "the goal belongs to the user's session",
    "get_goal": "the goal belongs to the user's session",
    "update_goal": "the goal belongs to the user's session",
}

#: The delegation tools (a child keeps them only while it may still nest).
DELEGATION = frozenset({"task", "read_only_task", "fleet"})
MCP_PROXY = "use_capability"


@dataclass(frozen=True, slots=True)
class Scope:
    tools: tuple[Tool, ...]
    # name -> why it was left out
    dropped: dict[str, str] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)


def child_scope(
    session_tools: Sequence[Tool],
    *,
    read_only: bool,
    can_nest: bool,
    bash_problem: str | None,
    allowed: tuple[str, ...] | None,
) -> Scope:
    kept: list[Tool] = []
    dropped: dict[str, str] = {}
    for tool in session_tools:
        reason = _why_not(tool, read_only, can_nest, bash_problem)
        if reason is None and allowed is not None and tool.name not in allowed:
            reason = "not in the profile's allowed-tools"
        if reason is None:
            kept.append(tool)
        else:
            dropped[tool.name] = reason
    return Scope(tools=tuple(kept), dropped=dropped)


def _why_not(tool: Tool, read_only: bool, can_nest: bool, bash_problem: str | None) -> str | None:
    name = tool.name
    if name in NOT_FOR_CHILDREN:
        return NOT_FOR_CHILDREN[name]
    if name in DELEGATION:
        if not can_nest:
            return "the maximum subagent depth is reached ([agent] max_subagent_depth)"
        if read_only and not tool.read_only:
            return "a read-only subagent delegates read-only work only"
        return None
    if name == MCP_PROXY:
        return None  # replaced by a read-only front end (runner)
    if name == "bash":
        if read_only:
            return "a read-only subagent runs no commands"
        return bash_problem
    if tool.read_only:
        return None
    if read_only:
        return "a read-only subagent writes nothing"
    if written_keys(tool):
        return None
    return "a writer whose paths the write claim cannot bind"
