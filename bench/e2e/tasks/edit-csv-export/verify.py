import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import WORKDIR, fail, solved

sys.path.insert(0, str(WORKDIR))
try:
    from inventory import Item, Store
    from inventory.csv_export import to_csv
except ImportError as exc:
    fail(f"cannot import to_csv: {exc}")
store = Store()
store.add(Item("nut", 10, 3))
store.add(Item("bolt", 25, 10))
want = "name,price_cents,qty\nbolt,25,10\nnut,10,3\n"
got = to_csv(store)
if got != want:
    fail(f"to_csv returned {got!r}, want {want!r}")
solved()
