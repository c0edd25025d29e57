"""Where tools may read and write: the workspace root, extra write roots, the
session temp dir, and paths hidden from reading.

Paths are resolved through symlinks and ``..`` before every check so neither
can be used to escape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


class PathDenied(Exception):
    """A path is outside the write roots or hidden by ``forbid_read``."""


@dataclass(frozen=True, kw_only=True)
class SandboxPolicy:
    workspace: Path
    temp_dir: Path
    allow_write: tuple[Path, ...] = ()
    forbid_read: tuple[Path, ...] = ()
    # "enforce": bash runs under bubblewrap or refuses; "off": unconfined.
    bash: Literal["enforce", "off"] = "enforce"
    network: bool = False
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def write_roots(self) -> tuple[Path, ...]:
        return (self.workspace, self.temp_dir, *self.allow_write)
