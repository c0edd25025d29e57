"""``--ablate subagent`` (issue 32 item 5, seed 000 §3.17): the arm without the
delegation tools, named in the run's metrics."""

from __future__ import annotations

import json

from reasonix_testkit import Reply
from tests.conftest import reasonix

DELEGATION = {"task", "read_only_task", "fleet"}


def tools_sent(server) -> set[str]:
    return {t["function"]["name"] for t in json.loads(server.requests[-1].body)["tools"]}


def test_ablate_subagent_removes_the_delegation_tools_and_names_the_arm(
    workspace, configured, tmp_path
):
    server = configured
    server.enqueue(Reply(content="full arm"), Reply(content="ablated arm"))
    full = reasonix(workspace, "run", "--metrics", str(tmp_path / "full.json"), "hi")
    assert full.returncode == 0, full.stderr
    assert DELEGATION <= tools_sent(server)
    assert json.loads((tmp_path / "full.json").read_text())["arm"] == "full"

    ablated = reasonix(
        workspace, "run", "--ablate", "subagent", "--output-format", "json",
        "--metrics", str(tmp_path / "ablated.json"), "hi",
    )  # fmt: skip
    assert ablated.returncode == 0, ablated.stderr
    sent = tools_sent(server)
    assert not DELEGATION & sent and "read_file" in sent
    assert json.loads((tmp_path / "ablated.json").read_text())["arm"] == "no-subagent"


def test_an_unknown_ablation_is_a_usage_error(workspace, configured):
    proc = reasonix(workspace, "run", "--ablate", "memory", "hi")
    assert proc.returncode == 2
    assert "--ablate 'memory': one of subagent" in proc.stderr
    assert configured.requests == []
