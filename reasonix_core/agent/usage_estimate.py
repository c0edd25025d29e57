"""Usage for a stream that reported none (llama.cpp's server, some gateways).

Without it a run would count 0 tokens and $0, and ``--max-cost`` /
``--max-tokens`` could never trigger. The request's bytes and the answer's text
are counted with the estimator's byte heuristic (no calibration: a provider
that reports no usage never gives a real count to calibrate on), every prompt
token as a cache miss (the dearer side, so a budget errs towards stopping
early), and the result is marked ``estimated``."""

from __future__ import annotations

import json

from reasonix_core.agent.tokens import heuristic_tokens
from reasonix_core.usage import Usage


def _prompt_text(body: bytes) -> str:
    """The request as text, with JSON's ``\\uXXXX`` escapes decoded (a CJK
    character counts by its UTF-8 bytes, as the heuristic expects)."""
    text = body.decode("utf-8", "replace")
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return text


def estimate_usage(body: bytes, answer: str, reasoning: str, call_arguments: str) -> Usage:
    """A local estimate of one call's usage, marked ``estimated``."""
    prompt = heuristic_tokens(_prompt_text(body))
    thought = heuristic_tokens(reasoning)
    completion = heuristic_tokens(answer) + thought + heuristic_tokens(call_arguments)
    return Usage(
        prompt_tokens=prompt,
        cache_miss_tokens=prompt,
        completion_tokens=completion,
        reasoning_tokens=thought,
        estimated=True,
    )
