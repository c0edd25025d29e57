"""The session's standing instructions: the instruction files gathered at session
start (``reasonix_core/agent/instructions.py``), with a project file's imports from
outside the project asked about first."""

from __future__ import annotations

import functools
from pathlib import Path

from reasonix_core.agent.instructions import Instructions, OutsideImport, gather_instructions
from reasonix_core.permission.approver import ApprovalDecision, ApprovalRequest, Approver
from reasonix_core.permission.policy import Policy


async def standing_instructions(
    workspace: Path, home: Path, policy: Policy, approver: Approver
) -> Instructions:
    """The session's instruction files. A project file's import from outside the
    project is asked about, once per file (an approved file's own outside imports are
    asked about in turn); with nobody to ask (a headless run) it stays out, with a
    notice."""
    gather = functools.partial(
        gather_instructions,
        workspace,
        home,
        policy.forbid_read,
        functools.partial(policy.read_denied, "read_file"),
    )
    found = gather()
    if not approver.interactive:
        return found
    asked: set[str] = set()
    approved: set[str] = set()
    while new := [o for o in found.outside if o.real not in asked]:
        for outside in new:
            asked.add(outside.real)
            if await _approve_import(approver, outside):
                approved.add(outside.real)
        found = gather(approved=approved)
    return found


async def _approve_import(approver: Approver, outside: OutsideImport) -> bool:
    request = ApprovalRequest(
        tool="read_file",
        arguments={"path": outside.real},
        call_id="",
        read_only=True,
        scope="",
        summary=f"Include {outside.label} in the standing instructions "
        f"(outside the project, imported by {outside.importer})",
    )
    decision = await approver.decide(request)
    return decision in (ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_SESSION)
