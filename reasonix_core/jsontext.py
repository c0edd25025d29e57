"""JSON text that always encodes as UTF-8, for every writer of model-supplied text
(session transcripts, checkpoints, ``--output-format json``).

A model can send a lone surrogate (``"\\ud800"`` in its JSON), and Python keeps it
in the decoded string. ``json.dumps(..., ensure_ascii=False)`` then yields text that
UTF-8 cannot encode, and the write raises. Such a value is written with ASCII
escapes instead: lossless (``json.loads`` gives back the same string), valid JSON,
and the usual readable non-ASCII output for everything else.
"""

from __future__ import annotations

import json
from typing import Any


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
