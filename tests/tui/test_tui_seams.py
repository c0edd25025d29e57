"""The TUI's services are one declared Protocol: no member is looked up by name,
and every implementation (the engine's, the deferred stand-in, the scripted
one) provides every declared member itself or through :class:`BaseServices`."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

import reasonix_tui
from reasonix_testkit.tui import ScriptedServices
from reasonix_tui.deferred import DeferredServices
from reasonix_tui.engine import EngineServices
from reasonix_tui.services import AppServices, BaseServices, SessionHandle

PACKAGE = Path(reasonix_tui.__file__).parent

#: Places allowed to resolve a member by name: none (DeferredServices spells out
#: each member, so the type checker sees it implement the Protocol).
DELEGATION: set[tuple[str, str]] = set()


def declared_members(protocol: type = AppServices) -> dict[str, Any]:
    """Every member of a protocol: annotated attributes and properties (None) and methods."""
    members: dict[str, Any] = dict.fromkeys(protocol.__annotations__)
    for name, value in vars(protocol).items():
        if isinstance(value, property):
            members[name] = None
        elif inspect.isfunction(value) and not name.startswith("_"):
            members[name] = value
    return members


def lookups_in(source: str, file: str) -> list[tuple[str, str, str]]:
    """(file, enclosing function, call) of each getattr/hasattr/setattr on the
    services object or with the literal name of a services member."""
    members = set(declared_members())
    found = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            scope = (*scope, node.name)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and node.args
        ):
            target = ast.unparse(node.args[0])
            name = node.args[1] if len(node.args) > 1 else None
            literal = isinstance(name, ast.Constant) and name.value in members
            if "services" in target or literal:
                found.append((file, ".".join(scope), ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(ast.parse(source), ())
    return found


def dynamic_lookups() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        file = path.relative_to(PACKAGE).as_posix()
        found += lookups_in(path.read_text(encoding="utf-8"), file)
    return found


def test_no_services_member_is_looked_up_by_name() -> None:
    lookups = dynamic_lookups()
    unexpected = [hit for hit in lookups if (hit[0], hit[1]) not in DELEGATION]
    assert unexpected == [], "declare the member on AppServices instead"


def test_the_scan_sees_the_lookups_it_forbids() -> None:
    source = """
class Screen:
    def status(self):
        return getattr(self.services, "compact_ratio", None)

def ready(app):
    return hasattr(app.thing, "is_ready") and getattr(app, "cursor_blink", True)
"""
    assert [(scope, call) for _, scope, call in lookups_in(source, "x.py")] == [
        ("Screen.status", "getattr(self.services, 'compact_ratio', None)"),
        ("ready", "hasattr(app.thing, 'is_ready')"),
    ]


def test_deferred_serves_every_member_itself(tmp_path: Path) -> None:
    """No member of the stand-in falls back to BaseServices' default: each waits for,
    or stands in for, the built services' own."""
    services = DeferredServices(
        lambda: scripted(tmp_path), workspace=tmp_path, config_home=tmp_path
    )
    inherited = [
        name
        for name in declared_members()
        if name not in vars(DeferredServices) and name not in vars(services)
    ]
    assert inherited == []


def implementation(obj: object, name: str) -> object:
    """Where ``obj`` gets ``name`` from, without evaluating it (properties, descriptors)."""
    if name in vars(obj):
        return vars(obj)[name]
    for klass in type(obj).__mro__:
        if name in vars(klass):
            assert klass not in (AppServices, SessionHandle), f"{type(obj).__name__}.{name}: stub"
            return vars(klass)[name]
    raise AssertionError(f"{type(obj).__name__} lacks {name}")


def assert_satisfies(obj: object, protocol: type = AppServices) -> None:
    """Every declared member is implemented, and each method is callable the
    way the Protocol declares it (awaited or not)."""
    for name, declared in declared_members(protocol).items():
        implementation(obj, name)
        value = getattr(obj, name)
        if declared is None:
            continue
        assert callable(value), name
        assert inspect.iscoroutinefunction(value) == inspect.iscoroutinefunction(declared), name


def scripted(tmp_path: Path) -> ScriptedServices:
    return ScriptedServices(workspace=tmp_path / "ws", config_home=tmp_path / "home")


def test_scripted_services_satisfy_the_protocol(tmp_path: Path) -> None:
    services = scripted(tmp_path)
    assert isinstance(services, BaseServices)
    assert_satisfies(services)


@pytest.mark.usefixtures("configured")
def test_engine_services_satisfy_the_protocol(workspace: Path, home: Path) -> None:
    services = EngineServices(workspace, home=home)
    assert isinstance(services, BaseServices)
    assert_satisfies(services)
    assert isinstance(services.compact_ratio, float)


def test_deferred_services_satisfy_the_protocol_before_and_after_ready(tmp_path: Path) -> None:
    built: list[ScriptedServices] = []

    def factory() -> ScriptedServices:
        built.append(scripted(tmp_path))
        return built[-1]

    services = DeferredServices(factory, workspace=tmp_path / "ws", config_home=tmp_path / "home")
    # What the first frame reads has a placeholder and builds nothing.
    for name in declared_members():
        implementation(services, name)
    assert not services.is_ready
    assert (services.context_window, services.compact_ratio) == (0, None)
    assert services.mcp_prompts() == []
    assert built == []
    assert_satisfies(services)  # a blocking member builds the services
    assert len(built) == 1 and services.is_ready
    assert services.context_window == built[0].context_window


def test_every_session_handle_satisfies_the_protocol(tmp_path: Path) -> None:
    """What belongs to one session is asked of the handle new_runner returns: the
    scripted one, the engine's (over the core Session) and the deferred stand-in."""
    from reasonix_core.permission.approver import FailClosedApprover
    from reasonix_tui.deferred import DeferredRunner
    from reasonix_tui.engine import EngineRunner

    assert not set(declared_members(SessionHandle)) & set(declared_members()), "one owner"
    services = scripted(tmp_path)
    assert_satisfies(services.new_runner(FailClosedApprover()), SessionHandle)
    deferred = DeferredServices(
        lambda: scripted(tmp_path), workspace=tmp_path / "ws", config_home=tmp_path / "home"
    )
    stand_in = deferred.new_runner(FailClosedApprover())
    assert isinstance(stand_in, DeferredRunner)
    assert_satisfies(stand_in, SessionHandle)
    for name, declared in declared_members(SessionHandle).items():
        real = vars(EngineRunner)[name]
        if declared is not None:
            assert inspect.iscoroutinefunction(real) == inspect.iscoroutinefunction(declared)
