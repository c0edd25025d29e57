"""Cassettes: a run's provider exchanges, stored to be served again byte for byte.

A cassette is one JSON file beside a run's trajectory::

    {"version": 1, "source": "recorded" | "scripted", "note": "...",
     "task": "...", "model": "...", "kind": "openai", "provider": {...},
     "interactions": [{"request": {"path": "/chat/completions", "body": "..."},
                       "response": {"status": 200, "content_type": "text/event-stream",
                                    "body": "..."}}]}

``source`` says where the answers came from: ``recorded`` from a real provider,
``scripted`` from the test kit's scripted model standing in where no real
recording exists. ``provider`` is the provider entry the run used (without its
address or key variable), so a replay sends the same request bytes.

Requests are stored normalised: the only bytes that legitimately differ between
two runs of the same task are the run's own folders and the machine and day it
ran on. :data:`NORMALISATIONS` names each rewrite; nothing else is normalised, so
any other difference (a prompt edit, a reordered tool schema) is a mismatch
reported with its first differing byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reasonix_core.config.layer import describe_error
from reasonix_core.errors import BenchError
from reasonix_core.fsutil import atomic_write_text

CASSETTE_FILE = "cassette.json"
CASSETTE_VERSION = 1


class CassetteRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    body: str  # normalised (see normalise_body)


class CassetteResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    status: int = Field(ge=100, le=599)
    # Sent back as a header: printable ASCII only, so a cassette cannot add headers.
    content_type: str = Field(default="application/json", pattern=r"^[\x20-\x7e]*$")
    body: str


class Interaction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request: CassetteRequest
    response: CassetteResponse


class Cassette(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = CASSETTE_VERSION
    source: Literal["recorded", "scripted"]
    note: str = ""
    task: str = ""
    model: str = ""
    kind: str = "openai"
    provider: dict[str, Any] = Field(default_factory=dict)
    interactions: list[Interaction] = Field(default_factory=list)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.model_dump()
        _share_prefixes(data["interactions"])
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        atomic_write_text(path, text)


# In the file, a request body is stored against the previous one as
# {"shares": N, "body": middle, "ends": M}: the first N characters of the previous
# body, the middle, then its last M characters. An append-only conversation makes
# each request the previous one plus new messages (before the tool schemas, which
# repeat at the end), so a cassette stays a fraction of the bytes it replays.


def _share_prefixes(interactions: list[dict[str, Any]]) -> None:
    previous = ""
    for item in interactions:
        body = item["request"]["body"]
        limit = min(len(previous), len(body))
        n = 0
        while n < limit and previous[n] == body[n]:
            n += 1
        m = 0
        while m < limit - n and previous[-1 - m] == body[-1 - m]:
            m += 1
        if n or m:
            item["request"] = {
                "path": item["request"]["path"],
                "shares": n,
                "body": body[n : len(body) - m],
                "ends": m,
            }
        previous = body


def _expand_prefixes(data: object) -> None:
    previous = ""
    items = data.get("interactions") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else []:
        request = item.get("request") if isinstance(item, dict) else None
        if not isinstance(request, dict):
            continue
        shares, ends = request.pop("shares", None), request.pop("ends", 0)
        if shares is not None:
            ok = isinstance(shares, int) and isinstance(ends, int)
            if not ok or shares < 0 or ends < 0 or shares + ends > len(previous):
                raise ValueError(
                    f"shares {shares!r} / ends {ends!r} do not fit the previous request"
                )
            tail = previous[len(previous) - ends :] if ends else ""
            request["body"] = previous[:shares] + str(request.get("body", "")) + tail
        previous = str(request.get("body", ""))


def load_cassette(path: Path) -> Cassette:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: no such cassette") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchError(f"{path}: not a cassette: {exc}") from None
    try:
        _expand_prefixes(data)
    except ValueError as exc:
        raise BenchError(f"{path}: {exc}") from None
    try:
        return Cassette.model_validate(data)
    except ValidationError as exc:
        raise BenchError(f"{path}: {describe_error(exc.errors()[0])}") from None


def find_cassette(root: Path, task: str, arm: str, rep: int) -> Path | None:
    """The cassette for one run under a replay folder.

    A bench output folder holds ``runs/<task>/<arm>/<rep>/cassette.json``; a
    corpus of stand-ins holds ``<task>/cassette.json``, used by every arm and
    repetition."""
    for candidate in (
        root / "runs" / task / arm / str(rep) / CASSETTE_FILE,
        root / task / arm / str(rep) / CASSETTE_FILE,
        root / task / CASSETTE_FILE,
    ):
        if candidate.is_file():
            return candidate
    return None


# --------------------------------------------------------------------------- normalisation


@dataclass(frozen=True, slots=True)
class RunPlaces:
    """What a run's requests may legitimately say differently from another run's."""

    workdir: Path
    home: Path


def _json_fragment(text: str) -> str:
    """``text`` as it appears inside a JSON string of the request body."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _replace_paths(body: str, places: RunPlaces) -> str:
    for path, token in ((places.workdir, "{WORKDIR}"), (places.home, "{HOME}")):
        seen = {str(path), str(path.resolve())}
        # Longest first, so /private/tmp/x is not half-replaced by /tmp/x.
        for form in sorted(seen, key=len, reverse=True):
            body = body.replace(_json_fragment(form), token)
    return body


