"""The configuration layers as pydantic-settings sources.

Precedence, highest first:

1. command-line flags (:class:`FlagsSource`, the ``overrides`` of ``load_config``);
2. ``REASONIX_*`` environment variables (:class:`EnvironmentSource`): single-value
   settings only, e.g. ``REASONIX_AGENT__MAX_STEPS=5``, ``REASONIX_DEFAULT_MODEL=x``;
3. ``reasonix.toml`` in the workspace, then in each folder above it up to the git
   root (:class:`ProjectFileSource`; the deeper wins), without their risky settings
   unless the workspace is trusted (:mod:`reasonix_core.trust`);
4. ``<home>/config.toml`` (:class:`TomlFileSource`);
5. built-in defaults (the schema's field defaults).

The environment sits above the files, as in Claude Code and most twelve-factor
tools: a variable is set for one shell or one CI job, so it is the more specific
choice. It sets single values only, never providers, lists or tables, and never a
value that loosens permissions or the sandbox (what :mod:`reasonix_core.trust`
calls risky): a variable may come from a repository's dev container or CI file, so
where a key goes and what runs without asking stay in the user's files and flags.

Each source validates its own layer first, so an error names the file (or the
variable) and the key path inside it. pydantic-settings then merges the layers with a
deep dict update: tables merge key by key and anything else is replaced. Two rules are
not "replace": ``[[providers]]`` merge by ``name``, and the tightening lists
(``permissions.deny``, ``permissions.ask``, ``sandbox.forbid_read``) are the union of
every layer's. The sources therefore hand those over *keyed* (providers as
``{name: entry}``, each entry boxed so it is replaced whole; union lists as
``{rule: rule}``), which the deep update merges exactly as wanted: lower entries keep
their place, a higher entry of the same name replaces it, new ones are appended.
:class:`LayeredConfig` turns them back into lists before the schema sees them.

Only :mod:`reasonix_core.config.loader` imports this module, and only when it loads:
pydantic-settings stays off the paths that never load a config (``--version``).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from reasonix_core.config.layer import (
    PROJECT_FILE,
    USER_FILE,
    check_layer,
    describe_error,
    read_toml,
)
from reasonix_core.config.schema import Config
from reasonix_core.errors import ConfigError
from reasonix_core.trust import RiskySetting, review_project, risky_settings, strip_risky

__all__ = [
    "ENV_PREFIX",
    "UNION_LISTS",
    "USER_ONLY_TABLES",
    "EnvironmentSource",
    "FlagsSource",
    "LayerSource",
    "LayeredConfig",
    "ProjectFileSource",
    "TomlFileSource",
    "build_config",
    "environment_settings",
]

#: Lists that only tighten: every layer's entries apply (a project's ``deny = []``
#: must not wipe the user's deny rules).
UNION_LISTS: tuple[tuple[str, str], ...] = (
    ("permissions", "deny"),
    ("permissions", "ask"),
    ("sandbox", "forbid_read"),
)

#: Tables only the user's own ``config.toml`` (and flags) may set: a project file's
#: are left out with a notice, and no environment variable names them. ``[serve]``
#: decides who on the network reaches the user's agent.
USER_ONLY_TABLES: tuple[str, ...] = ("serve",)

ENV_PREFIX = "REASONIX_"
#: Between a table and its key in a variable name: ``REASONIX_AGENT__MAX_STEPS``.
ENV_NESTING = "__"
FLAGS_LABEL = "command-line overrides"


# --- the layers ------------------------------------------------------------------


class LayerSource(PydanticBaseSettingsSource):
    """One layer of settings, shaped like the TOML and validated on its own.

    :meth:`load` reads it once (``None``: the layer is absent); calling the source,
    as pydantic-settings does, hands the layer over keyed for the merge.
    """

    def __init__(self, settings_cls: type[BaseSettings], label: str) -> None:
        super().__init__(settings_cls)
        self.label = label
        self._loaded = False
        self._layer: dict[str, Any] | None = None

    def load(self) -> dict[str, Any] | None:
        if not self._loaded:
            self._layer = self.read()
            self._loaded = True
        return self._layer

    def read(self) -> dict[str, Any] | None:
        raise NotImplementedError

    def __call__(self) -> dict[str, Any]:
        layer = self.load()
        return _keyed(layer) if layer else {}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # Abstract in the base class for field-by-field sources (pydantic-settings' own
        # call it from their __call__); a layer is read whole by read().
        return None, field_name, False


class TomlFileSource(LayerSource):
    """A TOML file (``config.toml``): absent when the file does not exist."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls, str(path))
        self.path = path

    def read(self) -> dict[str, Any] | None:
        data = read_toml(self.path)
        if data is None:
            return None
        data = self.admit(data)
        check_layer(data, self.label)
        return data

    def admit(self, data: dict[str, Any]) -> dict[str, Any]:
        """The part of the file that applies: all of it (the user's own file)."""
        return data


