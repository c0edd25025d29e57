"""Subagents (seed 000 §3.10-§3.17, docs/SUBAGENTS.md).

One construction primitive: every entry point (``task``, ``read_only_task``,
``fleet``, ``run_skill`` for ``runAs: subagent``, ``reasonix subagent run|try``)
compiles its request into a :class:`~reasonix_core.subagent.spec.SubagentSpec`
and hands it to :class:`~reasonix_core.subagent.runner.SubagentRunner`, the only
place that resolves depth, tool scope, permissions, sandbox, write claims,
model, transcript and capsule, receipts and the completion contract.
"""
