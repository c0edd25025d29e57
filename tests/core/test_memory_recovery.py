"""Archived (forgotten) facts can be listed and restored: the ``forget`` tool's
``action=restore`` and ``reasonix memory list|show|restore|forget``, against real
stores under the test's REASONIX_HOME."""

from __future__ import annotations

import json
from pathlib import Path

from reasonix_core.agent.session import workspace_key
from reasonix_core.memory.facts import FactStore
from reasonix_core.tool import ToolContext, ToolRegistry, builtin_tools
from reasonix_core.tool.env import SessionEnv
from tests.conftest import reasonix


def _store(home: Path, workspace: Path) -> FactStore:
    return FactStore(home, workspace.resolve())


async def test_forget_tool_restores_an_archived_fact(home, workspace, tmp_path):
    store = _store(home, workspace)
    fact = store.create(type="project", title="Build tool", body="use just")
    registry = ToolRegistry(builtin_tools(["memory", "forget"]))
    ctx = ToolContext(env=SessionEnv(workspace=workspace, temp_dir=tmp_path), facts=store)
    assert not registry.get("forget").read_only  # restoring asks like archiving
    gone = await registry.call("forget", json.dumps({"id": fact.id}), ctx)
    assert not gone.is_error
    listed = await registry.call("memory", '{"operation": "list", "archived": true}', ctx)
    assert fact.id in listed.text
    back = await registry.call("forget", json.dumps({"id": fact.id, "action": "restore"}), ctx)
    assert not back.is_error, back.text
    assert "restored" in back.text and "revision 3" in back.text
    assert [f.id for f in store.list()] == [fact.id]
    again = await registry.call("forget", json.dumps({"id": fact.id, "action": "restore"}), ctx)
    assert again.is_error and "no archived fact" in again.text
    bad = await registry.call("forget", json.dumps({"id": "../x", "action": "restore"}), ctx)
    assert bad.is_error


def test_cli_lists_shows_restores_and_forgets(home, workspace):
    store = _store(home, workspace)
    fact = store.create(type="project", title="Test command", body="run pytest -q")
    proc = reasonix(workspace, "memory", "forget", fact.id, "--reason", "moved to tox")
    assert proc.returncode == 0, proc.stderr
    assert f"archived {fact.id}" in proc.stdout
    assert "no facts saved" in reasonix(workspace, "memory", "list").stdout
    archived = reasonix(workspace, "memory", "list", "--archived")
    assert archived.returncode == 0 and fact.id in archived.stdout
    shown = reasonix(workspace, "memory", "show", fact.id)
    assert 'archive_reason: "moved to tox"' in shown.stdout and "run pytest -q" in shown.stdout
    restored = reasonix(workspace, "memory", "restore", fact.id)
    assert restored.returncode == 0, restored.stderr
    assert f"restored {fact.id}" in restored.stdout and "revision 3" in restored.stdout
    listed = reasonix(workspace, "memory", "list")
    assert fact.id in listed.stdout and "1 facts" in listed.stdout
    twice = reasonix(workspace, "memory", "restore", fact.id)
    assert twice.returncode == 2
    assert twice.stderr.startswith("reasonix: error: memory restore: no archived fact")
    assert "Traceback" not in twice.stderr


def test_cli_refuses_a_symlinked_archive_and_hostile_ids(home, workspace, tmp_path):
    store = _store(home, workspace)
    fact = store.create(type="project", title="Keep", body="x")
    store.forget(fact.id)
    folder = home / "memory" / "project" / workspace_key(workspace.resolve())
    # An attacker swaps the archive for a link to a folder of planted facts.
    planted = tmp_path / "planted"
    (folder / ".archive").rename(planted)
    (folder / ".archive").symlink_to(planted)
    proc = reasonix(workspace, "memory", "restore", fact.id)
    assert proc.returncode == 2 and proc.stderr.startswith("reasonix: error: memory restore:")
    assert not (folder / f"{fact.id}.md").exists()
    hostile = reasonix(workspace, "memory", "show", "../../etc/passwd")
    assert hostile.returncode == 2 and "Traceback" not in hostile.stderr
    usage = reasonix(workspace, "memory")
    assert usage.returncode == 0 and "restore" in usage.stdout