# The user turn's <workspace-context> lines that name the machine and the day.
_PLATFORM = re.compile(r"(\\nplatform: )[^\\\"]*")
_DATE = re.compile(r"(\\ndate: )\d{4}-\d{2}-\d{2}")
# The output budget: the window minus the estimated prompt, and the estimate counts
# the tokens of the run's folder names, which differ from run to run.
_MAX_TOKENS = re.compile(r'("max_(?:completion_|output_)?tokens":)\d+')

NORMALISATIONS: tuple[tuple[str, Callable[[str, RunPlaces], str]], ...] = (
    ("the run's workspace and home folders become {WORKDIR} and {HOME}", _replace_paths),
    (
        "the workspace context's platform line becomes {PLATFORM}",
        lambda b, _: _PLATFORM.sub(r"\1{PLATFORM}", b),
    ),
    ("the workspace context's date line becomes {DATE}", lambda b, _: _DATE.sub(r"\1{DATE}", b)),
    ("the output budget (max_tokens) becomes 0", lambda b, _: _MAX_TOKENS.sub(r"\g<1>0", b)),
)


def normalise_body(body: bytes, places: RunPlaces) -> str:
    """A request body with what legitimately varies between runs rewritten."""
    text = body.decode("utf-8", errors="surrogateescape")
    for _, rewrite in NORMALISATIONS:
        text = rewrite(text, places)
    return text


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Where a replayed request first differs from the recorded one."""

    request: int  # 1-based
    byte: int | None  # offset in the normalised body; None when the request has no counterpart
    expected: str
    got: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "byte": self.byte,
            "expected": self.expected,
            "got": self.got,
            "message": self.message,
        }


def first_difference(expected: str, got: str) -> int | None:
    """The first byte offset (UTF-8) at which ``got`` differs from ``expected``, or None."""
    a, b = expected.encode("utf-8", "surrogateescape"), got.encode("utf-8", "surrogateescape")
    if a == b:
        return None
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def compare_request(index: int, recorded: CassetteRequest, path: str, body: str) -> Mismatch | None:
    """None when the replayed request is the recorded one, else where it differs."""
    if path != recorded.path:
        return Mismatch(
            index, 0, recorded.path, path, f"request {index} went to {path}, not {recorded.path}"
        )
    offset = first_difference(recorded.body, body)
    if offset is None:
        return None
    a = recorded.body.encode("utf-8", "surrogateescape")
    b = body.encode("utf-8", "surrogateescape")
    window = slice(max(0, offset - 30), offset + 30)
    expected = a[window].decode("utf-8", "replace")
    got = b[window].decode("utf-8", "replace")
    return Mismatch(
        index,
        offset,
        expected,
        got,
        f"request {index} differs from the cassette at byte {offset}: "
        f"expected {expected!r}, got {got!r}",
    )