class ProjectFileSource(TomlFileSource):
    """``reasonix.toml`` in ``folder`` (the workspace, or a folder above it up to the
    git root): untrusted input. Its risky settings are left out unless the
    workspace's trust is recorded in ``<home>/trusted.toml`` for exactly the risky
    settings of every project file it sees, or ``trust_project`` is set; what was
    left out is in :attr:`withheld`."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        folder: Path,
        home: Path,
        *,
        trust: bool,
        workspace: Path | None = None,
    ) -> None:
        super().__init__(settings_cls, folder / PROJECT_FILE)
        self.workspace = folder if workspace is None else workspace
        self.home, self.trust = home, trust
        self.withheld: tuple[RiskySetting, ...] = ()
        #: One line per user-only table the file set and that was left out.
        self.ignored: tuple[str, ...] = ()

    def admit(self, data: dict[str, Any]) -> dict[str, Any]:
        refused = [t for t in USER_ONLY_TABLES if t in data]
        if refused:
            # Trusted or not: trust is about a folder's own settings, never the server's.
            self.ignored = tuple(
                f"{self.path}: [{t}] is ignored: only the user's {USER_FILE} may set it"
                for t in refused
            )
            data = {k: v for k, v in data.items() if k not in refused}
        if self.trust:
            return data
        review = review_project(self.workspace, self.home, preread={self.path: data})
        if not review.needs_trust:
            return data
        self.withheld = review.risky
        return strip_risky(data)


class EnvironmentSource(LayerSource):
    """``REASONIX_*`` variables naming single-value settings (see
    :func:`environment_settings`). Variables without ``__`` that name no top-level
    setting (``REASONIX_HOME``, ``REASONIX_TOKENIZER``) belong to other mechanisms and
    are skipped; a name with ``__`` is meant as a setting, so an unknown one is an error.
    """

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls, f"{ENV_PREFIX}* environment variables")
        self.environ = environ
        #: The variables applied, by name.
        self.applied: dict[str, str] = {}

    def read(self) -> dict[str, Any] | None:
        settable = environment_settings()
        paths: dict[str, tuple[str, ...]] = {}
        for name in sorted(self.environ):
            if not name.startswith(ENV_PREFIX):
                continue
            suffix = name[len(ENV_PREFIX) :].lower()
            path = settable.get(suffix)
            if path is None:
                if ENV_NESTING not in suffix and suffix not in Config.model_fields:
                    continue
                raise ConfigError(f"environment variable {name}: {_not_settable(suffix)}")
            paths[name] = path
        if not paths:
            return None
        layer: dict[str, Any] = {}
        for name, path in paths.items():
            table = layer
            for part in path[:-1]:
                table = table.setdefault(part, {})
            table[path[-1]] = self.environ[name]
        try:
            validated = Config.model_validate(layer)
        except ValidationError as exc:
            raise ConfigError(_env_error(exc, paths)) from None
        for name, path in paths.items():
            if _loosens(validated, path):
                raise ConfigError(
                    f"environment variable {name}: {'.'.join(path)} = {self.environ[name]!r} "
                    "loosens permissions or the sandbox, which only config.toml and "
                    "command-line flags may do"
                )
        self.applied = {name: self.environ[name] for name in paths}
        return layer


class FlagsSource(LayerSource):
    """Command-line flags, shaped like the TOML (``{"agent": {"effort": "high"}}``) or
    dotted (``{"agent.effort": "high"}``); ``None`` values are dropped so callers can
    pass every flag, set or not."""

    def __init__(self, settings_cls: type[BaseSettings], overrides: Mapping[str, Any]) -> None:
        super().__init__(settings_cls, FLAGS_LABEL)
        self.overrides = overrides

    def read(self) -> dict[str, Any] | None:
        data = _expand_dotted(self.overrides)
        if not data:
            return None
        check_layer(data, self.label)
        return data


# --- the settings model ------------------------------------------------------------

#: The sources of the load in progress, highest precedence first (see build_config).
_ACTIVE: ContextVar[tuple[LayerSource, ...]] = ContextVar("reasonix_config_sources", default=())


class LayeredConfig(Config, BaseSettings):
    """:class:`Config` assembled by pydantic-settings from the layers of one load.

    Built only through :func:`build_config`; outside it (``LayeredConfig(...)``) it reads
    only its keyword arguments, like :class:`Config`.
    """

    model_config: ClassVar[SettingsConfigDict] = SettingsConfigDict(
        extra="forbid",
        # Defaults are validated as Config validates them: not at all.
        validate_default=False,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Never pydantic-settings' own environment or .env readers: the environment
        # reaches config only through EnvironmentSource's rules, and <home>/.env
        # holds API keys (reasonix_core.config.secrets), not settings.
        return _ACTIVE.get() or (init_settings,)

    @model_validator(mode="before")
    @classmethod
    def _lists_from_keyed(cls, data: object) -> object:
        return _unkeyed(data) if isinstance(data, dict) else data


def build_config(sources: Sequence[LayerSource]) -> LayeredConfig:
    """Merge ``sources`` (highest precedence first) over the defaults and validate.

    Raises :class:`ConfigError` for a bad layer and :class:`ValidationError` when the
    layers are valid alone but not together (the caller names the layers)."""
    token = _ACTIVE.set(tuple(sources))
    try:
        return LayeredConfig()
    finally:
        _ACTIVE.reset(token)


# --- keyed merge -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Whole:
    """A value the deep update must replace, never merge into (a provider entry)."""

    value: object


def _provider_name(entry: object) -> str | None:
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return name.strip() if isinstance(name, str) else None


def _keyed(layer: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(layer)
    providers = out.get("providers")
    if isinstance(providers, list):
        # A validated layer has unique, non-empty names; the index only guards the
        # impossible so that no entry is ever lost.
        out["providers"] = {
            (_provider_name(e) or f"\0{i}"): _Whole(e) for i, e in enumerate(providers)
        }
    for table, key in UNION_LISTS:
        section = out.get(table)
        if isinstance(section, Mapping) and isinstance(section.get(key), list):
            out[table] = {**section, key: {_union_key(x): x for x in section[key]}}
    return out


def _union_key(item: object) -> str | int | float | bool:
    return item if isinstance(item, str | int | float | bool) else repr(item)


def _unkeyed(data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    providers = out.get("providers")
    if isinstance(providers, dict):
        out["providers"] = [e.value if isinstance(e, _Whole) else e for e in providers.values()]
    for table, key in UNION_LISTS:
        section = out.get(table)
        if isinstance(section, Mapping) and isinstance(section.get(key), dict):
            out[table] = {**section, key: list(section[key].values())}
    return out


def _expand_dotted(overrides: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in overrides.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            value = _expand_dotted(value)
            if not value:
                continue
        parts = [p for p in str(key).split(".") if p]
        if not parts:
            continue
        nested: object = value
        for part in reversed(parts[1:]):
            nested = {part: nested}
        out = _merge_tables(out, {parts[0]: nested})
    return out


def _merge_tables(lower: Mapping[str, Any], higher: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(lower)
    for key, value in higher.items():
        below = out.get(key)
        out[key] = (
            _merge_tables(below, value)
            if isinstance(value, Mapping) and isinstance(below, Mapping)
            else value
        )
    return out


# --- the environment -----------------------------------------------------------------


@cache
def environment_settings() -> dict[str, tuple[str, ...]]:
    """Every setting the environment may set, by variable suffix (lower case):
    ``{"default_model": ("default_model",), "agent__max_steps": ("agent", "max_steps")}``.
    Single values only (strings, numbers, booleans, one of a few words), at the top
    level or in a table; never providers, lists or free-form tables."""
    out: dict[str, tuple[str, ...]] = {}
    for name, field in Config.model_fields.items():
        if name in USER_ONLY_TABLES:
            continue
        table = _table_model(field.annotation)
        if table is not None:
            for key, inner in table.model_fields.items():
                if _is_single_value(inner.annotation):
                    out[f"{name}{ENV_NESTING}{key}"] = (name, key)
        elif _is_single_value(field.annotation):
            out[name] = (name,)
    return out


def _loosens(validated: Config, path: tuple[str, ...]) -> bool:
    """Whether the value ``validated`` holds at ``path`` is one the trust rules call
    risky. A variable can come from a repository (a dev container's or a CI job's
    environment), so it may tighten but never loosen. ``default_model`` is the
    exception: the environment adds no providers, so it only picks among the
    configured ones (a project's only once its folder is trusted)."""
    if path == ("default_model",):
        return False
    value: object = validated
    for part in path:
        value = getattr(value, part)
    nested: dict[str, object] = {}  # `path` is never empty (environment_settings)
    inner: object = value
    for part in reversed(path):
        nested = {part: inner}
        inner = nested
    risky = risky_settings(nested)
    return bool(risky)


def _table_model(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _is_single_value(annotation: object) -> bool:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Literal:
        return True
    if args and len(args) < len(typing.get_args(annotation)):  # X | None
        return len(args) == 1 and _is_single_value(args[0])
    return annotation in (str, int, float, bool)


def _not_settable(suffix: str) -> str:
    settable = environment_settings()
    head, _, key = suffix.partition(ENV_NESTING)
    dotted = suffix.replace(ENV_NESTING, ".")
    if head in USER_ONLY_TABLES:
        return f"[{head}] cannot be set from the environment; set it in the user's {USER_FILE}"
    if head in Config.model_fields and (not key or _table_model(_annotation(head)) is None):
        return (
            f"{head} cannot be set from the environment (only single-value settings can); "
            f"set it in {USER_FILE}"
        )
    table = _table_model(_annotation(head))
    if table is not None and key in table.model_fields:
        return (
            f"{dotted} cannot be set from the environment (only single-value settings can); "
            f"set it in {USER_FILE}"
        )
    candidates = [s.upper() for s in settable]
    import difflib  # only an unknown variable's did-you-mean needs it: off the run's path

    hint = difflib.get_close_matches(suffix.upper(), candidates, n=1, cutoff=0.6)
    did_you_mean = f" (did you mean {ENV_PREFIX}{hint[0]}?)" if hint else ""
    return f"unknown setting {dotted!r}{did_you_mean}"


def _annotation(name: str) -> object:
    field = Config.model_fields.get(name)
    return field.annotation if field is not None else None


def _env_error(exc: ValidationError, paths: Mapping[str, tuple[str, ...]]) -> str:
    """One line per problem, naming the variable(s) that set the key."""
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        loc = tuple(str(p) for p in err["loc"])
        names = [n for n, p in paths.items() if p[: len(loc)] == loc or loc[: len(p)] == p]
        label = "environment variable" + ("s " if len(names) > 1 else " ") + ", ".join(names)
        lines.append(f"{label}: {describe_error(err)}")
    return "\n".join(lines)
