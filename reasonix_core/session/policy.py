"""The session's permission policy: the preset, the read roots, the protected paths."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from reasonix_core.config import Config, reasonix_home
from reasonix_core.errors import ConfigError
from reasonix_core.permission.policy import Policy
from reasonix_core.permission_modes import PRESETS
from reasonix_core.session.settings import RunSettings

#: Credential folders and files under the user's home that no tool reads and
#: the bash sandbox masks, in addition to the Reasonix home and the user's
#: own ``[sandbox] forbid_read``.
SECRET_PATHS: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.config/gh",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker/config.json",
    "~/.kube",
    "~/.gnupg",
)


def protected_paths(config: Config, home: Path, workspace: Path) -> tuple[Path, ...]:
    """What no tool may read: the Reasonix home, :data:`SECRET_PATHS` and
    ``[sandbox] forbid_read``, resolved.

    A built-in entry that contains the workspace (someone working inside
    ``~/.config/gh`` or the Reasonix home itself) is not dropped but narrowed:
    everything in it except the branch leading to the workspace stays
    protected, so the user keeps their workspace and the keys beside it stay
    hidden. Entries created there after start-up are not covered.
    """
    root = Path(os.path.realpath(workspace))
    builtin = [home, *(Path(os.path.expanduser(p)) for p in SECRET_PATHS)]
    out: list[Path] = []
    for entry in builtin:
        out.extend(_carve(Path(os.path.realpath(entry)), root))
    for entry in config.sandbox.forbid_read:
        p = Path(os.path.expanduser(entry))
        out.append(Path(os.path.realpath(p if p.is_absolute() else root / p)))
    return tuple(dict.fromkeys(out))


def _carve(secret: Path, workspace: Path) -> list[Path]:
    """``secret`` minus the path down to ``workspace`` (when it contains it)."""
    if workspace != secret and secret not in workspace.parents:
        return [secret]
    out: list[Path] = []
    here = secret
    for part in workspace.relative_to(secret).parts:
        try:
            names = sorted(os.listdir(here))
        except OSError:
            names = []
        out.extend(here / name for name in names if name != part)
        here = here / part
    return out


def _absolute(entries: Iterable[Path | str], workspace: Path) -> list[Path]:
    roots: list[Path] = []
    for entry in entries:
        p = Path(os.path.expanduser(os.fspath(entry)))
        roots.append(p if p.is_absolute() else workspace / p)
    return roots


def added_dirs(config: Config, settings: RunSettings, workspace: Path) -> list[Path]:
    """The folders the user added before the session: ``--add-dir`` and
    ``[permissions] additional_directories``. Read tools reach them without
    asking, and ``bash`` may be granted writes there without asking
    (``additional_write_dirs``, docs/PERMISSIONS.md#expanding-the-write-scope)."""
    return _absolute([*settings.add_dirs, *config.permissions.additional_directories], workspace)


def read_roots(config: Config, settings: RunSettings, workspace: Path) -> list[Path]:
    """Folders read-family tools reach without asking, besides the workspace
    (and the session temp dir, added once it exists): :func:`added_dirs` and the
    ``[sandbox] allow_write`` roots (a folder tools may write is one they may read)."""
    return [
        *added_dirs(config, settings, workspace),
        *_absolute(config.sandbox.allow_write, workspace),
    ]


def build_policy(
    config: Config,
    settings: RunSettings,
    workspace: Path,
    home: Path | None = None,
    temp_dir: Path | None = None,
) -> Policy:
    """The policy :func:`read_roots` and :func:`protected_paths` describe; ``temp_dir``:
    the session's own temp dir, readable without asking too."""
    preset = settings.permission_mode or config.permissions.preset
    if preset not in PRESETS:
        raise ConfigError(f"unknown permission mode {preset!r}; choose one of {', '.join(PRESETS)}")
    perms = config.permissions.model_copy(update={"preset": preset})
    if settings.disallowed_tools:
        # Deny rules of this run only, after the config's (deny wins whatever the order).
        perms = perms.model_copy(update={"deny": [*perms.deny, *settings.disallowed_tools]})
    return Policy.from_config(
        perms,
        workspace,
        extra_allow=list(settings.allowed_tools),
        read_roots=[*read_roots(config, settings, workspace), *([temp_dir] if temp_dir else [])],
        forbid_read=protected_paths(config, home or settings.home or reasonix_home(), workspace),
    )
