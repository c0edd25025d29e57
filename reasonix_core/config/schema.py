"""The configuration schema: what ``config.toml`` / ``reasonix.toml`` may contain.

Every table forbids unknown keys so a typo (``base_ulr``) is an error rather than
a silently ignored setting. Keys the original Go product wrote, or that belong to
features not built yet, are listed per table in ``_LEGACY``: they are accepted,
kept readable through :attr:`_Table.legacy`, and otherwise ignored, so a config
written by an older Reasonix still loads.

Plain ``pydantic.BaseModel`` tables: each layer (a file, the environment, the
flags) is validated against :class:`Config` on its own, and pydantic-settings
assembles the effective one from the layers (``LayeredConfig`` in
:mod:`reasonix_core.config.sources`), so this module never imports it.

No ``from __future__ import annotations`` here: pydantic would evaluate every
field's annotation from its text when the tables are built (~1 ms of each
start-up); written as real types, Python has evaluated them already.
"""

import os
import re
from typing import Any, ClassVar, Literal, Self
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)

from reasonix_core.config.prices import Price, deepseek_off_peak_prices
from reasonix_core.efforts import accepted_efforts, check_effort, known_efforts
from reasonix_core.permission_modes import PresetName

__all__ = [
    "AgentConfig",
    "Config",
    "ModelOverride",
    "PermissionsConfig",
    "Price",
    "ProviderConfig",
    "SandboxConfig",
    "ServeConfig",
    "ToolsConfig",
    "builtin_provider",
    "expand_path",
]

COMPACT_RATIO_MIN = 0.30
COMPACT_RATIO_MAX = 0.85


# Default factories for ``list`` and ``dict`` fields: pydantic reads every default
# factory's signature, and for a builtin type that means parsing its text signature
# with ``tokenize`` (~2.5 ms of every start-up for these tables).
def _new_list() -> list[Any]:
    return []


def _new_dict() -> dict[str, Any]:
    return {}


class _Table(BaseModel):
    """A config table: unknown keys are errors, known legacy keys are set aside."""

    model_config = ConfigDict(extra="forbid")

    # Keys accepted for compatibility and ignored by the engine.
    _LEGACY: ClassVar[frozenset[str]] = frozenset()
    _legacy: dict[str, Any] = PrivateAttr(default_factory=_new_dict)

    @model_validator(mode="wrap")
    @classmethod
    def _set_aside_legacy(cls, data: object, handler: ModelWrapValidatorHandler[Self]) -> Self:
        legacy: dict[str, Any] = {}
        if isinstance(data, dict) and cls._LEGACY:
            legacy = {k: v for k, v in data.items() if k in cls._LEGACY}
            if legacy:
                data = {k: v for k, v in data.items() if k not in cls._LEGACY}
                data = cls._adopt_legacy(data, legacy)
        model = handler(data)
        if legacy:
            model._legacy = legacy
        return model

    @classmethod
    def _adopt_legacy(cls, data: dict[str, Any], legacy: dict[str, Any]) -> dict[str, Any]:
        """Map legacy keys that still mean something onto current ones."""
        return data

    @property
    def legacy(self) -> dict[str, Any]:
        """Legacy or not-yet-supported keys that were present, as read."""
        return dict(self._legacy)


class ModelOverride(_Table):
    """``[providers.model_overrides."<model>"]``: per-model limits."""

    context_window: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = None


#: Provider kinds whose endpoint runs a web search tool server-side.
WEB_SEARCH_KINDS = ("anthropic", "responses")


