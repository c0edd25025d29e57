"""The write sequence the file-writing tools share (write_file, edit_file,
multi_edit, delete_range, delete_symbol).

:func:`locked_write` is the outside: check the path for writing and reading,
take the path's lock, run the publishing step in a worker thread, turn ordinary
failures into error results. :func:`run_structured_edit` is the edit family's
step on top (observation check, transform, race-free replace, fresh
observation); a tool only computes the new text. :func:`publish_replacement`
and :func:`file_result` are the replace and the result every writer assembles.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._editor import (
    CREATE_HINT,
    current_observed,
    editor_for,
    not_found,
    publish,
)
from reasonix_core.tool.builtin._fs import (
    BinaryFile,
    Loaded,
    ToolFailure,
    check_unchanged,
    decode,
    diff_stats,
    encode,
    ensure_writable,
    fs_failure,
    guarded,
    load_current,
    publish_replace,
    record_write,
    run_writer,
    same_location,
    services,
    unified_diff,
)
from reasonix_core.tool.fs_walk import Located
from reasonix_core.tool.ledger import FileLedger
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.text_files import TextFiles

#: A structured edit: the file's text and its display name -> the new text and
#: a summary of what changed ("1 replacement at line 4").
Transform = Callable[[str, str], tuple[str, str]]


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """One write's path, checked before the lock, and the services it goes through."""

    sandbox: SandboxPolicy
    ledger: FileLedger
    # The path as the model wrote it (resolved again by descriptors under the lock).
    text_path: str
    path: Path
    display: str


#: The same write when an editor holds the file (:mod:`._editor`).
EditorStep = Callable[[TextFiles, WriteTarget], Awaitable[ToolResult]]


async def locked_write(
    ctx: ToolContext,
    text_path: str,
    step: Callable[[WriteTarget], ToolResult],
    editor_step: EditorStep,
) -> ToolResult:
    """Run ``step`` for ``text_path`` under the path's lock, in a worker thread;
    ``editor_step`` instead when the session's editor holds the file."""
    sandbox, ledger = services(ctx)

    async def body() -> ToolResult:
        path = sandbox.check_write(text_path)
        sandbox.check_read(text_path)
        target = WriteTarget(sandbox, ledger, text_path, path, sandbox.display(path))
        files = editor_for(ctx, path, sandbox)
        async with ledger.lock(path):
            if files is not None:
                return await editor_step(files, target)
            return await run_writer(lambda: step(target))

    return await guarded(body, sandbox)


async def run_structured_edit(ctx: ToolContext, text_path: str, transform: Transform) -> ToolResult:
    """An observed-file edit whose new text ``transform`` computes."""
    return await locked_write(
        ctx,
        text_path,
        lambda target: edit_sync(target, transform),
        lambda files, target: edit_in_editor(files, target, transform),
    )


async def edit_in_editor(files: TextFiles, target: WriteTarget, transform: Transform) -> ToolResult:
    """:func:`edit_sync`'s sequence on the editor's text: observed, transformed,
    compared again, written, observed anew."""
    path, display, ledger = target.path, target.display, target.ledger
    text = await current_observed(files, path, display, ledger, target.sandbox, "editing")
    new_text, summary = transform(text, display)
    await publish(files, path, display, ledger, text, new_text, "editing")
    return _edited(display, summary, text, new_text)


def edit_sync(target: WriteTarget, transform: Transform) -> ToolResult:
    """The structured-write publish sequence, under the path's lock.

    Resolve the path by descriptors (it was checked before the lock), read the
    current file and compare it with the observation, compute, compare again,
    publish atomically inside the same open directory, refresh the observation.
    """
    display = target.display
    try:
        located = target.sandbox.locate_for_write(target.text_path)
    except NotADirectoryError:  # a file where a directory should be: nothing to edit
        located = None
    if located is not None:
        with located:
            same_location(located, target.path, display)
            loaded = load_current(located, display)
            if loaded is not None:
                return _edit_loaded(located, loaded, display, target.ledger, transform)
    raise not_found(target.path, display, target.sandbox, CREATE_HINT)


def _edit_loaded(
    located: Located, loaded: Loaded, display: str, ledger: FileLedger, transform: Transform
) -> ToolResult:
    code = ledger.check(located.path, loaded.version)
    if code is not None:
        raise fs_failure(code, display, "editing")
    try:
        text, fmt = decode(loaded.data)
    except BinaryFile:
        raise ToolFailure(f"{display} is a binary file; only text files can be edited") from None
    new_text, summary = transform(text, display)
    data = encode(new_text, fmt, display)
    publish_replacement(located, loaded, data, ledger, display, "editing")
    return _edited(display, summary, text, new_text)


def _edited(display: str, summary: str, text: str, new_text: str) -> ToolResult:
    """An edit's result, from disk or the editor alike."""
    return file_result(
        display,
        "edited",
        text,
        new_text,
        lambda plus, minus: f"edited {display}: {summary} (+{plus} -{minus} lines)",
    )


def publish_replacement(
    located: Located, loaded: Loaded, data: bytes, ledger: FileLedger, display: str, verb: str
) -> None:
    """Replace the loaded file with ``data`` if it still holds what was loaded
    (``verb``: "editing", "overwriting" in the refusal), and observe the result."""
    ensure_writable(located, display)
    check_unchanged(located, loaded, display, verb)
    publish_replace(located, data, loaded.mode)
    record_write(ledger, located, data)


def file_result(
    display: str, action: str, old_text: str, new_text: str, say: Callable[[int, int], str]
) -> ToolResult:
    """A writer's result: ``say(added, removed)`` for the model, the diff for the UI."""
    diff = unified_diff(old_text, new_text, display)
    plus, minus = diff_stats(diff)
    return ToolResult(text=say(plus, minus), meta={"path": display, "action": action, "diff": diff})
