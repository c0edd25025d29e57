import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import answer, expect_word, fail, solved

expect_word("4.2.7")
if "p23" not in answer():
    fail("the answer does not name plugins/p23.py")
solved()
