"""The session's permission policy: the preset, the read roots, the protected paths."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import cast

from reasonix_core.config import Config, reasonix_home
from reasonix_core.config.layer import read_toml
from reasonix_core.errors import ConfigError
from reasonix_core.hooks.settings import LoadedSettings
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


#: Claude Code's ``defaultMode`` -> (our preset, our fallback mode); ``plan`` is plan mode.
CLAUDE_MODES: dict[str, tuple[str, str | None]] = {
    "default": ("ask", None),
    "acceptEdits": ("auto", None),
    "bypassPermissions": ("yolo", None),
    "plan": ("ask", None),
    # Anything a rule does not allow is refused, nobody is asked.
    "dontAsk": ("ask", "deny"),
}


def build_policy(
    config: Config,
    settings: RunSettings,
    workspace: Path,
    home: Path | None = None,
    temp_dir: Path | None = None,
    claude: LoadedSettings | None = None,
) -> Policy:
    """The policy :func:`read_roots` and :func:`protected_paths` describe; ``temp_dir``:
    the session's own temp dir, readable without asking too. ``claude``: the
    ``settings.json`` files' rules (hooks/settings.py; already without what an
    untrusted project may not loosen), merged in: their allow, ask and deny rules
    add to the config's, their ``additionalDirectories`` to the read roots, and
    their ``defaultMode`` picks the preset unless ``--permission-mode`` did."""
    claude = claude or LoadedSettings()
    mode_update: dict[str, object] = {}
    preset = settings.permission_mode
    wanted = CLAUDE_MODES[claude.default_mode[0]] if claude.default_mode is not None else None
    if preset is None and wanted is not None:
        preset = wanted[0]
    if wanted is not None and wanted[1] is not None and preset in (None, wanted[0]):
        mode_update["mode"] = wanted[1]  # dontAsk: tightens whichever surface set "ask"
    preset = preset or config.permissions.preset
    if preset not in PRESETS:
        raise ConfigError(f"unknown permission mode {preset!r}; choose one of {', '.join(PRESETS)}")
    base = config.permissions
    perms = base.model_copy(
        update={
            "preset": preset,
            **mode_update,
            "allow": [*base.allow, *claude.rules_of("allow")],
            "ask": [*base.ask, *claude.rules_of("ask")],
            # --disallowed-tools: deny rules of this run only (deny wins whatever the order).
            "deny": [*base.deny, *claude.rules_of("deny"), *settings.disallowed_tools],
        }
    )
    return Policy.from_config(
        perms,
        workspace,
        extra_allow=list(settings.allowed_tools),
        read_roots=[
            *read_roots(config, settings, workspace),
            *claude.additional_directories,
            *([temp_dir] if temp_dir else []),
        ],
        forbid_read=protected_paths(config, home or settings.home or reasonix_home(), workspace),
    )


def claude_mode_name(mode: str) -> str:
    """Our ``--permission-mode`` value for Claude Code's ``defaultMode``."""
    return "plan" if mode == "plan" else CLAUDE_MODES[mode][0]


def starts_in_plan(settings: RunSettings, claude: LoadedSettings) -> bool:
    """Plan mode at the start: ``--permission-mode plan``, or a settings.json
    ``defaultMode: "plan"`` when no mode was given on the command line."""
    if settings.plan_mode:
        return True
    mode = claude.default_mode
    return settings.permission_mode is None and mode is not None and mode[0] == "plan"


# -- where a rule was declared (`reasonix permissions check`) ----------------

_KINDS = ("deny", "ask", "allow")


def rule_origins(
    toml_files: Sequence[Path], settings_origin: Callable[[str], str | None]
) -> Callable[[str], str | None]:
    """A lookup: rule text -> the file that declares it (None: not from a file,
    e.g. ``--allowed-tools`` or a grant made during the session).
    ``settings_origin``: the settings.json files' own lookup
    (``LoadedSettings.origin``), asked first."""
    declared: dict[str, str] = {}
    for path in toml_files:  # lowest first: a later file's declaration is named
        try:
            data = read_toml(path) or {}
        except ConfigError:
            continue
        perms: object = data.get("permissions")
        if not isinstance(perms, dict):
            continue
        table = cast("dict[str, object]", perms)
        for kind in _KINDS:
            rules = table.get(kind)
            if isinstance(rules, list):
                for rule in cast("list[object]", rules):
                    if isinstance(rule, str):
                        declared[rule.strip()] = str(path)

    def origin(rule: str) -> str | None:
        return settings_origin(rule) or declared.get(rule.strip())

    return origin
