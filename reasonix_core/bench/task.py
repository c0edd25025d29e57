"""An e2ebench task: ``<corpus>/<name>/task.toml``, ``workdir/`` and a verifier.

``task.toml`` is validated with pydantic; an error names the file and the key.
The verifier (``verify.py`` or ``verify.sh``) sits beside ``workdir/``, outside
what the agent's workspace receives, and exits 0 when the task is solved.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reasonix_core.config.layer import describe_error
from reasonix_core.errors import BenchError

CATEGORIES = ("qa", "edit", "context")
VERIFIERS = ("verify.py", "verify.sh")
TASK_FILE = "task.toml"

# What an arm (or a task's own [settings]) may set: a flag of `reasonix run`, or a
# key of the generated config.toml's [agent] / [tools] / [sandbox] tables or of its
# one provider entry ("provider.context_window" forces compaction early).
RUN_FLAG_KEYS = ("model", "effort", "max_steps", "permission_mode")
CONFIG_TABLES = ("agent", "provider", "tools", "sandbox")
_SETTING_KEY = re.compile(r"[a-z_]+(\.[a-z_]+)?")
# A task's or an arm's name: it names a folder of the output.
NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


def check_setting_key(key: str) -> str | None:
    """Why ``key`` is not a setting an arm may vary, or None."""
    if not _SETTING_KEY.fullmatch(key):
        return f"{key!r} is not a setting name (e.g. model, agent.compact_ratio)"
    table, _, name = key.partition(".")
    if not name and key not in RUN_FLAG_KEYS:
        return f"{key!r} is neither {', '.join(RUN_FLAG_KEYS)} nor a dotted config key"
    if name and table not in CONFIG_TABLES:
        return f"{key!r}: settings live under {', '.join(CONFIG_TABLES)}"
    return None


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_seconds: float = Field(default=600, gt=0)
    # Passed as --max-steps; also the cost estimate's number of requests per run.
    max_steps: int = Field(default=30, ge=1)


class TaskSpec(BaseModel):
    """The contents of one task.toml."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1)
    category: Literal["qa", "edit", "context"]
    description: str = ""
    # A folder under the corpus's parent copied before workdir/ (the shared sample project).
    base: str = ""
    limits: Limits = Field(default_factory=Limits)
    # The task's own settings, applied under every arm (an arm's value wins).
    settings: dict[str, Any] = Field(default_factory=dict)
    # The settings an arm may change for this task; empty means any.
    vary: list[str] = Field(default_factory=list)

    @field_validator("settings")
    @classmethod
    def _known_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            problem = check_setting_key(key)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("vary")
    @classmethod
    def _known_vary(cls, value: list[str]) -> list[str]:
        for key in value:
            problem = check_setting_key(key)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("base")
    @classmethod
    def _plain_base(cls, value: str) -> str:
        if value and (not re.fullmatch(r"[A-Za-z0-9_-]+", value)):
            raise ValueError("a folder name beside the tasks folder (letters, digits, - and _)")
        return value


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    folder: Path
    spec: TaskSpec
    verifier: Path

    @property
    def workdir(self) -> Path:
        return self.folder / "workdir"

    def base_folder(self) -> Path | None:
        return self.folder.parent.parent / self.spec.base if self.spec.base else None

    def materialise(self, dest: Path) -> None:
        """The starting files in ``dest`` (created): the base project, then workdir/."""
        base = self.base_folder()
        if base is not None:
            shutil.copytree(base, dest, symlinks=True, dirs_exist_ok=True)
        if self.workdir.is_dir():
            shutil.copytree(self.workdir, dest, symlinks=True, dirs_exist_ok=True)
        dest.mkdir(parents=True, exist_ok=True)

    def arm_keys_allowed(self, keys: list[str]) -> tuple[list[str], list[str]]:
        """``keys`` split into those this task lets an arm vary and those it does not."""
        if not self.spec.vary:
            return list(keys), []
        allowed = [k for k in keys if k in self.spec.vary]
        return allowed, [k for k in keys if k not in self.spec.vary]


def load_task(folder: Path) -> Task:
    path = folder / TASK_FILE
    if not NAME.fullmatch(folder.absolute().name):
        raise BenchError(
            f"{folder}: a task folder's name is letters, digits, - _ . (not first a dot)"
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: no such file (a task folder needs {TASK_FILE})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BenchError(f"{path}: invalid TOML: {exc}") from None
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BenchError(f"{path}: {describe_error(first)}") from None
    verifiers = [folder / v for v in VERIFIERS if (folder / v).is_file()]
    if len(verifiers) != 1:
        found = "none" if not verifiers else " and ".join(v.name for v in verifiers)
        raise BenchError(f"{folder}: needs exactly one of {' or '.join(VERIFIERS)} (found {found})")
    folder = folder.absolute()
    verifiers = [v.absolute() for v in verifiers]
    task = Task(name=folder.name, folder=folder, spec=spec, verifier=verifiers[0])
    base = task.base_folder()
    if base is not None and not base.is_dir():
        raise BenchError(f"{path}: base: no folder {base}")
    if not task.workdir.is_dir() and base is None:
        raise BenchError(f"{folder}: no workdir/ folder and no base project")
    return task


def task_folders(corpus: Path) -> list[Path]:
    """The task folders of ``corpus`` (each holds a ``task.toml``), sorted."""
    return sorted(p for p in corpus.iterdir() if (p / TASK_FILE).is_file())


def load_tasks(corpus: Path, names: list[str]) -> list[Task]:
    """The named tasks of ``corpus``, else all of them. A name is a folder of the
    corpus or a path: a task folder (it holds ``task.toml``), or a corpus of its
    own (no ``task.toml``, task folders inside), which names all its tasks."""
    if not names:
        if not corpus.is_dir():
            raise BenchError(f"{corpus}: no such tasks folder")
        folders = task_folders(corpus)
        if not folders:
            raise BenchError(f"{corpus}: no task folders (each holds a {TASK_FILE})")
        return [load_task(p) for p in folders]
    tasks = []
    for name in names:
        folder = Path(name) if ("/" in name or Path(name).is_absolute()) else corpus / name
        if not folder.is_dir():
            raise BenchError(f"{name}: no such task (looked for {folder})")
        if (folder / TASK_FILE).exists():
            tasks.append(load_task(folder))
            continue
        members = task_folders(folder)
        if not members:
            raise BenchError(
                f"{folder}: neither a task (no {TASK_FILE}) nor a corpus (no folder in it "
                f"holds a {TASK_FILE})"
            )
        tasks += [load_task(p) for p in members]
    seen: set[str] = set()
    for task in tasks:
        if task.name in seen:
            raise BenchError(f"task {task.name!r} is named twice")
        seen.add(task.name)
    return tasks
