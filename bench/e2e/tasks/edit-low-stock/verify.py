import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import WORKDIR, fail, solved, tests_pass

sys.path.insert(0, str(WORKDIR))
from inventory import Item, Store

store = Store()
for name, qty in (("nut", 1), ("bolt", 2), ("gear", 3), ("axle", 0)):
    store.add(Item(name, 10, qty))
if not hasattr(store, "low_stock"):
    fail("Store has no low_stock method")
got = store.low_stock()
if list(got) != ["axle", "bolt", "nut"]:
    fail(f"low_stock() returned {got!r}")
tests_pass()
solved()
