"""What every built-in tool's spec is (:class:`ToolSpec`) and the base class that
reads it (:class:`SpecifiedTool`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reasonix_core.tool.base import ToolFamily


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """What the model sees of a built-in tool, and where its code is."""

    name: str
    description: str
    read_only: bool
    family: ToolFamily
    parameters: dict[str, Any]
    # "module:Class", imported by the tool's first call.
    implementation: str
    # Argument keys naming the paths this tool writes: declared by path-aware
    # writers, which a subagent's write claim can bind (seed 000 §3.12). A
    # writer that declares none cannot be bound and is dropped from a child.
    writes: tuple[str, ...] = ()


class SpecifiedTool:
    """Base of the built-in tools: what the model sees comes from the tool's
    :class:`ToolSpec` (``class Ls(SpecifiedTool, spec=LS)``), written once in
    :mod:`reasonix_core.tool.builtin.specs`, where :class:`~reasonix_core.tool.registry.LazyTool` reads it too."""

    # Set on the class from the spec; declared as instance attributes so that the
    # class satisfies the Tool protocol (whose members are instance attributes).
    name: str
    description: str
    read_only: bool
    family: ToolFamily
    parameters: dict[str, Any]

    def __init_subclass__(cls, *, spec: ToolSpec, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = spec.name
        cls.description = spec.description
        cls.read_only = spec.read_only
        cls.family = spec.family
        cls.parameters = spec.parameters
