"""Background facts: lifecycle, revisions, archive, path safety, permission hook."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reasonix_core.agent.session import workspace_key
from reasonix_core.memory.facts import (
    AUTO_SAVE_MAX_BODY,
    Fact,
    FactConflict,
    FactError,
    FactNotFound,
    FactStore,
    auto_save_reason,
    credential_reason,
    sensitive_reason,
)
from reasonix_core.permission.policy import Policy, Verdict, explain
from reasonix_core.tool import ToolContext, ToolRegistry, builtin_tools
from reasonix_core.tool.env import SessionEnv


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(home: Path, workspace: Path, clock: Clock) -> FactStore:
    return FactStore(home, workspace, clock=clock)


def project_dir(home: Path, workspace: Path) -> Path:
    return home / "memory" / "project" / workspace_key(workspace)


# -- lifecycle -----------------------------------------------------------------


def test_create_writes_one_markdown_file_per_fact(store, home, workspace):
    fact = store.create(type="project", title="Tests run with pytest", body="Use `pytest -q`.")
    path = project_dir(home, workspace) / f"{fact.id}.md"
    assert path.is_file()
    text = path.read_text()
    assert text.startswith("---\n") and "\nrevision: 1\n" in text and "Use `pytest -q`." in text
    assert fact.id.startswith("tests-run-with-pytest-")
    assert fact.revision == 1 and fact.scope == "project"
    assert fact.created == fact.updated == "2025-03-01T12:00:00+00:00"
    assert Fact.from_markdown(text) == fact
    assert store.get(fact.id) == fact


def test_default_scope_follows_type(store, home):
    user = store.create(type="user", title="Prefers short answers", body="Keep it brief.")
    ref = store.create(type="reference", title="Bug tracker", body="Issues live in Linear INGEST.")
    assert user.scope == "global" and ref.scope == "project"
    assert (home / "memory" / "global" / f"{user.id}.md").is_file()
    assert [f.id for f in store.list(scope="global")] == [user.id]


def test_update_snapshots_old_revision_and_keeps_id(store, home, workspace, clock):
    fact = store.create(type="project", title="DB", body="SQLite in dev.", keywords=["db"])
    clock.advance(days=1)
    new = store.update(fact.id, body="Postgres in dev and prod.")
    assert new.id == fact.id and new.revision == 2
    assert new.created == fact.created and new.updated > fact.updated
    assert new.keywords == ("db",)
    snap = project_dir(home, workspace) / ".revisions" / fact.id / "000001.md"
    assert Fact.from_markdown(snap.read_text()) == fact
    clock.advance(days=1)
    third = store.update(fact.id, title="Database engine", expected_revision=2)
    assert third.revision == 3
    assert [r.revision for r in store.revisions(fact.id)] == [1, 2]
    assert store.get(fact.id).body == "Postgres in dev and prod."


def test_identical_update_is_a_no_op(store):
    fact = store.create(type="project", title="A", body="b")
    assert store.update(fact.id, body="b") == fact
    assert store.revisions(fact.id) == []


def test_update_with_wrong_expected_revision_is_a_conflict(store):
    fact = store.create(type="project", title="A", body="b")
    store.update(fact.id, body="c")
    with pytest.raises(FactConflict, match="revision 2, not 1"):
        store.update(fact.id, body="d", expected_revision=1)


def test_concurrent_update_of_same_revision_cannot_both_win(store, home, workspace):
    fact = store.create(type="project", title="A", body="b")
    # Another writer already snapshotted revision 1 (it is mid-update).
    rev_dir = project_dir(home, workspace) / ".revisions" / fact.id
    rev_dir.mkdir(parents=True)
    (rev_dir / "000001.md").write_text(fact.to_markdown())
    with pytest.raises(FactConflict, match="changed concurrently"):
        store.update(fact.id, body="mine")
    assert store.get(fact.id).body == "b"


def test_forget_archives_and_restore_makes_higher_revision(store, home, workspace):
    fact = store.create(type="project", title="Old build", body="make all")
    archived = store.forget(fact.id, reason="replaced by just")
    folder = project_dir(home, workspace)
    assert not (folder / f"{fact.id}.md").exists()
    assert (folder / ".archive" / f"{fact.id}.md").is_file()
    assert (
        archived.revision == 2
        and archived.archived
        and archived.archive_reason == "replaced by just"
    )
    assert store.list() == []
    assert [f.id for f in store.list(archived=True)] == [fact.id]
    assert store.get(fact.id).archived  # still readable
    with pytest.raises(FactNotFound, match="already archived"):
        store.forget(fact.id)
    with pytest.raises(FactNotFound, match="archived"):
        store.update(fact.id, body="x")
    restored = store.restore(fact.id)
    assert restored.revision == 3 and restored.archived is None
    assert [f.id for f in store.list()] == [fact.id]
    assert not (folder / ".archive" / f"{fact.id}.md").exists()
    assert [r.revision for r in store.revisions(fact.id)] == [1, 2]


def test_same_title_in_same_scope_is_refused_not_overwritten(store):
    fact = store.create(type="project", title="Tests run with pytest", body="one")
    with pytest.raises(FactConflict, match=f"id={fact.id!r}"):
        store.create(type="project", title="tests  run with PYTEST!", body="two")
    assert store.get(fact.id).body == "one"
    # The same title in the other scope is a different fact.
    other = store.create(type="project", scope="global", title="Tests run with pytest", body="g")
    assert other.scope == "global"


def test_credentials_are_never_stored(store):
    with pytest.raises(FactError, match="credentials"):
        store.create(type="reference", title="Key", body="OPENAI key sk-abcdefghijklmnopqrstuv")
    with pytest.raises(FactError, match="private key"):
        store.create(type="user", title="ssh", body="-----BEGIN OPENSSH PRIVATE KEY-----\nxx")
    assert store.list() == []


def test_field_limits(store):
    with pytest.raises(FactError, match="title is empty"):
        store.create(type="project", title="  ", body="x")
    with pytest.raises(FactError, match="at most 4000"):
        store.create(type="project", title="t", body="x" * 4001)
    with pytest.raises(FactError, match="unknown type"):
        store.create(type="opinion", title="t", body="x")


# -- path safety -------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["../evil", "a/b", "/etc/passwd", "..", "x.md", "A-B", "", "-x", "a\x00b", "ok/../x"]
)
def test_ids_that_could_escape_are_refused(store, bad):
    with pytest.raises(FactError, match="invalid fact id"):
        store.get(bad)
    with pytest.raises(FactError, match="invalid fact id"):
        store.update(bad, body="x")
    with pytest.raises(FactError, match="invalid fact id"):
        store.forget(bad)


def test_symlinked_fact_file_is_refused(store, home, workspace, tmp_path):
    fact = store.create(type="project", title="A", body="b")
    path = project_dir(home, workspace) / f"{fact.id}.md"
    target = tmp_path / "elsewhere.md"
    target.write_text(path.read_text())
    path.unlink()
    path.symlink_to(target)
    with pytest.raises(FactError, match="symlink"):
        store.get(fact.id)
    with pytest.raises(FactError, match="symlink"):
        store.update(fact.id, body="changed")
    assert "changed" not in target.read_text()
    assert store.list() == []  # skipped, not followed


def test_symlinked_scope_directory_is_refused(home, workspace, tmp_path, clock):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "memory" / "project").mkdir(parents=True)
    project_dir(home, workspace).symlink_to(elsewhere)
    store = FactStore(home, workspace, clock=clock)
    with pytest.raises(FactError, match="symlink"):
        store.create(type="project", title="A", body="b")
    with pytest.raises(FactError, match="symlink"):
        store.list()
    assert list(elsewhere.iterdir()) == []


def test_symlinked_revisions_directory_is_refused(store, home, workspace, tmp_path):
    fact = store.create(type="project", title="A", body="b")
    elsewhere = tmp_path / "revs"
    elsewhere.mkdir()
    (project_dir(home, workspace) / ".revisions").symlink_to(elsewhere)
    with pytest.raises(FactError, match="symlink"):
        store.update(fact.id, body="c")
    assert list(elsewhere.iterdir()) == []
    assert store.get(fact.id).body == "b"


def test_create_never_overwrites_an_existing_file(store, home, workspace, monkeypatch):
    import reasonix_core.memory.facts as facts_mod

    folder = project_dir(home, workspace)
    folder.mkdir(parents=True)
    (folder / "taken-000000.md").write_text("not a fact, but mine")
    ids = iter(["taken-000000", "fresh-111111"])
    monkeypatch.setattr(facts_mod, "new_fact_id", lambda title: next(ids))
    fact = store.create(type="project", title="Taken", body="b")
    assert fact.id == "fresh-111111"
    assert (folder / "taken-000000.md").read_text() == "not a fact, but mine"


def test_restore_refuses_to_overwrite_an_active_fact(store, home, workspace):
    fact = store.create(type="project", title="A", body="b")
    store.forget(fact.id)
    folder = project_dir(home, workspace)
    (folder / f"{fact.id}.md").write_text("squatter")
    with pytest.raises(FactConflict, match="refusing to overwrite"):
        store.restore(fact.id)
    assert (folder / f"{fact.id}.md").read_text() == "squatter"


def test_mismatched_file_name_and_id_is_refused(store, home, workspace):
    fact = store.create(type="project", title="A", body="b")
    folder = project_dir(home, workspace)
    os.rename(folder / f"{fact.id}.md", folder / "other-123456.md")
    with pytest.raises(FactError, match="does not match"):
        store.get("other-123456")


def test_parallel_creates_with_distinct_titles_all_land(store):
    errors: list[Exception] = []

    def work(n: int) -> None:
        try:
            store.create(type="project", title=f"fact number {n}", body=f"body {n}")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.list()) == 12


# -- sensitivity and the permission hook ----------------------------------------------


def test_sensitivity_detectors():
    assert credential_reason("token ghp_abcdefghijklmnopqrstuvwxyz0123") is not None
    assert credential_reason("password = hunter2hunter") is not None
    assert credential_reason("postgres://app:s3cretpw@db/prod") is not None
    assert credential_reason("Run tests with pytest -q") is None
    assert sensitive_reason("the staging password is in 1Password") is not None
    assert sensitive_reason("mail alice@example.com") is not None
    assert sensitive_reason("数据库密码在保险箱里") is not None
    assert sensitive_reason("CI runs on every push to main") is None


def auto(**args):
    return auto_save_reason(args)


def test_auto_save_only_for_bounded_nonsensitive_create_only_project_facts():
    base = {"title": "CI", "content": "CI runs ruff then pytest.", "type": "project"}
    assert auto(**base)
    assert auto(**{**base, "type": "reference"})
    assert auto(**{**base, "scope": "project", "keywords": ["ci"]})
    assert not auto(**{**base, "id": "ci-123456"})  # update, not create
    assert not auto(**{**base, "type": "user"})
    assert not auto(**{**base, "type": "feedback", "scope": "project"})
    assert not auto(**{**base, "scope": "global"})
    assert not auto(**{**base, "content": "x" * (AUTO_SAVE_MAX_BODY + 1)})
    assert not auto(**{**base, "content": "the deploy token lives in vault"})
    assert not auto(**{**base, "extra": 1})
    assert not auto_save_reason("not a mapping")  # type: ignore[arg-type]


def test_policy_hook_turns_only_the_fallback_ask_into_allow(workspace):
    create = {"title": "CI", "content": "CI runs ruff then pytest.", "type": "project"}
    user = {"title": "Tone", "content": "Be brief.", "type": "user"}
    policy = Policy(workspace=workspace)
    assert policy.decide("remember", False, create).verdict is Verdict.ASK  # no hook installed
    policy.add_auto_allow("remember", auto_save_reason)
    decision = policy.decide("remember", False, create)
    assert decision.verdict is Verdict.ALLOW and "create-only" in decision.reason
    assert policy.decide("remember", False, user).verdict is Verdict.ASK
    assert policy.decide("forget", False, {"id": "ci-123456"}).verdict is Verdict.ASK
    # Explicit deny and ask rules, and mode deny, still win.
    denied = Policy(workspace=workspace, deny=["remember"])
    denied.add_auto_allow("remember", auto_save_reason)
    assert denied.decide("remember", False, create).verdict is Verdict.DENY
    asking = Policy(workspace=workspace, ask=["remember"])
    asking.add_auto_allow("remember", auto_save_reason)
    assert asking.decide("remember", False, create).verdict is Verdict.ASK
    strict = Policy(workspace=workspace, mode="deny")
    strict.add_auto_allow("remember", auto_save_reason)
    assert strict.decide("remember", False, create).verdict is Verdict.DENY
    # A broken hook allows nothing.
    broken = Policy(workspace=workspace)
    broken.add_auto_allow("remember", lambda args: 1 / 0)
    assert broken.decide("remember", False, create).verdict is Verdict.ASK
    assert "decision: allow" in explain(policy, "history")


# -- the tools -------------------------------------------------------------------------


@pytest.fixture
def tools(home, workspace, clock, tmp_path):
    registry = ToolRegistry(builtin_tools(["memory", "remember", "forget"]))
    store = FactStore(home, workspace, clock=clock)
    ctx = ToolContext(env=SessionEnv(workspace=workspace, temp_dir=tmp_path), facts=store)
    return registry, ctx, store


async def test_tools_round_trip(tools, clock):
    registry, ctx, _store = tools
    assert [registry.get(n).read_only for n in ("memory", "remember", "forget")] == [
        True,
        False,
        False,
    ]
    saved = await registry.call(
        "remember",
        '{"title": "Migrations", "content": "Use alembic; never edit old revisions.", '
        '"type": "project", "keywords": ["alembic", "db"]}',
        ctx,
    )
    assert not saved.is_error and saved.text.startswith("remember: saved project fact ")
    fact_id = saved.meta["id"]
    dup = await registry.call(
        "remember", '{"title": "migrations", "content": "x", "type": "project"}', ctx
    )
    assert dup.is_error and fact_id in dup.text
    clock.advance(days=2)
    upd = await registry.call(
        "remember",
        f'{{"id": "{fact_id}", "title": "Migrations", "content": "Use alembic autogenerate.", '
        '"type": "project"}',
        ctx,
    )
    assert "updated to revision 2" in upd.text
    moved = await registry.call(
        "remember",
        f'{{"id": "{fact_id}", "title": "M", "content": "c", "type": "project", "scope": "global"}}',
        ctx,
    )
    assert moved.is_error and "scope cannot change" in moved.text

    found = await registry.call("memory", '{"operation": "search", "query": "alembic"}', ctx)
    assert fact_id in found.text and "rev 2" in found.text
    read = await registry.call("memory", f'{{"operation": "read", "id": "{fact_id}"}}', ctx)
    assert "revision: 2 (1 earlier revision kept)" in read.text
    assert "Use alembic autogenerate." in read.text
    listed = await registry.call("memory", '{"operation": "list"}', ctx)
    assert "memory: 1 facts:" in listed.text

    gone = await registry.call("forget", f'{{"id": "{fact_id}", "reason": "obsolete"}}', ctx)
    assert not gone.is_error and "archived" in gone.text
    assert "no facts saved" in (await registry.call("memory", '{"operation": "list"}', ctx)).text
    archived = await registry.call("memory", '{"operation": "list", "archived": true}', ctx)
    assert fact_id in archived.text and "archived 2025-03-03" in archived.text
    escape = await registry.call("memory", '{"operation": "read", "id": "../../x"}', ctx)
    assert escape.is_error and "invalid fact id" in escape.text
    secret = await registry.call(
        "remember", '{"title": "k", "content": "AKIAABCDEFGHIJKLMNOP", "type": "reference"}', ctx
    )
    assert secret.is_error and "never stores credentials" in secret.text
