import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import fail, read, solved, tests_pass

if "MAX_ITEMS = 1000" not in read("inventory/config.py"):
    fail("inventory/config.py does not set MAX_ITEMS = 1000")
readme = read("README.md")
if "1000" not in readme or "500" in readme:
    fail("README.md does not say 1000 (or still says 500)")
tests_pass()
solved()
