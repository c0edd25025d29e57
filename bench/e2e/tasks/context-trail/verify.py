import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import answer, expect_word, fail, solved

expect_word("TANGERINE")
if "LEMON" in answer().upper():
    fail("the answer names the decoy")
solved()
