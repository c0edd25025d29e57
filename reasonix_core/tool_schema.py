"""A tool as the model sees it (:class:`ToolSchema`): built by the tool registry,
encoded by every provider. Below both ``tool/`` and ``provider/`` so that neither
imports the other for it (``provider.base`` re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSchema:
    """A tool as the model sees it: name, description, argument schema."""

    name: str
    description: str
    parameters: dict[str, Any] = field(hash=False)

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }
