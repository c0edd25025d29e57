#!/usr/bin/env python3
"""Architecture census of Reasonix, read from the source with the AST (stdlib only).

It measures what issue 24 set targets for:

- the package-level import graph of ``reasonix_core`` (each subpackage and each top-level
  module is one node; imports inside functions count, ``if TYPE_CHECKING:`` blocks do not)
  and its strongly connected components, the import knots;
- module-level import circles in ``reasonix_tui`` (one node per module; every import
  counts, deferred and ``TYPE_CHECKING`` ones too);
- functions over 60 and over 100 lines (``def`` line to last line, decorators excluded;
  nested functions and methods counted on their own as well);
- modules over 800 lines;
- parameters, returns, class fields and annotated variables typed plain ``Any`` in
  ``reasonix_core`` (``Any`` itself, not ``dict[str, Any]`` or ``Any | None``).

Usage: ``python3 scripts/census.py [--json] [--root DIR]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

# Beside this script (its folder is on sys.path when it runs): one Tarjan for both checks.
from import_cycles import import_statements, longest_known, strongly_connected

CORE = "reasonix_core"
TUI = "reasonix_tui"
LONG_FUNCTION = 60
VERY_LONG_FUNCTION = 100
LONG_MODULE = 800


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. reasonix_core.agent.loop
    path: Path
    is_package: bool  # an __init__.py
    tree: ast.Module
    lines: int


def load_modules(root: Path, top: str) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted((root / top).rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        source = path.read_text(encoding="utf-8")
        name = ".".join(parts)
        modules[name] = Module(
            name, path, is_package, ast.parse(source, str(path)), len(source.splitlines())
        )
    return modules


def imported_modules(module: Module, known: set[str], *, type_checking: bool) -> set[str]:
    """The dotted names this module imports, resolved to the longest known module."""
    targets: set[str] = set()
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    for node in import_statements(module.tree, type_checking):
        if isinstance(node, ast.Import):
            bases = [alias.name for alias in node.names]
            candidates = [[base] for base in bases]
        else:
            if node.level:
                anchor = package.split(".")
                if node.level > 1:
                    anchor = anchor[: -(node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from pkg import sub` imports the submodule when one exists, else pkg itself.
            candidates = [[f"{base}.{alias.name}", base] for alias in node.names]
        for options in candidates:
            for option in options:
                resolved = longest_known(option, known)
                if resolved is not None:
                    targets.add(resolved)
                    break
    targets.discard(module.name)
    return targets


def knots(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, largest first
    (:func:`import_cycles.strongly_connected`, Tarjan's algorithm)."""
    groups = [group for group in strongly_connected(graph) if len(group) > 1]
    return sorted(groups, key=lambda c: (-len(c), c))