class ProviderConfig(_Table):
    """One ``[[providers]]`` entry: a vendor endpoint that serves one or more models."""

    _LEGACY: ClassVar[frozenset[str]] = frozenset(
        {
            "chat_url",
            "models_url",
            "billing_currency",
            "billing_mode",
            "thinking",
            "supported_efforts",
            "extra_body",
            "display_name",
            "balance_url",
        }
    )

    name: str = Field(min_length=1)
    kind: str = "openai"
    base_url: str = ""
    # A full request URL used as is (instead of base_url + the kind's path).
    request_url: str = ""
    models: list[str] = Field(default_factory=_new_list)
    # Legacy single-model form; still honoured.
    model: str = ""
    default: str = ""
    api_key_env: str = ""
    context_window: int = Field(default=131072, gt=0)
    # 0: provider's automatic value; > 0: explicit cap; < 0: omit the field.
    max_output_tokens: int = 0
    model_overrides: dict[str, ModelOverride] = Field(default_factory=_new_dict)
    # None: "deepseek" when the endpoint host contains "deepseek", else "openai".
    reasoning_protocol: Literal["deepseek", "openai", "none"] | None = None
    effort: str = "auto"
    headers: dict[str, str] = Field(default_factory=_new_dict)
    # Per model, per 1M tokens. None: no prices configured (cost unknown).
    prices: dict[str, Price] | None = None
    # Replay reasoning_content as "" instead of the text (saves input tokens).
    strip_chain_of_thought: bool = False
    # Models of this endpoint that take images (the Go product's key). None: not
    # said, so discovered metadata and the presets decide (reasonix_core/images.py).
    vision_models: list[str] | None = None
    # The provider's own server-side web search (kinds in WEB_SEARCH_KINDS; read and
    # ignored with a start notice on the others, config/retired.py). Its tool is
    # sent with the frozen tool schemas (docs/CONFIG.md, "Web search").
    web_search: bool = False
    # At most this many searches per request (Anthropic's ``max_uses``); None: unset.
    web_search_max_uses: int | None = Field(default=None, gt=0)
    # The file this entry came from (set by the loader), for error messages.
    _declared_in: str = PrivateAttr(default="")

    @property
    def declared_in(self) -> str:
        return self._declared_in

    @classmethod
    def _adopt_legacy(cls, data: dict[str, Any], legacy: dict[str, Any]) -> dict[str, Any]:
        # `chat_url` was the OpenAI kind's full-URL setting before `request_url`.
        chat_url = legacy.get("chat_url")
        if chat_url and not data.get("request_url") and data.get("kind", "openai") == "openai":
            data = {**data, "request_url": chat_url}
        return data

    @field_validator("name")
    @classmethod
    def _name_is_ref_safe(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be empty")
        if "/" in value:
            raise ValueError(f"must not contain '/' (got {value!r}); refs are provider/model")
        return value

    @model_validator(mode="after")
    def _effort_accepted(self) -> Self:
        accepted = accepted_efforts(self.kind, self.effective_reasoning_protocol())
        self.effort = check_effort(self.effort, accepted, self.name)
        return self

    def all_models(self) -> list[str]:
        """Every model this provider is configured to serve, in config order."""
        out: list[str] = []
        for m in (*self.models, self.model, self.default):
            if m and m not in out:
                out.append(m)
        return out

    def default_model(self) -> str:
        """The model used when only the provider is named ("" when none is known)."""
        if self.default:
            return self.default
        if self.model:
            return self.model
        return self.models[0] if self.models else ""

    def context_window_for(self, model: str) -> int:
        override = self.model_overrides.get(model)
        if override is not None and override.context_window is not None:
            return override.context_window
        return self.context_window

    def max_output_tokens_for(self, model: str) -> int:
        """0 automatic, > 0 explicit cap, < 0 omit (see ``max_output_tokens``)."""
        override = self.model_overrides.get(model)
        if override is not None and override.max_output_tokens is not None:
            return override.max_output_tokens
        return self.max_output_tokens

    def effective_reasoning_protocol(self) -> Literal["deepseek", "openai", "none"]:
        if self.reasoning_protocol is not None:
            return self.reasoning_protocol
        for url in (self.request_url, self.base_url):
            if "deepseek" in _host(url):
                return "deepseek"
        return "openai"


def _host(url: str) -> str:
    if not url:
        return ""
    try:
        return (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    except ValueError:
        return ""


class AgentConfig(_Table):
    """``[agent]``: the loop's behaviour."""

    _LEGACY: ClassVar[frozenset[str]] = frozenset(
        {
            # Known to the Go product; not (yet) used here.
            "system_prompt",
            "system_prompt_file",
            "max_output_tokens",
            "subagent_model",
            "subagent_effort",
            "subagent_models",
            "subagent_efforts",
            "output_style",
            "plan_mode_read_only_commands",
            "keep",
            "recent_keep",
            # Retired in the Go product (removed on save there, ignored here).
            "planner_max_steps",
            "auto_plan",
            "auto_plan_classifier",
            "soft_compact_ratio",
            "tool_result_snip_ratio",
            "compact_force_ratio",
            "cold_resume_prune",
            "context_editing",
            "completion_validation",
            "completion_evaluator_model",
            "memory_compiler",
            # Auto Guard (seed 004): read and ignored with a notice (config/retired.py).
            "guardian_model",
        }
    )

    effort: str = "auto"
    # 0 = unlimited.
    max_steps: int = Field(default=0, ge=0)
    compact_ratio: float = 0.80
    retry_attempts: int = Field(default=4, ge=1)
    retry_base_delay: float = Field(default=0.5, ge=0)
    retry_max_delay: float = Field(default=8.0, ge=0)
    stream_idle_timeout: float = Field(default=300, gt=0)
    planner_model: str = ""
    # Image fallback (seed 000 §3.5): "" none; "auto" a vision model of the
    # executor's provider; "provider/model" any. See reasonix_core/agent/vision.py.
    vision_model: str = ""
    # Goal mode bounds per driven stretch (docs/MODES.md#goal-mode); None: observed only.
    max_goal_rounds: int | None = Field(default=None, ge=1)
    goal_token_budget: int | None = Field(default=None, ge=1)
    system_prompt_extra: str = ""
    # Legacy, tolerated: read and kept, not sent (the loop uses the provider default).
    temperature: float | None = None
    reasoning_language: str = "auto"
    # Subagents (seed 000 §3.14-§3.17): nesting depth, children running at once
    # across the session, and of those the writers.
    max_subagent_depth: int = Field(default=2, ge=0)
    max_subagent_concurrency: int = Field(default=6, ge=1)
    max_parallel_writers: int = Field(default=3, ge=1)
    # Task budgets (0 = none), per task, every source counted (docs/CONFIG.md);
    # `reasonix run --max-cost/--max-tokens/--max-time` override them.
    task_cost_budget: float = Field(default=0.0, ge=0)
    task_token_budget: int = Field(default=0, ge=0)
    task_time_budget_minutes: float = Field(default=0.0, ge=0)

    @field_validator("effort")
    @classmethod
    def _known_effort(cls, value: str) -> str:
        # Some provider must accept it; the selected one is asked when the
        # session is built (reasonix_core/efforts.py owns the vocabulary).
        norm = value.strip().lower()
        if norm not in known_efforts():
            raise ValueError(f"must be one of {', '.join(known_efforts())} (got {value!r})")
        return norm

    @field_validator("reasoning_language")
    @classmethod
    def _one_line_language(cls, value: str) -> str:
        # Written into the system prompt verbatim: one short line, never a second
        # set of instructions smuggled through a config value.
        norm = value.strip()
        if not norm or len(norm) > 40 or any(not ch.isprintable() for ch in norm):
            raise ValueError(
                f"must be 'auto' or a short language name like 'en', 'zh' (got {value!r})"
            )
        return norm

    @field_validator("compact_ratio")
    @classmethod
    def _ratio_in_range(cls, value: float) -> float:
        if not COMPACT_RATIO_MIN <= value <= COMPACT_RATIO_MAX:
            raise ValueError(
                f"must be between {COMPACT_RATIO_MIN:.2f} and {COMPACT_RATIO_MAX:.2f} "
                f"(got {value!r})"
            )
        return value

    @model_validator(mode="after")
    def _delays_ordered(self) -> Self:
        if self.retry_max_delay < self.retry_base_delay:
            raise ValueError(
                f"retry_max_delay ({self.retry_max_delay}) is less than "
                f"retry_base_delay ({self.retry_base_delay})"
            )
        return self


class ToolsConfig(_Table):
    """``[tools]``."""

    _LEGACY: ClassVar[frozenset[str]] = frozenset(
        {"protect_changed_files", "browser_tools", "shell", "search", "system_one"}
    )

    # Empty: every tool.
    enabled: list[str] = Field(default_factory=_new_list)
    bash_timeout_seconds: float = Field(default=120, gt=0)
    mcp_startup_timeout_seconds: float = Field(default=30, gt=0)
    mcp_call_timeout_seconds: float = Field(default=300, gt=0)


class PermissionsConfig(_Table):
    """``[permissions]``: rules are ``Tool`` or ``Tool(specifier)``."""

    _LEGACY: ClassVar[frozenset[str]] = frozenset({"allow_dynamic_bash"})

    mode: Literal["ask", "allow", "deny"] = "ask"
    preset: PresetName = "ask"
    allow: list[str] = Field(default_factory=_new_list)
    ask: list[str] = Field(default_factory=_new_list)
    deny: list[str] = Field(default_factory=_new_list)
    # Extra folders read-family tools reach without asking (like --add-dir;
    # Claude Code's additionalDirectories). Reads only: writes stay in the
    # workspace, the session temp dir and [sandbox] allow_write.
    additional_directories: list[str] = Field(default_factory=_new_list)

    @field_validator("additional_directories")
    @classmethod
    def _expand_dirs(cls, value: list[str]) -> list[str]:
        return [expand_path(v) for v in value]


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_path(value: str) -> str:
    """Expand ``${VAR}``, ``${VAR:-default}`` and a leading ``~``.

    An unset variable without a default is an error: a ``forbid_read`` entry
    that silently stayed literal would protect nothing.
    """

    if "\x00" in value:  # no path holds one; os.path would raise later, unhandled
        raise ValueError(f"a path cannot contain a NUL character (in {value!r})")

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        got = os.environ.get(name)
        if got is not None and (got or default is None):
            return got
        if default is not None:
            return default
        raise ValueError(f"environment variable {name} is not set (in {value!r})")

    return os.path.expanduser(_VAR.sub(sub, value))


class SandboxConfig(_Table):
    """``[sandbox]``: where tools may write and what they may not read."""

    workspace_root: str = ""
    allow_write: list[str] = Field(default_factory=_new_list)
    forbid_read: list[str] = Field(default_factory=_new_list)
    bash: Literal["enforce", "off"] = "enforce"
    network: bool = False
    # One bubblewrap kept per session, its zygote starting each command
    # (docs/SECURITY.md, "A sandbox kept per session"); false: a fresh one per command.
    keep: bool = True
    # Bytes the sandbox's /tmp and /dev/shm may each hold (tmpfs lives in RAM):
    # an integer, or a string with a K/M/G suffix ("512M", "2G").
    tmp_size: int = Field(default=1 << 30, ge=1 << 20)

    @field_validator("tmp_size", mode="before")
    @classmethod
    def _parse_size(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        match = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)i?[bB]?\s*", value)
        if match is None:
            raise ValueError(f"{value!r} is not a size (bytes, or a number with K, M or G)")
        shift = {"": 0, "k": 10, "m": 20, "g": 30}[match.group(2).lower()]
        return int(match.group(1)) << shift

    @field_validator("workspace_root")
    @classmethod
    def _expand_root(cls, value: str) -> str:
        return expand_path(value) if value else value

    @field_validator("allow_write", "forbid_read")
    @classmethod
    def _expand_paths(cls, value: list[str]) -> list[str]:
        return [expand_path(v) for v in value]


class CheckpointsConfig(_Table):
    """``[checkpoints]``: the per-session shadow store behind rewind (docs/REWIND.md)."""

    enabled: bool = True
    # Bytes of file content one session's store may take; beyond it a
    # checkpoint names the files it could not keep.
    max_store_mb: int = Field(default=512, ge=1)


def builtin_provider() -> ProviderConfig:
    """The provider used when the user configured none: official DeepSeek."""
    models = ["deepseek-flash", "deepseek-v4-pro"]
    return ProviderConfig(
        name="deepseek",
        kind="openai",
        base_url="https://api.deepseek.com",
        models=models,
        default="deepseek-flash",
        api_key_env="DEEPSEEK_API_KEY",
        context_window=1048576,
        reasoning_protocol="deepseek",
        prices=deepseek_off_peak_prices(models),
    )


class TuiConfig(_Table):
    """``[tui]``: the full-screen app."""

    # A terminal notification (OSC 9/777 and the bell) when a turn ends after at least
    # this many seconds, and whenever an approval waits; false: never.
    notify: bool = True
    notify_after_seconds: float = Field(default=10, ge=0)


class ServeConfig(_Table):
    """``[serve]``: ``reasonix serve``, the app in a browser (docs/SERVE.md).

    Read from the user's ``config.toml`` only: a project file's ``[serve]`` is left
    out with a notice (the loader's ``USER_ONLY_TABLES``), and no environment
    variable sets it, since a repository must not open the user's agent to a network."""

    # The original's fixed `token`: per-launch tokens only here, so it is set aside.
    _LEGACY: ClassVar[frozenset[str]] = frozenset({"token"})

    auth_mode: Literal["token", "password", "none"] = "token"
    # `reasonix serve --set-password` writes it: scrypt$N$r$p$salt$hash (base64).
    password_hash: str = ""
    # Only behind a trusted reverse proxy (it terminates TLS and sets X-Forwarded-*).
    behind_proxy: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    # Host names the browser may use beside the bind address (DNS rebinding check).
    hosts: list[str] = Field(default_factory=_new_list)


class Config(_Table):
    """The whole effective configuration."""

    _LEGACY: ClassVar[frozenset[str]] = frozenset(
        {
            "config_version",
            "language",
            "credentials_store",
            "ui",
            "environment",
            "skills",
            "billing",
            "plugins",
            "remote",
            "desktop",
            "secrets",
        }
    )

    # A provider name, a model id or provider/model; "" = first provider's default.
    default_model: str = ""
    agent: AgentConfig = Field(default_factory=AgentConfig)
    providers: list[ProviderConfig] = Field(default_factory=_new_list)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    tui: TuiConfig = Field(default_factory=TuiConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    serve: ServeConfig = Field(default_factory=ServeConfig)
    # Passed through untouched; its own schema arrives with its feature.
    mcp: dict[str, Any] | None = None

    @field_validator("providers")
    @classmethod
    def _unique_names(cls, value: list[ProviderConfig]) -> list[ProviderConfig]:
        seen: dict[str, int] = {}
        for i, p in enumerate(value):
            if p.name in seen:
                raise ValueError(
                    f"duplicate provider name {p.name!r} "
                    f"(providers[{seen[p.name]}] and providers[{i}])"
                )
            seen[p.name] = i
        return value

    @model_validator(mode="after")
    def _default_provider(self) -> Self:
        if not self.providers:
            self.providers = [builtin_provider()]
        return self

    def provider(self, name: str) -> ProviderConfig | None:
        """The provider called ``name``, if configured."""
        for p in self.providers:
            if p.name == name:
                return p
        return None
