"""The system clipboard's image, read with the platform's own tool (issue 32).

Terminals send text through bracketed paste, never image bytes, so Ctrl+V in the
composer asks the clipboard directly, as Claude Code does: ``wl-paste`` on Wayland,
``xclip`` on X11, ``osascript`` on macOS. The bytes then go through the core's one
entry point (:func:`reasonix_core.images.image_part`), which checks them.

Every way this can come up empty (no tool, no image, a tool that fails or hangs)
is a :class:`ClipboardImageError` whose words say in one line what is missing.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys

import anyio

from reasonix_core.images import (
    IMAGE_MEDIA_TYPES,
    MAX_IMAGE_BYTES,
    ImageError,
    ImagePart,
    image_part,
)

# A clipboard tool that does not answer in this long is given up on (a stuck
# clipboard owner must not hang the composer).
TOOL_TIMEOUT = 10.0
# Read at most one byte past the core's cap: a bigger image is refused by size
# without holding whatever the clipboard owner sends in memory.
_READ_LIMIT = MAX_IMAGE_BYTES + 1

_NO_TOOL = (
    "no clipboard tool to read an image: install wl-clipboard (Wayland) or xclip (X11)"
)


class ClipboardImageError(Exception):
    """No image could be read from the clipboard; the text says why, in one line."""


async def read_clipboard_image(label: str = "clipboard") -> ImagePart:
    """The clipboard's image as an image part, or ClipboardImageError."""
    if sys.platform == "darwin":
        return await _macos(label)
    env = os.environ
    if env.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        types = (await _run(["wl-paste", "--list-types"], "wl-paste")).decode(errors="replace")
        media_type = _pick(types.split(), "wl-paste")
        data = await _run(["wl-paste", "--no-newline", "--type", media_type], "wl-paste")
        return _part(media_type, data, label)
    if env.get("DISPLAY") and shutil.which("xclip"):
        base = ["xclip", "-selection", "clipboard"]
        types = (await _run([*base, "-t", "TARGETS", "-o"], "xclip")).decode(errors="replace")
        media_type = _pick(types.split(), "xclip")
        data = await _run([*base, "-t", media_type, "-o"], "xclip")
        return _part(media_type, data, label)
    if not env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY"):
        raise ClipboardImageError(
            "no clipboard to read an image from (neither WAYLAND_DISPLAY nor DISPLAY is set)"
        )
    raise ClipboardImageError(_NO_TOOL)


def _pick(offered: list[str], tool: str) -> str:
    """The first image type the clipboard offers that a model can take."""
    lowered = [kind.strip().lower() for kind in offered]
    for wanted in IMAGE_MEDIA_TYPES:
        if wanted in lowered:
            return wanted
    others = [k for k in lowered if k.startswith("image/")]
    if others:
        raise ClipboardImageError(
            f"the clipboard's image is {others[0]}; only PNG, JPEG, GIF or WebP are sent"
        )
    has = ", ".join(k for k in lowered if "/" in k)[:80] or "nothing"
    raise ClipboardImageError(f"no image in the clipboard ({tool} lists {has})")


def _part(media_type: str, data: bytes, label: str) -> ImagePart:
    if len(data) >= _READ_LIMIT:
        raise ClipboardImageError(
            f"{label}: the clipboard's image is over {MAX_IMAGE_BYTES} bytes, the most sent"
        )
    try:
        return image_part(media_type, data, label)
    except ImageError as exc:
        raise ClipboardImageError(str(exc)) from None


async def _run(argv: list[str], tool: str) -> bytes:
    """The tool's standard output (at most ``_READ_LIMIT`` bytes); ClipboardImageError
    when it fails or hangs. The process is always waited for (killed when needed)."""
    out, err = bytearray(), b""
    try:
        with anyio.fail_after(TOOL_TIMEOUT):
            # Leaving the block closes the pipes and waits; a cancel kills first.
            async with await anyio.open_process(argv, stdin=subprocess.DEVNULL) as process:
                assert process.stdout is not None and process.stderr is not None
                while len(out) < _READ_LIMIT:
                    try:
                        out += await process.stdout.receive(min(65536, _READ_LIMIT - len(out)))
                    except anyio.EndOfStream:
                        break
                if len(out) >= _READ_LIMIT:
                    process.kill()  # more than any image sent: stop the writer now
                else:
                    with contextlib.suppress(anyio.EndOfStream):
                        err = await process.stderr.receive(4096)
    except TimeoutError:
        raise ClipboardImageError(f"{tool} did not answer in {TOOL_TIMEOUT:g} s") from None
    except OSError as exc:
        raise ClipboardImageError(f"{tool} could not start: {exc.strerror or exc}") from None
    if len(out) >= _READ_LIMIT:
        return bytes(out)  # _part refuses it by size, naming the cap
    if process.returncode != 0:
        said = err.decode(errors="replace").strip().splitlines()
        why = said[0][:120] if said else f"exit status {process.returncode}"
        raise ClipboardImageError(f"no image in the clipboard ({tool}: {why})")
    return bytes(out)


# ``«data PNGf89504E47...»``: what AppleScript prints for the clipboard as PNG.
_APPLE_DATA = re.compile(r"«data PNGf([0-9A-Fa-f]*)»")


async def _macos(label: str) -> ImagePart:
    if not shutil.which("osascript"):
        raise ClipboardImageError("osascript is missing: cannot read the clipboard")
    script = "the clipboard as «class PNGf»"
    try:
        out = await _run(["osascript", "-e", script], "osascript")
    except ClipboardImageError:
        raise ClipboardImageError("no image in the clipboard") from None
    match = _APPLE_DATA.search(out.decode(errors="replace"))
    if match is None:
        raise ClipboardImageError("no image in the clipboard")
    return _part("image/png", bytes.fromhex(match.group(1)), label)
