import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import WORKDIR, fail, read, solved, tests_pass

for path in WORKDIR.rglob("*.py"):
    if "format_price" in path.read_text(encoding="utf-8"):
        fail(f"{path.relative_to(WORKDIR)} still says format_price")
if "def format_money(" not in read("inventory/pricing.py"):
    fail("inventory/pricing.py does not define format_money")
tests_pass()
solved()
