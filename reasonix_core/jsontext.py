"""JSON text that always encodes as UTF-8, for every writer of model-supplied text
(session transcripts, checkpoints, ``--output-format json``), and parsed with a
bounded nesting depth, for every reader of a file a faulty disk or a hostile hand
may have shaped (:func:`loads_bounded`).

A model can send a lone surrogate (``"\\ud800"`` in its JSON), and Python keeps it
in the decoded string. ``json.dumps(..., ensure_ascii=False)`` then yields text that
UTF-8 cannot encode, and the write raises. Such a value is written with ASCII
escapes instead: lossless (``json.loads`` gives back the same string), valid JSON,
and the usual readable non-ASCII output for everything else.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Deeper than anything Reasonix writes (a session record is a handful of levels)
#: and far below the depth at which the parser would exhaust the stack.
MAX_JSON_DEPTH = 200

# A JSON string (escapes included), and the brackets outside strings.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class JSONTooDeep(ValueError):
    """JSON text nested deeper than the reader accepts."""


def nesting_depth(text: str) -> int:
    """How deep the arrays and objects of JSON ``text`` nest (0 for a scalar)."""
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub("", text)):
        if match.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def loads_bounded(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``, refusing text nested deeper than ``max_depth`` with
    :class:`JSONTooDeep` (a :class:`ValueError`, as a syntax error is) instead
    of a ``RecursionError`` from deep in the parser. Cheap for ordinary text:
    the depth is measured only when there are enough brackets to exceed it."""
    if text.count("[") + text.count("{") > max_depth and nesting_depth(text) > max_depth:
        raise JSONTooDeep(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError:  # a stack already deep when called; never a crash
        raise JSONTooDeep(f"nested too deep to parse (limit {max_depth} levels)") from None


def canonical_json(value: object) -> str:
    """Byte-stable JSON: sorted keys, no whitespace, UTF-8 kept as is (request
    bodies, tool schemas, cache keys; ``provider.base`` re-exports it)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dumps_utf8(value: object, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)``, unless the result holds
    a lone surrogate: then the ASCII-escaped form."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, **kwargs)
    return text
