"""Loading the effective configuration for a workspace.

The layers (command-line flags > ``REASONIX_*`` environment variables >
``<workspace>/reasonix.toml`` > ``<home>/config.toml`` > built-in defaults) are
pydantic-settings sources in :mod:`reasonix_core.config.sources`, which also says
how they merge; reading and validating one layer, and the wording of errors, are
:mod:`reasonix_core.config.layer`'s. The project file is untrusted input: its
risky settings (see :mod:`reasonix_core.trust`) apply only when the folder is
trusted.

``tomlkit`` (comment-preserving) is only imported by
:mod:`reasonix_core.config.writeback`, and pydantic-settings only when a config
is loaded, never by importing this module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from reasonix_core.config.layer import (
    PROJECT_FILE,
    USER_FILE,
    check_layer,
    format_validation_error,
    read_toml,
)
from reasonix_core.config.schema import Config
from reasonix_core.errors import ConfigError
from reasonix_core.home import reasonix_home
from reasonix_core.project import project_folders
from reasonix_core.trust import RiskySetting

if TYPE_CHECKING:
    from reasonix_core.config.sources import LayerSource

__all__ = [
    "PROJECT_FILE",
    "USER_FILE",
    "LoadedConfig",
    "check_layer",
    "format_validation_error",
    "load_config",
    "read_toml",
    "reasonix_home",
]


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """The effective configuration and where it came from."""

    config: Config
    # The files actually read, lowest precedence first.
    sources: list[Path] = field(default_factory=list)
    home: Path = field(default_factory=Path)
    workspace: Path = field(default_factory=Path)
    # Risky project settings left out because the folder is not trusted.
    withheld: tuple[RiskySetting, ...] = ()
    # The REASONIX_* environment variables applied, by name.
    environment: Mapping[str, str] = field(default_factory=dict)
    # One notice per user-only table ([serve]) a project file set and was left out.
    ignored: tuple[str, ...] = ()

    @property
    def user_file(self) -> Path:
        return self.home / USER_FILE

    @property
    def project_file(self) -> Path:
        return self.workspace / PROJECT_FILE


def load_config(
    workspace: Path,
    *,
    overrides: Mapping[str, Any] | None = None,
    home: Path | None = None,
    trust_project: bool = False,
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Load the effective config for ``workspace``.

    ``overrides`` (the command-line flags) is shaped like the TOML
    (``{"agent": {"effort": "high"}}``); dotted keys (``{"agent.effort": "high"}``)
    are accepted too, and ``None`` values are dropped so callers can pass every
    flag, set or not. ``environ`` (default: ``os.environ``) supplies the
    ``REASONIX_*`` overrides.

    The project file's risky settings apply when the folder's trust is recorded
    in ``<home>/trusted.toml`` for exactly those settings, or when
    ``trust_project`` is set (``--trust-project``); otherwise they are left out
    and listed in :attr:`LoadedConfig.withheld`.
    """
    # pydantic-settings is imported here, not at the top: only a load needs it.
    from reasonix_core.config.sources import (
        EnvironmentSource,
        FlagsSource,
        LayeredConfig,
        ProjectFileSource,
        TomlFileSource,
    )

    home = reasonix_home() if home is None else home
    user = TomlFileSource(LayeredConfig, home / USER_FILE)
    # The git root's reasonix.toml, then each folder's below it, the workspace's last.
    folders = [*project_folders(workspace)[:-1], workspace]
    projects = [
        ProjectFileSource(LayeredConfig, f, home, trust=trust_project, workspace=workspace)
        for f in folders
    ]
    env = EnvironmentSource(LayeredConfig, os.environ if environ is None else environ)
    flags = FlagsSource(LayeredConfig, overrides or {})
    lowest_first: list[LayerSource] = [user, *projects, env, flags]
    # Read (and check) lowest first, so that of two broken files the user's is named.
    present = [s for s in lowest_first if s.load() is not None]
    config = _build_checked(present)
    _note_provider_sources(config, present)
    return LoadedConfig(
        config=config,
        sources=[s.path for s in (user, *projects) if s in present],
        home=home,
        workspace=workspace,
        withheld=tuple(dict.fromkeys(w for p in projects for w in p.withheld)),
        environment=env.applied,
        ignored=tuple(line for p in projects for line in p.ignored),
    )


def _build_checked(present: list[LayerSource]) -> Config:
    """The config the ``present`` layers (lowest first) make, highest winning; any
    failure is a ConfigError naming the layers."""
    # pydantic-settings is imported here, not at the top: only a load needs it.
    from reasonix_core.config.sources import build_config

    labels = [s.label for s in present]
    try:
        return build_config(present[::-1])
    except ValidationError as exc:
        label = " + ".join(labels) if labels else "built-in defaults"
        raise ConfigError(format_validation_error(exc, label)) from None
    except (TypeError, ValueError) as exc:  # defensive: never let a raw error escape
        raise ConfigError(f"{' + '.join(labels)}: invalid configuration: {exc}") from None
    except RecursionError:
        raise ConfigError(
            f"{' + '.join(labels)}: invalid configuration: nested too deeply"
        ) from None


def _note_provider_sources(config: Config, layers: list[LayerSource]) -> None:
    """Record which layer each provider entry came from: a higher layer's entry
    replaces a lower one whole, so it is the last layer naming it."""
    for provider in config.providers:
        for layer in layers:
            entries = (layer.load() or {}).get("providers")
            if isinstance(entries, list) and any(
                isinstance(e, Mapping) and str(e.get("name", "")).strip() == provider.name
                for e in entries
            ):
                provider._declared_in = layer.label
