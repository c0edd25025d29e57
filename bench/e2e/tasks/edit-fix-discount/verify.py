import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import fail, sha, solved, tests_pass

ORIGINAL_TESTS = "174ead0c12ad5ab49d61984c2ab9231bf52a8fd78afe41ab2acf5f842541f625"
if sha("tests/test_pricing.py") != ORIGINAL_TESTS:
    fail("tests/test_pricing.py was changed")
tests_pass()
solved()
