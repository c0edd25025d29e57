"""Validating a tool's arguments: a module of its own because every built-in tool
needs it and the registry imports every built-in tool (no import cycle)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ConfigDict

from reasonix_core.errors import ToolArgumentError

if TYPE_CHECKING:
    from pydantic import BaseModel

ArgsModel = TypeVar("ArgsModel", bound="BaseModel")

#: Every built-in tool's argument model: unknown keys are errors, and the
#: validator is built on the first call instead of at import (start-up: the
#: registry imports every tool, and most are never called in a run).
ARGS_CONFIG = ConfigDict(extra="forbid", defer_build=True)


def validate_args(model: type[ArgsModel], args: dict[str, Any]) -> ArgsModel:
    """Validate ``args`` with a pydantic model, raising ToolArgumentError with a
    message the model can act on."""
    from pydantic import ValidationError

    try:
        return model.model_validate(args)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
            problems.append(f"{where}: {err['msg']}")
        raise ToolArgumentError("invalid arguments: " + "; ".join(problems)) from None
