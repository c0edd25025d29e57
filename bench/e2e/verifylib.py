"""What the e2ebench verifiers share: the final answer, the workspace, the sample tests.

A verifier runs as ``verify.py WORKDIR ANSWER_FILE`` in the run's workspace (the
folder the agent worked in); exit 0 means solved, 1 unsolved (``fail``). Any other
exit, or an exception, is a verifier crash: no verdict.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

WORKDIR = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
ANSWER_FILE = Path(sys.argv[2]) if len(sys.argv) > 2 else None


def answer() -> str:
    return ANSWER_FILE.read_text(encoding="utf-8") if ANSWER_FILE else ""


def read(rel: str) -> str:
    path = WORKDIR / rel
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def fail(why: str) -> None:
    print(f"unsolved: {why}")
    sys.exit(1)


def solved(what: str = "") -> None:
    print(f"solved{': ' + what if what else ''}")
    sys.exit(0)


def expect_word(word: str) -> None:
    """The final answer names ``word`` (as a whole word, any case)."""
    if not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", answer(), re.IGNORECASE):
        fail(f"the answer does not say {word!r}: {answer()[:200]!r}")


def tests_pass() -> None:
    """The sample project's unit tests pass in the workspace."""
    proc = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests"],
        cwd=WORKDIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        fail("the tests fail:\n" + proc.stderr[-1500:])


def sha(rel: str) -> str:
    return hashlib.sha256((WORKDIR / rel).read_bytes()).hexdigest()
