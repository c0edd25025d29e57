"""The /rewind screens: the turn picker and the choice with its diff preview."""

from __future__ import annotations

from snap_support import scripted, send

from reasonix_tui.services import RewindPreview, RewindTurn

TURNS = [
    RewindTurn(number=1, head="explain the project layout", time="2025-01-01 11:50:02"),
    RewindTurn(
        number=2,
        head="rename greet to welcome everywhere",
        time="2025-01-01 11:52:40",
        files=("M src/reasonix_demo/app.py +1 -1", "M tests/test_app.py +2 -2"),
    ),
    RewindTurn(
        number=3,
        head="make the build script executable and drop the old notes",
        time="2025-01-01 11:58:13",
        files=("M build.sh mode 100644 -> 100755", "D docs/notes.md", "A docs/usage.md +12 -0"),
    ),
]
DIFF = """--- a/src/reasonix_demo/app.py
+++ b/src/reasonix_demo/app.py
@@ -1,2 +1,2 @@
-def welcome(name: str) -> str:
+def greet(name: str) -> str:
     return "hi " + name
mode build.sh: 100755 -> 100644
"""


def _services():  # type: ignore[no-untyped-def]
    return scripted(
        rewind_history=TURNS,
        rewind_previews={2: RewindPreview(diff=DIFF, conflicts=("docs/usage.md",))},
    )


class TestRewind:
    def test_turn_picker(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "/rewind")

        assert snap(_services(), run)

    def test_choice_with_diff_preview(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "/rewind")
            await pilot.pause()
            await pilot.press("down")
            await pilot.press("enter")

        assert snap(_services(), run)
