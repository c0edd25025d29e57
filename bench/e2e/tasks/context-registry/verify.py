import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from verifylib import fail, read, solved

want = "".join(f"{n}-plugin\n" for n in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot"))
got = read("plugins/registry.txt")
if got.strip().splitlines() != want.strip().splitlines():
    fail(f"registry.txt is {got!r}")
solved()
