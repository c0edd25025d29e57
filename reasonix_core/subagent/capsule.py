"""The ContextCapsule: what a child started from (seed 000 §3.13).

Recorded in the child transcript's sidecar (``<child>.capsule.json``): the
workspace, where the system prompt came from and its hash, the tool scope and
the schemas' hash, model and effort, the parent session and tool call, and an
``inherited`` block whose flags are all false (a child inherits nothing
implicitly). It holds references and digests, never a copy of the parent's
context.

``capsuleHash`` identifies the starting context: it covers every field that
decides what the child sees and leaves out who asked (the parent ids), so two
runs from the same context share a hash and two that behaved differently can
be compared field by field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonix_core.fsutil import PRIVATE_FILE, atomic_write_text

#: What a child could have inherited and does not; every flag is false by design.
INHERITED: tuple[str, ...] = (
    "reasonix_md",
    "agents_md",
    "claude_md",
    "memory",
    "parent_conversation",
    "goal",
    "planner_output",
    "sibling_results",
)

# Who asked, not what the child sees: outside the hash.
_IDENTITY = ("parent_session_id", "parent_tool_call_id")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextCapsule:
    workspace: str
    system_prompt_source: str
    system_prompt_sha256: str
    tools: tuple[str, ...]
    tool_schema_sha256: str
    model: str
    effort: str
    read_only: bool
    # Resolved claimed paths (workspace-relative where inside it); None for a
    # read-only child, which writes nothing.
    write_claim: tuple[str, ...] | None
    depth: int
    parent_session_id: str = ""
    parent_tool_call_id: str = ""
    continued_from: str | None = None
    # The earlier child's transcript this run copied (fork_from), else None.
    forked_from: str | None = None
    # The run options the child was told (plan mode, language), only those set.
    run_options: dict[str, object] = field(default_factory=dict)
    # The session's tools the child did not get, and why (bash without a sandbox
    # that can rebind the claim, the memory tools, ...).
    dropped_tools: dict[str, str] = field(default_factory=dict)
    inherited: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(INHERITED, False))

    def _fields(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace,
            "system_prompt": {
                "source": self.system_prompt_source,
                "sha256": self.system_prompt_sha256,
            },
            "tools": {
                "names": list(self.tools),
                "schema_sha256": self.tool_schema_sha256,
                "dropped": dict(self.dropped_tools),
            },
            "model": self.model,
            "effort": self.effort,
            "read_only": self.read_only,
            "write_claim": list(self.write_claim) if self.write_claim is not None else None,
            "depth": self.depth,
            "parent_session_id": self.parent_session_id,
            "parent_tool_call_id": self.parent_tool_call_id,
            "continued_from": self.continued_from,
            "forked_from": self.forked_from,
            "run_options": dict(sorted(self.run_options.items())),
            "inherited": dict(sorted(self.inherited.items())),
        }

    @property
    def capsule_hash(self) -> str:
        data = {k: v for k, v in self._fields().items() if k not in _IDENTITY}
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return sha256_text(canonical)[:16]

    def to_json(self) -> dict[str, Any]:
        return {"type": "context_capsule", **self._fields(), "capsuleHash": self.capsule_hash}

    def write(self, path: Path) -> None:
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"
        atomic_write_text(path, text, mode=PRIVATE_FILE)  # beside the session: private
