"""Print the import circles among a package's modules; exit 1 if there are any.

    python scripts/import_cycles.py reasonix_tui [--type-checking]

Every ``import`` counts, including those inside functions (a deferred import still
ties two modules together); ``if TYPE_CHECKING:`` blocks are left out, since they
never run, unless ``--type-checking`` counts them too. An import names the most specific module of the package that
exists (``from a.b import c`` is ``a.b.c`` when that is a module, else ``a.b``).
A circle is a strongly connected group of two or more modules (or a module that
imports itself); one concrete loop through each group is printed.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Collection
from pathlib import Path


def module_names(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module under the package folder ``root``."""
    names: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_statements(tree: ast.AST, type_checking: bool) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement; those under ``if TYPE_CHECKING:`` only if asked."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def longest_known(name: str, modules: Collection[str]) -> str | None:
    """The longest prefix of ``name`` that is one of ``modules``."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def import_graph(modules: dict[str, Path], type_checking: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in import_statements(tree, type_checking):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                resolved = longest_known(target, modules)
                if resolved is not None:
                    graph[name].add(resolved)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (deep packages do not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(sorted(group))
    return groups


def loop_through(group: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest loop from the group's first module back to itself (breadth first)."""
    members = set(group)
    start = group[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return [start, start]


def circles(package_dir: Path, type_checking: bool = False) -> list[tuple[list[str], list[str]]]:
    modules = module_names(package_dir)
    graph = import_graph(modules, type_checking)
    found = []
    for group in strongly_connected(graph):
        if len(group) > 1 or group[0] in graph[group[0]]:
            found.append((group, loop_through(group, graph)))
    return sorted(found)


def main(argv: list[str]) -> int:
    type_checking = "--type-checking" in argv
    paths = [arg for arg in argv if arg != "--type-checking"]
    if len(paths) != 1 or any(arg.startswith("-") for arg in paths):
        print(
            "usage: python scripts/import_cycles.py PACKAGE_DIR [--type-checking]", file=sys.stderr
        )
        return 2
    package_dir = Path(paths[0])
    if not (package_dir / "__init__.py").is_file():
        print(f"{package_dir} is not a package folder", file=sys.stderr)
        return 2
    found = circles(package_dir.resolve(), type_checking)
    for group, loop in found:
        print(f"{len(group)} modules: {' -> '.join(loop)}")
        if len(group) > len(loop) - 1:
            print(f"  (all of: {', '.join(group)})")
    print(f"{len(found)} import circle{'' if len(found) == 1 else 's'} in {package_dir.name}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
