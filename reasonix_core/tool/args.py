"""Validating a tool's arguments: a module of its own because every built-in tool
needs it and the registry imports every built-in tool (no import cycle)."""

from __future__ import annotations

from typing import Any

from reasonix_core.errors import ToolArgumentError


def validate_args(model: Any, args: dict[str, Any]) -> Any:
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
