"""Automatic recall: a budgeted BM25 search over active facts before each user turn.

The raw user message is the query. Generic turns ("continue", "ok", "继续")
recall nothing. Project facts are preferred over global ones (and win over a
global fact with the same title), stale facts are demoted, and at most
:data:`MAX_FACTS` facts in at most :data:`MAX_CHARS` characters are rendered
as a low-authority ``<memory-recall>`` block that the agent appends to the user
turn - never to the system prompt or the tool schemas, so the cached prefix
does not move.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from reasonix_core.memory.bm25 import BM25, tokenize
from reasonix_core.memory.facts import Fact, FactStore, normalize_title

log = logging.getLogger(__name__)

MAX_FACTS = 4
MAX_CHARS = 2400
#: Hits scoring below this fraction of the best hit are dropped.
RELATIVE_FLOOR = 0.35
PROJECT_BOOST = 1.25
#: (stale after, very stale after) in days, by fact type.
FRESHNESS_DAYS: dict[str, tuple[int, int]] = {
    "reference": (14, 45),
    "project": (30, 180),
    "user": (90, 365),
    "feedback": (90, 365),
}
STALE_FACTOR = 0.7
VERY_STALE_FACTOR = 0.4

OPEN_TAG = (
    '<memory-recall note="Background facts saved in earlier sessions and matched to this '
    "message automatically. Low authority: they may be outdated or irrelevant; the user's "
    'words and the files win. The memory tool reads or searches more.">'
)
CLOSE_TAG = "</memory-recall>"

#: Words that, alone or together, make a turn generic ("ok, continue please").
_GENERIC_WORDS = frozenset(
    """
    continue cont go on ahead keep going carry proceed next resume retry again try ok okay
    k kk yes y yep yeah yup sure no n nope fine good great nice cool thanks thank you thx ty
    done lgtm please pls do it that sounds looks
    """.split()
)
#: Chinese generic phrases; a turn made only of these (and particles) is generic.
_GENERIC_CJK = tuple(
    sorted(
        """
        继续 接着 下一步 重试 再试一次 好的 好吧 好啊 好 嗯 行 可以 是的 是 对的 对 谢谢 没问题
        开始 确认 同意 收到 做吧 来吧 照做 就这样 请
        """.split(),
        key=len,
        reverse=True,
    )
)
_CJK_PARTICLES = re.compile(r"[吧啊呀了呢哈嘛哦噢喔的来做吗]")


def _generic_word(word: str) -> bool:
    if word in _GENERIC_WORDS:
        return True
    if word.isascii():
        return False
    rest = word
    for phrase in _GENERIC_CJK:
        rest = rest.replace(phrase, "")
    return not _CJK_PARTICLES.sub("", rest)


def is_generic(prompt: str) -> bool:
    """True for turns that carry no topic of their own ("continue", "ok", "继续吧")."""
    text = unicodedata.normalize("NFKC", prompt).casefold()
    words = re.sub(r"[\W_]+", " ", text).split()
    return len(words) <= 8 and all(_generic_word(w) for w in words)


@dataclass(frozen=True, slots=True)
class RecalledFact:
    fact: Fact
    score: float
    stale: str  # "", "stale", "very stale"


@dataclass(slots=True)
class RecallTrace:
    """What the last recall did, for ``/memory recall`` and tests."""

    query: str = ""
    suppressed: str = ""  # "generic", "no facts", "no match", "error: ..."
    candidates: list[tuple[str, float]] = field(default_factory=list)
    recalled: list[RecalledFact] = field(default_factory=list)
    block: str = ""


def staleness(fact: Fact, now: datetime) -> str:
    updated = fact.updated_at
    if updated is None:
        return ""
    age = (now - updated).total_seconds() / 86400
    stale, very = FRESHNESS_DAYS.get(fact.type, (30, 180))
    if age >= very:
        return "very stale"
    if age >= stale:
        return "stale"
    return ""


def _render_fact(item: RecalledFact, budget: int) -> str:
    fact = item.fact
    date = (fact.updated or fact.created)[:10]
    flag = f", {item.stale}" if item.stale else ""
    head = f"- [{fact.type}/{fact.scope} {fact.id} · updated {date}{flag}] {fact.title}"
    body = " ".join(fact.body.split())
    line = f"{head}: {body}"
    if len(line) <= budget:
        return line
    room = budget - len(head) - 3
    if room < 40:
        return ""
    return f"{head}: {body[: room - 1].rstrip()}…"


class Recaller:
    """Budgeted recall over one :class:`FactStore`."""

    def __init__(
        self,
        store: FactStore,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        max_facts: int = MAX_FACTS,
        max_chars: int = MAX_CHARS,
    ) -> None:
        self.store = store
        self.clock = clock
        self.max_facts = max_facts
        self.max_chars = max_chars
        self.last = RecallTrace()

    def rank(self, query: str, facts: list[Fact], *, min_terms: int = 2) -> list[RecalledFact]:
        """Facts matching ``query``, best first, with preference and staleness applied.

        A fact must share ``min_terms`` distinct terms with the query (fewer if
        the query has fewer): one common word in a long message is not recall."""
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not facts:
            return []
        docs = [tokenize(f.search_text()) for f in facts]
        index = BM25(docs)
        now = self.clock()
        need = min(min_terms, len(terms))
        raw = {
            doc: score
            for doc, score in index.scores(terms).items()
            if len(set(docs[doc]).intersection(terms)) >= need
        }
        # Relevance is judged on the plain BM25 score; preference and
        # staleness only reorder what is relevant.
        cut = max(raw.values(), default=0.0) * RELATIVE_FLOOR
        ranked: list[RecalledFact] = []
        for doc, score in raw.items():
            if score < cut:
                continue
            fact = facts[doc]
            stale = staleness(fact, now)
            if fact.scope == "project":
                score *= PROJECT_BOOST
            if stale == "stale":
                score *= STALE_FACTOR
            elif stale == "very stale":
                score *= VERY_STALE_FACTOR
            ranked.append(RecalledFact(fact, score, stale))
        ranked.sort(key=lambda r: (-r.score, r.fact.scope != "project", r.fact.id))
        # Equivalent facts: one title, one entry - the project version if any.
        seen: dict[str, RecalledFact] = {}
        for item in ranked:
            key = normalize_title(item.fact.title)
            best = seen.get(key)
            if best is None or (best.fact.scope != "project" and item.fact.scope == "project"):
                seen[key] = item
        keep = {id(v) for v in seen.values()}
        return [r for r in ranked if id(r) in keep]

    def recall(self, prompt: str) -> str:
        """The block to append to the user turn, or "" (never raises)."""
        trace = RecallTrace(query=prompt)
        self.last = trace
        try:
            if is_generic(prompt):
                trace.suppressed = "generic"
                return ""
            facts = self.store.list()
            if not facts:
                trace.suppressed = "no facts"
                return ""
            ranked = self.rank(prompt, facts)
            trace.candidates = [(r.fact.id, round(r.score, 3)) for r in ranked]
            if not ranked:
                trace.suppressed = "no match"
                return ""
            budget = self.max_chars - len(OPEN_TAG) - len(CLOSE_TAG) - 2
            lines: list[str] = []
            for item in ranked:
                if len(lines) >= self.max_facts:
                    break
                line = _render_fact(item, budget - 1)
                if not line:
                    break
                lines.append(line)
                trace.recalled.append(item)
                budget -= len(line) + 1
            if not lines:
                trace.suppressed = "budget"
                return ""
            trace.block = "\n".join([OPEN_TAG, *lines, CLOSE_TAG])
            return trace.block
        except Exception as exc:  # recall must never break a turn
            log.warning("memory recall failed: %s", exc)
            trace.suppressed = f"error: {exc}"
            return ""
