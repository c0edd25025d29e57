import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import re

from verifylib import answer, fail, solved

if not re.match(r"\W*3\b", answer()):
    fail(f"the answer does not start with 3: {answer()[:80]!r}")
solved()
