"""BM25, the tokenizer and budgeted automatic recall."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reasonix_core.memory.bm25 import BM25, tokenize
from reasonix_core.memory.facts import FactStore
from reasonix_core.memory.recall import (
    CLOSE_TAG,
    MAX_CHARS,
    MAX_FACTS,
    OPEN_TAG,
    Recaller,
    is_generic,
)

# -- tokenizer and BM25 ----------------------------------------------------------------


def test_tokenizer_words_plurals_stopwords_and_identifiers():
    assert tokenize("The tests of read_file ARE failing") == ["test", "read", "file", "failing"]
    assert tokenize("class status x 42") == ["class", "status", "42"]


def test_tokenizer_cjk_bigrams_and_mixed_text():
    assert tokenize("数据库迁移") == ["数据", "据库", "库迁", "迁移"]
    assert tokenize("用pytest跑测试") == ["用", "pytest", "跑测", "测试"]
    assert tokenize("カタカナ") == ["カタ", "タカ", "カナ"]


def test_bm25_matches_the_okapi_formula():
    docs = [["a", "b", "b"], ["b", "c"], ["c", "c", "c", "d"]]
    index = BM25(docs)
    n, avgdl, k1, b = 3, 3.0, 1.5, 0.75

    def expected(doc: list[str], term: str, df: int) -> float:
        tf = doc.count(term)
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))

    scores = index.scores(["b", "c", "b"])  # a repeated query term counts once
    assert scores[0] == pytest.approx(expected(docs[0], "b", 2))
    assert scores[1] == pytest.approx(expected(docs[1], "b", 2) + expected(docs[1], "c", 2))
    assert scores[2] == pytest.approx(expected(docs[2], "c", 2))
    assert [d for d, _ in index.top(["c"], 5)] == [2, 1]
    assert index.top(["zzz"], 5) == [] and BM25([]).top(["a"], 3) == []


def test_bm25_relative_floor_and_filter():
    index = BM25([["x", "y"], ["x"], ["y"], ["x", "y", "x", "y"]])
    best = index.top(["x", "y"], 10)
    floored = index.top(["x", "y"], 10, relative_floor=0.9)
    assert len(floored) < len(best) and floored[0] == best[0]
    assert all(d != 3 for d, _ in index.top(["x"], 10, keep=lambda d: d != 3))


# -- generic turns ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "continue",
        "Continue.",
        "ok",
        "OK, go on please",
        "继续",
        "继续吧",
        "好的，继续",
        "",
        "  ",
        "yes do it",
        "ok 继续",
        "keep going!",
    ],
)
def test_generic_turns(text):
    assert is_generic(text)


@pytest.mark.parametrize(
    "text", ["fix the login bug", "继续修复数据库迁移", "数据库怎么迁移", "go ahead and add tests"]
)
def test_real_turns(text):
    assert not is_generic(text)


# -- recall ---------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(home: Path, workspace: Path, clock: Clock) -> FactStore:
    return FactStore(home, workspace, clock=clock)


def test_recall_finds_matching_fact_and_renders_low_authority_block(store, clock):
    fact = store.create(
        type="project",
        title="Database migrations",
        body="Use alembic; never edit an applied migration.",
        keywords=["alembic"],
    )
    store.create(type="project", title="Frontend", body="React with Vite.")
    recaller = Recaller(store, clock=clock)
    block = recaller.recall("how do I add a database migration?")
    assert block.startswith(OPEN_TAG) and block.endswith(CLOSE_TAG)
    assert "Low authority" in block
    assert fact.id in block and "never edit an applied migration" in block
    assert "React" not in block
    assert [r.fact.id for r in recaller.last.recalled] == [fact.id]


def test_generic_and_unrelated_turns_recall_nothing(store, clock):
    store.create(type="project", title="Continue CI", body="The CI pipeline runs on push.")
    recaller = Recaller(store, clock=clock)
    assert recaller.recall("continue") == "" and recaller.last.suppressed == "generic"
    assert recaller.recall("继续") == ""
    assert recaller.recall("what is the weather in Paris") == ""
    assert recaller.last.suppressed == "no match"
    # One shared common word in a longer message is not enough.
    assert recaller.recall("please push the new landing page design today") == ""


def test_recall_with_no_facts(store, clock):
    recaller = Recaller(store, clock=clock)
    assert recaller.recall("database migration") == ""
    assert recaller.last.suppressed == "no facts"


def test_recall_budget_at_most_four_facts_and_2400_chars(store, clock):
    for n in range(8):
        store.create(
            type="project",
            title=f"Parser note {n}",
            body=f"The parser tokenizer handles case {n}. " + "detail " * 120,
        )
    recaller = Recaller(store, clock=clock)
    block = recaller.recall("parser tokenizer")
    assert len(block) <= MAX_CHARS
    lines = block.splitlines()[1:-1]
    assert 1 <= len(lines) <= MAX_FACTS
    assert len(recaller.last.candidates) == 8
    assert all(line.startswith("- [project/project ") for line in lines)
    assert lines[-1].endswith("…")  # cut to fit, not dropped silently

    for n in range(8):
        store.create(type="project", title=f"Lexer tip {n}", body=f"lexer short tip {n}")
    block = recaller.recall("lexer tip")
    assert len(block.splitlines()) - 2 == MAX_FACTS


def test_cjk_query_matches_by_bigrams(store, clock):
    fact = store.create(
        type="project", title="数据库迁移", body="数据库迁移用 alembic，不要修改已经执行的迁移。"
    )
    store.create(type="project", title="前端构建", body="前端用 Vite 构建。")
    recaller = Recaller(store, clock=clock)
    block = recaller.recall("我们的数据库迁移应该怎么做？")
    assert fact.id in block and "Vite" not in block
    assert fact.id.startswith("fact-")  # no ASCII in the title: generic slug


def test_project_fact_preferred_over_equivalent_global_fact(store, clock):
    glob = store.create(
        type="feedback", title="Test command", body="Run the test suite with pytest -x."
    )
    proj = store.create(
        type="project", title="Test command", body="Run the test suite with pytest -q -n auto."
    )
    other = store.create(
        type="feedback", title="Pytest fixtures", body="Shared pytest fixtures go in conftest.py."
    )
    assert glob.scope == "global" and proj.scope == "project"
    recaller = Recaller(store, clock=clock)
    block = recaller.recall("how do I run the test suite with pytest fixtures")
    assert proj.id in block and glob.id not in block
    assert other.id in block


def test_stale_facts_are_demoted_and_marked(store, clock):
    old = store.create(type="reference", title="Dashboard URL", body="Grafana board ops-latency.")
    clock.now += timedelta(days=60)
    fresh = store.create(type="reference", title="Latency board", body="Grafana board api-latency.")
    recaller = Recaller(store, clock=clock)
    block = recaller.recall("grafana latency board")
    lines = block.splitlines()[1:-1]
    assert fresh.id in lines[0]
    assert old.id in lines[1] and "very stale" in lines[1]


def test_archived_facts_are_not_recalled(store, clock):
    fact = store.create(type="project", title="Deploy", body="Deploy with fabric.")
    recaller = Recaller(store, clock=clock)
    assert fact.id in recaller.recall("deploy with fabric")
    store.forget(fact.id)
    assert recaller.recall("deploy with fabric") == ""


def test_recall_never_raises(store, clock, monkeypatch):
    recaller = Recaller(store, clock=clock)

    def boom(**kw):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store, "list", boom)
    assert recaller.recall("database migration") == ""
    assert recaller.last.suppressed.startswith("error:")
