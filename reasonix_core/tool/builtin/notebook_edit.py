"""notebook_edit: replace, insert or delete one cell of a Jupyter notebook.

The notebook is checked against the structural core of nbformat 4 (top-level keys,
cell types, source shapes, unique cell ids) before and after the edit, with the
standard library: the ``nbformat`` package's full JSON-schema validation would be
a dependency (and jsonschema with it) for a tool that only touches cells. The
publish sequence is edit_file's, through delete_range's ``run_structured_edit``."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any, Literal

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._fs import ToolFailure
from reasonix_core.tool.builtin.delete_range import run_structured_edit
from reasonix_core.tool.builtin.specs import NOTEBOOK_EDIT as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool

CELL_TYPES = ("code", "markdown", "raw")
# nbformat 4.5's cell id pattern.
_CELL_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")


class NotebookEditArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(min_length=1)
    operation: Literal["replace", "insert", "delete"]
    index: int | None = Field(default=None, ge=0)
    cell_id: str | None = None
    source: str | None = None
    cell_type: Literal["code", "markdown", "raw"] | None = None


def _invalid(display: str, why: str) -> ToolFailure:
    return ToolFailure(f"{display} is not a valid nbformat 4 notebook: {why}")


def check_notebook(nb: object, display: str) -> list[dict[str, Any]]:
    """The cells of ``nb``, or a failure naming what breaks nbformat 4's structure."""
    if not isinstance(nb, dict):
        raise _invalid(display, "the top level is not an object")
    if nb.get("nbformat") != 4 or not isinstance(nb.get("nbformat_minor"), int):
        raise _invalid(display, f"nbformat is {nb.get('nbformat')!r}, not 4")
    if not isinstance(nb.get("metadata"), dict):
        raise _invalid(display, "metadata is missing or not an object")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise _invalid(display, "cells is missing or not a list")
    seen: set[str] = set()
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
            raise _invalid(display, f"cell {i} has no valid cell_type")
        source = cell.get("source")
        if not (
            isinstance(source, str)
            or (isinstance(source, list) and all(isinstance(s, str) for s in source))
        ):
            raise _invalid(display, f"cell {i}'s source is not a string or a list of strings")
        if not isinstance(cell.get("metadata"), dict):
            raise _invalid(display, f"cell {i} has no metadata object")
        if cell["cell_type"] == "code" and not isinstance(cell.get("outputs"), list):
            raise _invalid(display, f"code cell {i} has no outputs list")
        if "id" in cell:
            cid = cell["id"]
            if not isinstance(cid, str) or not _CELL_ID.match(cid) or cid in seen:
                raise _invalid(display, f"cell {i}'s id {cid!r} is malformed or repeated")
            seen.add(cid)
    return cells


def _source_lines(text: str) -> list[str]:
    """Jupyter's on-disk shape: a list of lines, each but the last ending in \\n."""
    return text.splitlines(keepends=True)


def _new_cell(nb: dict[str, Any], cell_type: str, source: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": _source_lines(source)}
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    if nb["nbformat_minor"] >= 5:  # ids are required from 4.5 on
        taken = {c.get("id") for c in nb["cells"]}
        cid = secrets.token_hex(4)
        while cid in taken:
            cid = secrets.token_hex(4)
        cell["id"] = cid
    return cell


def _target(cells: list[dict[str, Any]], a: NotebookEditArgs, display: str) -> int:
    if (a.index is None) == (a.cell_id is None):
        raise ToolFailure(f"{a.operation}: name the cell by exactly one of `index` or `cell_id`")
    if a.cell_id is not None:
        for i, cell in enumerate(cells):
            if cell.get("id") == a.cell_id:
                return i
        raise ToolFailure(f"no cell with id {a.cell_id!r} in {display}")
    assert a.index is not None
    limit = len(cells) + 1 if a.operation == "insert" else len(cells)
    if a.index >= limit:
        raise ToolFailure(
            f"cell index {a.index} is out of range: {display} has {len(cells)} cells"
            + (
                " (insert accepts up to the cell count, to append)"
                if a.operation == "insert"
                else ""
            )
        )
    return a.index


def edit_notebook(text: str, a: NotebookEditArgs, display: str) -> tuple[str, str]:
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(display, f"not JSON (line {exc.lineno}: {exc.msg})") from None
    cells = check_notebook(nb, display)
    at = _target(cells, a, display)
    if a.operation == "delete":
        removed = cells.pop(at)
        summary = f"deleted {removed['cell_type']} cell {at}"
    else:
        if a.source is None:
            raise ToolFailure(f"{a.operation}: `source` is required")
        if a.operation == "insert":
            if a.cell_id is not None:
                raise ToolFailure("insert: place the new cell by `index`")
            cells.insert(at, _new_cell(nb, a.cell_type or "code", a.source))
            summary = f"inserted {a.cell_type or 'code'} cell {at}"
        else:
            old = cells[at]
            new = _new_cell(nb, a.cell_type or old["cell_type"], a.source)
            if "id" in old:
                new["id"] = old["id"]
            new["metadata"] = old["metadata"]
            cells[at] = new
            summary = f"replaced cell {at}"
    check_notebook(nb, display)
    # Jupyter's own layout (one-space indent, sorted keys), so a saved notebook diffs small.
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", summary


class NotebookEdit(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: NotebookEditArgs = validate_args(NotebookEditArgs, args)
        if not a.path.lower().endswith(".ipynb"):
            return ToolResult.error("notebook_edit: only .ipynb notebooks; use edit_file")
        return await run_structured_edit(ctx, a.path, lambda text, d: edit_notebook(text, a, d))
