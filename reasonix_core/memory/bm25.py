"""A small Okapi BM25 index and the tokenizer shared by history search and recall.

Pure Python on purpose: the corpora are small (one project's transcripts, a
few hundred facts), the index is rebuilt in milliseconds, and importing it
costs nothing at start-up. ``docs/MEMORY.md`` has the measurements against
``bm25s`` and ``rank-bm25`` (both pull numpy) that justify this.

Scoring is Okapi BM25 with Lucene's non-negative IDF,
``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, ``k1 = 1.5``, ``b = 0.75``,
the same as ``bm25s``' default ``method="lucene"``.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

__all__ = ["BM25", "K1", "B", "is_cjk_text", "tokenize"]

K1 = 1.5
B = 0.75

# Han (incl. extension A and compatibility), kana, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN_PATTERN = rf"(?P<cjk>[{_CJK}\U00020000-\U0002ebef]+)|(?P<word>[^\W_{_CJK}]+)"
_MAX_WORD = 64

#: Function words that carry no topic; dropped from documents and queries alike.
STOPWORDS: frozenset[str] = frozenset(
    """
    a an and are as at be been but by can could did do does for from had has have he her
    his how i if in into is it its just me my no not of on or our she so than that the
    their them then there these they this those to too us was we were what when where
    which who why will with would you your yours also about all any some very
    """.split()
)


@functools.cache
def _token_re() -> re.Pattern[str]:
    # Compiled on first use: ~5 ms that start-up should not pay.
    return re.compile(_TOKEN_PATTERN)


def _stem(word: str) -> str:
    """Fold a plain English plural so "tests" finds "test" (and vice versa)."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        if word.endswith("ies") and len(word) > 4:
            return word[:-3] + "y"
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Terms of ``text``: lower-cased words (no stopwords, plurals folded) and,
    for runs of CJK characters, overlapping character bigrams (a lone CJK
    character is kept as a unigram). ``read_file`` yields ``read`` and ``file``."""
    out: list[str] = []
    for match in _token_re().finditer(text.lower()):
        run = match.group("cjk")
        if run is not None:
            if len(run) == 1:
                out.append(run)
            else:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
            continue
        word = match.group("word")
        if len(word) > _MAX_WORD or word in STOPWORDS:
            continue
        if len(word) == 1 and not word.isdigit():
            continue
        out.append(_stem(word))
    return out


def is_cjk_text(text: str) -> bool:
    return any(m.group("cjk") for m in _token_re().finditer(text))


class BM25:
    """An immutable BM25 index over pre-tokenized documents (ints 0..N-1)."""

    __slots__ = ("_avgdl", "_doc_len", "_idf", "_postings", "b", "k1")

    def __init__(self, docs: Iterable[Sequence[str]], *, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        postings: dict[str, list[tuple[int, int]]] = {}
        lengths: list[int] = []
        for index, tokens in enumerate(docs):
            lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                bucket = postings.get(term)
                if bucket is None:
                    postings[term] = [(index, tf)]
                else:
                    bucket.append((index, tf))
        self._postings = postings
        self._doc_len = lengths
        total = len(lengths)
        self._avgdl = (sum(lengths) / total) if total else 0.0
        self._idf = {
            term: math.log(1.0 + (total - len(p) + 0.5) / (len(p) + 0.5))
            for term, p in postings.items()
        }

    def __len__(self) -> int:
        return len(self._doc_len)

    def idf(self, term: str) -> float:
        return self._idf.get(term, 0.0)

    def scores(self, query: Sequence[str]) -> dict[int, float]:
        """Score of every document matching at least one query term."""
        acc: dict[int, float] = {}
        if not self._doc_len:
            return acc
        k1, b = self.k1, self.b
        avgdl = self._avgdl or 1.0
        lengths = self._doc_len
        for term in dict.fromkeys(query):  # each distinct term once
            bucket = self._postings.get(term)
            if not bucket:
                continue
            idf = self._idf[term]
            for doc, tf in bucket:
                norm = k1 * (1.0 - b + b * lengths[doc] / avgdl)
                acc[doc] = acc.get(doc, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
        return acc

    def top(
        self,
        query: Sequence[str],
        limit: int,
        *,
        keep: Callable[[int], bool] | None = None,
        relative_floor: float = 0.0,
    ) -> list[tuple[int, float]]:
        """The best ``limit`` (doc, score) pairs, best first; ties by lower doc.

        ``keep`` filters documents; ``relative_floor`` drops hits scoring below
        that fraction of the best hit (a weak tail is noise, not recall)."""
        scored = self.scores(query)
        items = ((doc, score) for doc, score in scored.items() if keep is None or keep(doc))
        best = heapq.nsmallest(max(limit, 0), items, key=lambda it: (-it[1], it[0]))
        if best and relative_floor > 0:
            cut = best[0][1] * relative_floor
            best = [it for it in best if it[1] >= cut]
        return best
