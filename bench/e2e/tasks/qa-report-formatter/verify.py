import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import answer, expect_word, fail, solved

expect_word("format_price")
if "pricing" not in answer():
    fail("the answer does not name the pricing module")
solved()