def package_of(module: str) -> str:
    """reasonix_core.agent.loop -> agent; reasonix_core.usage -> usage; the root -> (root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def core_package_graph(modules: dict[str, Module]) -> tuple[dict[str, set[str]], dict]:
    known = set(modules)
    graph: dict[str, set[str]] = {package_of(name): set() for name in modules}
    witnesses: dict[tuple[str, str], list[str]] = {}
    for module in modules.values():
        source = package_of(module.name)
        for target in imported_modules(module, known, type_checking=False):
            dest = package_of(target)
            if dest != source:
                graph[source].add(dest)
                witnesses.setdefault((source, dest), []).append(f"{module.name} -> {target}")
    return graph, witnesses


def module_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    """Every import counts here, ``TYPE_CHECKING`` ones too: a mixin that names its screen
    in an annotation still knows the screen (issue 24 counts those circles)."""
    known = set(modules)
    return {
        module.name: imported_modules(module, known, type_checking=True)
        for module in modules.values()
    }


@dataclass
class LongFunction:
    name: str  # module-relative qualified name
    module: str
    lines: int


def functions(module: Module) -> Iterator[LongFunction]:
    def walk(node: ast.AST, prefix: str) -> Iterator[LongFunction]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qual = f"{prefix}{child.name}"
                end = child.end_lineno or child.lineno
                yield LongFunction(qual, module.name, end - child.lineno + 1)
                yield from walk(child, f"{qual}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(module.tree, "")


def _is_plain_any(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(annotation, ast.Name):
        return annotation.id == "Any"
    return isinstance(annotation, ast.Attribute) and annotation.attr == "Any"


@dataclass
class AnyUse:
    module: str
    line: int
    kind: str  # parameter | return | field | variable
    where: str


def plain_any(module: Module) -> Iterator[AnyUse]:
    def walk(node: ast.AST, prefix: str, in_class: bool) -> Iterator[AnyUse]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qual = f"{prefix}{child.name}"
                args = child.args
                params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                params += [a for a in (args.vararg, args.kwarg) if a is not None]
                for arg in params:
                    if _is_plain_any(arg.annotation):
                        yield AnyUse(module.name, arg.lineno, "parameter", f"{qual}({arg.arg})")
                if _is_plain_any(child.returns):
                    yield AnyUse(module.name, child.lineno, "return", qual)
                yield from walk(child, f"{qual}.", False)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.", True)
            elif isinstance(child, ast.AnnAssign):
                if _is_plain_any(child.annotation):
                    target = ast.unparse(child.target)
                    kind = "field" if in_class else "variable"
                    yield AnyUse(module.name, child.lineno, kind, f"{prefix}{target}")
            else:
                yield from walk(child, prefix, in_class)

    yield from walk(module.tree, "", False)


@dataclass
class Census:
    core_packages: list[str] = field(default_factory=list)
    core_knots: list[list[str]] = field(default_factory=list)
    core_knot_edges: dict[str, list[str]] = field(default_factory=dict)
    tui_circles: list[list[str]] = field(default_factory=list)
    functions_over_60: list[dict] = field(default_factory=list)
    functions_over_100: list[dict] = field(default_factory=list)
    modules_over_800: list[dict] = field(default_factory=list)
    plain_any: list[dict] = field(default_factory=list)


def take_census(root: Path) -> Census:
    core = load_modules(root, CORE)
    tui = load_modules(root, TUI)
    census = Census()

    census.core_packages = sorted(
        package_of(m.name)
        for m in core.values()
        if m.is_package and m.name != CORE and m.name.count(".") == 1
    )
    graph, witnesses = core_package_graph(core)
    census.core_knots = knots(graph)
    for knot in census.core_knots:
        members = set(knot)
        for (source, dest), via in sorted(witnesses.items()):
            if source in members and dest in members:
                census.core_knot_edges[f"{source} -> {dest}"] = sorted(via)

    census.tui_circles = knots(module_graph(tui))

    everything = list(core.values()) + list(tui.values())
    longs = sorted(
        (f for module in everything for f in functions(module) if f.lines > LONG_FUNCTION),
        key=lambda f: (-f.lines, f.module, f.name),
    )
    census.functions_over_60 = [
        {"function": f"{f.module}.{f.name}", "lines": f.lines} for f in longs
    ]
    census.functions_over_100 = [
        entry for entry in census.functions_over_60 if entry["lines"] > VERY_LONG_FUNCTION
    ]
    census.modules_over_800 = sorted(
        (
            {"module": str(m.path.relative_to(root)), "lines": m.lines}
            for m in everything
            if m.lines > LONG_MODULE
        ),
        key=lambda entry: -entry["lines"],
    )
    census.plain_any = [
        {"module": use.module, "line": use.line, "kind": use.kind, "where": use.where}
        for module in core.values()
        for use in plain_any(module)
    ]
    return census


def _short(name: str) -> str:
    for prefix in (f"{CORE}.", f"{TUI}."):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def report(census: Census) -> Iterable[str]:
    knot_sizes = ", ".join(str(len(k)) for k in census.core_knots) or "none"
    yield "Census"
    yield f"  core package knots (sizes)        {len(census.core_knots):>4}  ({knot_sizes})"
    yield f"  reasonix_tui import circles        {len(census.tui_circles):>4}"
    yield f"  functions over {LONG_FUNCTION} lines           {len(census.functions_over_60):>4}"
    yield f"  functions over {VERY_LONG_FUNCTION} lines          {len(census.functions_over_100):>4}"
    yield f"  modules over {LONG_MODULE} lines            {len(census.modules_over_800):>4}"
    yield f"  plain Any in reasonix_core         {len(census.plain_any):>4}"
    for knot in census.core_knots:
        yield ""
        packages = [name for name in knot if name in census.core_packages]
        yield (
            f"Core knot of {len(knot)} ({len(packages)} packages,"
            f" {len(knot) - len(packages)} top-level modules): {', '.join(knot)}"
        )
        for edge, via in census.core_knot_edges.items():
            source, _, dest = edge.partition(" -> ")
            if source in knot and dest in knot:
                yield f"  {edge}  ({len(via)}: {_short(via[0])}{', ...' if len(via) > 1 else ''})"
    for circle in census.tui_circles:
        yield ""
        yield f"TUI circle of {len(circle)}: {', '.join(_short(m) for m in circle)}"
    if census.functions_over_60:
        yield ""
        yield f"Functions over {LONG_FUNCTION} lines:"
        for entry in census.functions_over_60:
            yield f"  {entry['lines']:>4}  {entry['function']}"
    if census.modules_over_800:
        yield ""
        yield f"Modules over {LONG_MODULE} lines:"
        for entry in census.modules_over_800:
            yield f"  {entry['lines']:>4}  {entry['module']}"
    if census.plain_any:
        yield ""
        yield "Plain Any by module:"
        counts: dict[str, int] = {}
        for use in census.plain_any:
            counts[use["module"]] = counts.get(use["module"], 0) + 1
        for name, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            yield f"  {count:>4}  {name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the full census as JSON")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the repository root (default: this script's checkout)",
    )
    args = parser.parse_args(argv)
    census = take_census(args.root)
    if args.json:
        json.dump(census.__dict__, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        try:
            for line in report(census):
                print(line)
        except BrokenPipeError:  # `census.py | head`: the reader has gone
            # Python flushes stdout at exit; the recipe from the `signal` docs.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
