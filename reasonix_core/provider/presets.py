"""Provider presets: the endpoints ``reasonix setup`` and the TUI setup screen offer,
written once as data (docs/CONFIG.md#provider-presets).

A preset is a starting ``[[providers]]`` entry, not a second configuration path:
:func:`preset_fields` is the table a user would have written, :func:`preset_provider`
the same :class:`ProviderConfig` a hand-written entry gives, and :func:`install_preset`
the one way both setup surfaces write it. Model lists are starting points; ``/model``
asks the endpoint's ``/models`` for the live list (reasonix_core/provider/discovery.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from reasonix_core.config.layer import USER_FILE
from reasonix_core.config.schema import Config, ProviderConfig


@dataclass(frozen=True, slots=True)
class ProviderPreset:
    key: str
    label: str
    kind: str
    base_url: str
    models: tuple[str, ...]
    # "" = a local server that takes no key.
    api_key_env: str
    # None: detected from the host, as for a hand-written entry.
    reasoning_protocol: Literal["deepseek", "openai", "none"] | None = None
    context_window: int = 131072

    @property
    def needs_key(self) -> bool:
        return bool(self.api_key_env)


PRESETS: tuple[ProviderPreset, ...] = (
    ProviderPreset(
        "deepseek",
        "DeepSeek (OpenAI-compatible endpoint)",
        "openai",
        "https://api.deepseek.com",
        ("deepseek-flash", "deepseek-v4-pro"),
        "DEEPSEEK_API_KEY",
        "deepseek",
        1048576,
    ),
    ProviderPreset(
        "deepseek-anthropic",
        "DeepSeek (Anthropic-compatible endpoint)",
        "anthropic",
        "https://api.deepseek.com/anthropic",
        ("deepseek-flash", "deepseek-v4-pro"),
        "DEEPSEEK_API_KEY",
        None,
        1048576,
    ),
    ProviderPreset(
        "openrouter",
        "OpenRouter",
        "openai",
        "https://openrouter.ai/api/v1",
        ("deepseek/deepseek-chat",),
        "OPENROUTER_API_KEY",
    ),
    ProviderPreset(
        "moonshot",
        "Moonshot / Kimi",
        "openai",
        "https://api.moonshot.ai/v1",
        ("kimi-k2-0905-preview",),
        "MOONSHOT_API_KEY",
    ),
    ProviderPreset(
        "zhipu",
        "Zhipu / GLM",
        "openai",
        "https://open.bigmodel.cn/api/paas/v4",
        ("glm-4.6",),
        "ZHIPU_API_KEY",
    ),
    ProviderPreset(
        "qwen",
        "Qwen (DashScope, OpenAI-compatible)",
        "openai",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        ("qwen3-coder-plus",),
        "DASHSCOPE_API_KEY",
    ),
    # OpenCode Go (subscription): GLM, Kimi, DeepSeek and MiMo models answer on its
    # OpenAI-compatible /chat/completions route (MiniMax and Qwen only on /messages:
    # add those as a kind = "anthropic" entry). /model lists the live catalog.
    ProviderPreset(
        "opencode-go",
        "OpenCode Go (subscription, OpenAI-compatible route)",
        "openai",
        "https://opencode.ai/zen/go/v1",
        ("glm-5.1", "kimi-k2.5"),
        "OPENCODE_API_KEY",
    ),
    ProviderPreset(
        "ollama", "Ollama (local, no key)", "openai", "http://127.0.0.1:11434/v1", (), ""
    ),
    ProviderPreset(
        "lmstudio", "LM Studio (local, no key)", "openai", "http://127.0.0.1:1234/v1", (), ""
    ),
)


CUSTOM_KEY = "custom"
CUSTOM_KEY_ENV = "CUSTOM_API_KEY"


def custom_preset(base_url: str, *, needs_key: bool) -> ProviderPreset:
    """An OpenAI-compatible endpoint the user names (the first-run screen's "Custom
    endpoint"): its models are listed by the endpoint. ValueError, naming what is
    wrong, for a URL that is not a plain http(s) address."""
    from urllib.parse import urlsplit

    url = base_url.strip()
    if not url or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise ValueError("the base URL is empty or has spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL (e.g. https://host/v1)")
    if parts.username or parts.password:
        raise ValueError("put the key in the key field, not in the URL")
    if parts.query or parts.fragment:
        raise ValueError("the base URL takes no ?query or #fragment")
    return ProviderPreset(
        CUSTOM_KEY,
        "Custom endpoint",
        "openai",
        url.rstrip("/"),
        (),
        CUSTOM_KEY_ENV if needs_key else "",
    )


def preset(key: str) -> ProviderPreset:
    for entry in PRESETS:
        if entry.key == key:
            return entry
    raise KeyError(f"unknown provider preset {key!r}; one of {', '.join(p.key for p in PRESETS)}")


def preset_fields(entry: ProviderPreset, models: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``[[providers]]`` table for ``entry``, as a user would write it (``models``
    overrides its list, e.g. from discovery)."""
    fields: dict[str, Any] = {
        "name": entry.key,
        "kind": entry.kind,
        "base_url": entry.base_url,
        "models": list(models or entry.models),
        "api_key_env": entry.api_key_env,
        "context_window": entry.context_window,
    }
    if entry.reasoning_protocol is not None:
        fields["reasoning_protocol"] = entry.reasoning_protocol
    return fields


def preset_provider(entry: ProviderPreset, models: tuple[str, ...] = ()) -> ProviderConfig:
    """The :class:`ProviderConfig` the written entry loads as."""
    return ProviderConfig(**preset_fields(entry, models))


def install_preset(
    home: Path,
    entry: ProviderPreset,
    models: tuple[str, ...] = (),
    *,
    make_default: bool = False,
    config: Config | None = None,
) -> Path:
    """Write ``entry`` into the user's config file (``<home>/config.toml``), keeping its
    comments and layout (``models`` overrides its list, e.g. a local server's, from
    discovery); ``make_default``: and make it ``default_model``. Returns the file's path.

    ``config``: the loaded configuration. When it already has a provider of that name
    (the built-in DeepSeek one included) nothing new is added, only ``default_model``
    when asked. Without it, an existing entry of that name in the file is a
    :class:`~reasonix_core.errors.ConfigError` (``reasonix setup``)."""
    from reasonix_core.config.writeback import add_provider, set_config_value

    path = home / USER_FILE
    if config is not None and config.provider(entry.key) is not None:
        if make_default:
            set_config_value(path, "default_model", entry.key)
        return path
    add_provider(path, preset_fields(entry, models), make_default=make_default)
    return path
