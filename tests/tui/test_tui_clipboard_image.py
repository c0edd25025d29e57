"""Ctrl+V attaches the clipboard's image (issue 32 item 1), over the real engine
against the loopback fixture: fake ``wl-paste`` / ``xclip`` scripts on PATH (real
subprocesses, real PNG bytes) stand in for the platform tools."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from reasonix_testkit import Reply
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.widgets.blocks import NoticeBlock, UserBlock
from reasonix_tui.widgets.composer import Composer
from tests.core.test_images import B64, DATA_URL, PNG
from tests.tui.test_tui_images import image_parts
from tests.tui.tui_helpers import session, type_text, until

SIZE = (100, 32)


def fake_tool(bin_dir: Path, name: str, types: str, payload: Path, log: Path) -> None:
    """A clipboard tool that lists ``types`` and prints ``payload`` for an image type,
    logging each call's arguments."""
    script = f"""#!/bin/sh
echo "$*" >> '{log}'
case "$*" in
  *--list-types*|*TARGETS*) printf '{types}' ;;
  *image/*) cat '{payload}' ;;
  *) exit 1 ;;
esac
"""
    path = bin_dir / name
    path.write_text(script)
    path.chmod(0o755)


@pytest.fixture
def clip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bin directory first on PATH, the displays unset; returns the directory."""
    bin_dir = tmp_path / "clipbin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    return bin_dir


def app_for(workspace: Path, home: Path) -> ReasonixApp:
    services = EngineServices(workspace, home=home, permission_mode="yolo")
    return ReasonixApp(services, cursor_blink=False)


async def test_ctrl_v_on_wayland_attaches_the_image_to_the_next_prompt(
    workspace: Path, home: Path, configured, clip: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    log = tmp_path / "calls.log"
    fake_tool(clip, "wl-paste", "text/plain\\nimage/png\\n", shot, log)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    configured.enqueue(Reply(content="a red pixel"), Reply(content="still"))
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        composer = screen.query_one(Composer)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: composer.text == "[Image #1] ", 30)
        await type_text(pilot, "what is this")
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
        drawn = [str(b.text) for b in screen.query(UserBlock)]
        # The next prompt has no chip: no image.
        await type_text(pilot, "and")
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 2 and not screen.busy, 30)
    first, second = (r.body for r in configured.requests)
    assert image_parts(first) == [{"type": "image_url", "image_url": {"url": DATA_URL}}]
    assert image_parts(second) == []
    # Persisted in the turn: the later request repeats the first turn's image.
    assert second.count(B64.encode()) == 1
    assert drawn == ["[Image #1] what is this"]
    assert log.read_text().splitlines() == ["--list-types", "--no-newline --type image/png"]
    (saved,) = (home / "sessions").glob("*/*.jsonl")
    assert B64 in saved.read_text()


async def test_ctrl_v_on_x11_and_backspace_removes_a_chip_whole(
    workspace: Path, home: Path, configured, clip: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    log = tmp_path / "calls.log"
    fake_tool(clip, "xclip", "TARGETS\\nimage/png\\nimage/bmp\\n", shot, log)
    monkeypatch.setenv("DISPLAY", ":99")
    configured.enqueue(Reply(content="one image"))
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        composer = screen.query_one(Composer)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: composer.text == "[Image #1] ", 30)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: composer.text == "[Image #1] [Image #2] ", 30)
        await pilot.press("backspace")
        assert composer.text == "[Image #1] "
        await type_text(pilot, "look")
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
    assert image_parts(configured.requests[0].body) == [
        {"type": "image_url", "image_url": {"url": DATA_URL}}
    ]
    calls = log.read_text().splitlines()
    assert calls[:2] == [
        "-selection clipboard -t TARGETS -o",
        "-selection clipboard -t image/png -o",
    ]


@pytest.mark.parametrize(
    ("tool", "types", "payload", "said"),
    [
        ("wl-paste", "text/plain\\nUTF8_STRING\\n", b"", "Ctrl+V: no image in the clipboard (wl-paste lists text/plain)"),
        ("wl-paste", "image/png\\n", b"MZ\\x90\\x00not a png", "Ctrl+V: Image #1: not a PNG, JPEG, GIF or WebP image"),
        ("wl-paste", "image/tiff\\n", b"II*\\x00", "Ctrl+V: the clipboard's image is image/tiff; only PNG, JPEG, GIF or WebP are sent"),
        ("", "", b"", "Ctrl+V: no clipboard tool to read an image: install wl-clipboard (Wayland) or xclip (X11)"),
    ],
)  # fmt: skip
async def test_ctrl_v_without_an_image_says_what_is_missing(
    workspace: Path, home: Path, configured, clip: Path, tmp_path: Path, monkeypatch,
    tool: str, types: str, payload: bytes, said: str,
) -> None:  # type: ignore[no-untyped-def]
    if not tool and (shutil.which("wl-paste") or shutil.which("xclip")):
        pytest.skip("a real clipboard tool is installed here")
    data = tmp_path / "payload"
    data.write_bytes(payload)
    if tool:
        fake_tool(clip, tool, types, data, tmp_path / "calls.log")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        composer = screen.query_one(Composer)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: any(said in str(n.text) for n in screen.query(NoticeBlock)), 30)
        notices = [str(n.text) for n in screen.query(NoticeBlock)]
        assert composer.text == "" and composer.images == {}
    assert [n for n in notices if n.startswith("Ctrl+V")] == [n for n in notices if said in n]
    assert all("\n" not in n for n in notices)
    assert json.dumps(notices)  # plain text


async def test_ctrl_v_without_an_image_keeps_the_apps_own_text_paste(
    workspace: Path, home: Path, configured, clip: Path
) -> None:  # type: ignore[no-untyped-def]
    """No clipboard tool, but text the app copied: TextArea's own paste still works."""
    if shutil.which("wl-paste") or shutil.which("xclip"):
        pytest.skip("a real clipboard tool is installed here")
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        composer = session(pilot).query_one(Composer)
        pilot.app.copy_to_clipboard("copied words")
        await pilot.press("ctrl+v")
        await until(pilot, lambda: composer.text == "copied words", 30)
        assert composer.images == {}


# -- a hostile or stuck clipboard owner ------------------------------------------


async def test_a_huge_clipboard_image_is_refused_without_reading_it_all(
    clip: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from reasonix_core.images import MAX_IMAGE_BYTES
    from reasonix_tui.clipboard_image import ClipboardImageError, read_clipboard_image

    # 64 MiB of "PNG" from a tool that would go on writing: read up to the cap only.
    script = clip / "wl-paste"
    script.write_text(
        "#!/bin/sh\ncase \"$*\" in *--list-types*) echo image/png ;; "
        "*) printf '\\211PNG\\r\\n\\032\\n'; exec head -c 67108864 /dev/zero ;; esac\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    with pytest.raises(ClipboardImageError) as caught:
        await read_clipboard_image("Image #1")
    assert str(caught.value) == (
        f"Image #1: the clipboard's image is over {MAX_IMAGE_BYTES} bytes, the most sent"
    )


async def test_a_clipboard_tool_that_hangs_is_given_up_on(
    clip: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import reasonix_tui.clipboard_image as clipboard_image

    script = clip / "xclip"
    script.write_text("#!/bin/sh\nexec sleep 60\n")
    script.chmod(0o755)
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setattr(clipboard_image, "TOOL_TIMEOUT", 0.5)
    with pytest.raises(clipboard_image.ClipboardImageError) as caught:
        await clipboard_image.read_clipboard_image()
    assert str(caught.value) == "xclip did not answer in 0.5 s"
