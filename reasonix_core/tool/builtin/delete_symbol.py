"""delete_symbol: delete a Python function, class or method, decorators included.

Spans come from :mod:`ast` (``lineno`` of the first decorator to ``end_lineno``), so
no regex guesses where a body ends. Other languages would need a parser this
project does not ship: they are refused with a pointer to delete_range rather
than approximated."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin._fs import ToolFailure
from reasonix_core.tool.builtin._writes import run_structured_edit
from reasonix_core.tool.builtin.delete_range import delete_lines, span
from reasonix_core.tool.builtin.specs import DELETE_SYMBOL as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool

PYTHON_SUFFIXES = (".py", ".pyi")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class DeleteSymbolArgs(BaseModel):
    model_config = ARGS_CONFIG

    path: str = Field(min_length=1)
    symbol: str = Field(min_length=1, max_length=500)


@dataclass(frozen=True, slots=True)
class Definition:
    qualname: str
    kind: str
    start: int
    end: int


def definitions(tree: ast.AST) -> list[Definition]:
    """Every function, class and method with its dotted path and line span."""
    found: list[Definition] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFINITIONS):
                qualname = f"{prefix}{child.name}"
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                kind = "class" if isinstance(child, ast.ClassDef) else "function"
                found.append(Definition(qualname, kind, start, child.end_lineno or child.lineno))
                visit(child, qualname + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def find_symbol(text: str, symbol: str, display: str) -> Definition:
    if "\r" in text.replace("\r\n", ""):
        # ast counts a lone CR as a line break; read_file and delete_lines do not.
        raise ToolFailure(f"{display} has bare CR line breaks; use delete_range instead")
    try:
        tree = ast.parse(text, filename=display)
    except SyntaxError as exc:
        raise ToolFailure(
            f"{display} does not parse as Python (line {exc.lineno}: {exc.msg}); "
            "fix it first or use delete_range"
        ) from None
    name = symbol.strip()
    every = definitions(tree)
    hits = [d for d in every if d.qualname == name]
    if not hits and "." not in name:
        hits = [d for d in every if d.qualname.rsplit(".", 1)[-1] == name]
    if not hits:
        raise ToolFailure(f"no function or class named {name!r} in {display}")
    if len(hits) > 1:
        where = ", ".join(f"{d.qualname} ({span(d.start, d.end)})" for d in hits)
        raise ToolFailure(
            f"{name!r} is ambiguous in {display}: {where}; pass the dotted path, "
            "or delete_range for one of several same-named definitions"
        )
    return hits[0]


class DeleteSymbol(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        a: DeleteSymbolArgs = validate_args(DeleteSymbolArgs, args)
        if not a.path.lower().endswith(PYTHON_SUFFIXES):
            return ToolResult.error(
                f"delete_symbol: only Python files are parsed (no parser for {a.path!r} is "
                "installed); read the file and use delete_range with the symbol's lines"
            )

        def transform(text: str, display: str) -> tuple[str, str]:
            found = find_symbol(text, a.symbol, display)
            new = delete_lines(text, found.start, found.end, display)
            try:
                ast.parse(new, filename=display)
            except SyntaxError as exc:
                raise ToolFailure(
                    f"deleting {found.qualname} would leave {display} invalid "
                    f"(line {exc.lineno}: {exc.msg}), e.g. an empty class body; "
                    "nothing written: use edit_file to replace it instead"
                ) from None
            return new, f"deleted {found.kind} {found.qualname} ({span(found.start, found.end)})"

        return await run_structured_edit(ctx, a.path, transform)
