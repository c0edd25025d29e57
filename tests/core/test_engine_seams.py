"""The engine's seams, checked on the source: no import cycles in reasonix_core,
and no model call that bypasses ModelCall."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import reasonix_core

ROOT = Path(reasonix_core.__file__).parent


def _modules(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package)."""
    out: dict[str, tuple[Path, bool]] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        out[".".join(parts)] = (path, package)
    return out


def _imports(name: str, tree: ast.AST, package: bool, modules: set[str]) -> set[str]:
    """Every reasonix_core module ``name`` imports: at module level, under
    ``if TYPE_CHECKING`` and inside functions alike (a deferred import is still
    a dependency). Importing a submodule does not count as importing its
    parent package: that edge is Python's, not the design's."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                target = f"{module}.{alias.name}"
                if target in modules:
                    found.add(target)
                elif module in modules:
                    found.add(module)
    found.discard(name)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)
    names = set(modules)
    graph: dict[str, set[str]] = {}
    for name, (path, package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = _imports(name, tree, package, names)
    return graph


def test_reasonix_core_has_no_import_cycle() -> None:
    cycles = _cycles(import_graph())
    new = [sorted(c) for c in cycles]
    assert new == []


def test_the_cycle_check_sees_a_type_checking_only_cycle(tmp_path: Path) -> None:
    """The shape the agent had (context.py naming the Agent under TYPE_CHECKING,
    loop.py importing the context manager) is a cycle."""
    pkg = tmp_path / "reasonix_core" / "agent"
    pkg.mkdir(parents=True)
    (tmp_path / "reasonix_core" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "loop.py").write_text("from reasonix_core.agent.context import ContextManager\n")
    (pkg / "context.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from reasonix_core.agent.loop import Agent\n"
    )
    graph = import_graph(tmp_path / "reasonix_core")
    assert _cycles(graph) == [
        frozenset({"reasonix_core.agent.loop", "reasonix_core.agent.context"})
    ]


# -- only ModelCall calls the model ---------------------------------------------

MODEL_CALL = "reasonix_core.agent.model_call"
# Reading a model's stream needs these; only ModelCall (and the providers that
# make them) may touch them.
STREAM_CHUNKS = {"TextChunk", "ReasoningChunk", "ToolCallFragment", "StreamEnd"}


def _model_call_bypasses(name: str, tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "reasonix_core.provider"
        ):
            for alias in node.names:
                if alias.name in STREAM_CHUNKS:
                    yield f"{name}:{node.lineno} imports {alias.name}"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("stream", "prepare")
            and "provider" in ast.unparse(node.func.value).lower()
        ):
            yield f"{name}:{node.lineno} calls {ast.unparse(node.func)}"


def _bypasses(root: Path = ROOT) -> list[str]:
    found: list[str] = []
    for name, (path, _) in sorted(_modules(root).items()):
        if name == MODEL_CALL or name.startswith("reasonix_core.provider"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.extend(_model_call_bypasses(name, tree))
    return found


def test_only_model_call_prepares_requests_and_reads_streams() -> None:
    assert _bypasses() == []


def test_the_bypass_check_sees_a_private_stream_loop(tmp_path: Path) -> None:
    """The shape compaction had: its own prepare + stream + chunk loop."""
    pkg = tmp_path / "reasonix_core" / "agent"
    pkg.mkdir(parents=True)
    (pkg / "context.py").write_text(
        "from reasonix_core.provider.base import Request, StreamEnd, TextChunk\n"
        "async def _call(host, request):\n"
        "    prepared = host.provider.prepare(request)\n"
        "    async for chunk in host.provider.stream(prepared):\n"
        "        pass\n"
    )
    found = _bypasses(tmp_path / "reasonix_core")
    assert found == [
        "reasonix_core.agent.context:1 imports StreamEnd",
        "reasonix_core.agent.context:1 imports TextChunk",
        "reasonix_core.agent.context:3 calls host.provider.prepare",
        "reasonix_core.agent.context:4 calls host.provider.stream",
    ]
