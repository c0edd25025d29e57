"""Provider presets: the endpoints ``reasonix setup`` and the TUI setup screen offer,
written once as data (docs/CONFIG.md#provider-presets).

A preset is a starting ``[[providers]]`` entry, not a second configuration path:
:func:`preset_provider` turns it into the same :class:`ProviderConfig` a hand-written
entry gives, and :func:`preset_toml` into the text a user would have written. Model
lists are starting points; ``/model`` asks the endpoint's ``/models`` for the live
list (reasonix_core/provider/discovery.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from reasonix_core.config.schema import ProviderConfig


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
    ProviderPreset(
        "ollama", "Ollama (local, no key)", "openai", "http://127.0.0.1:11434/v1", (), ""
    ),
    ProviderPreset(
        "lmstudio", "LM Studio (local, no key)", "openai", "http://127.0.0.1:1234/v1", (), ""
    ),
)


def preset(key: str) -> ProviderPreset:
    for entry in PRESETS:
        if entry.key == key:
            return entry
    raise KeyError(f"unknown provider preset {key!r}; one of {', '.join(p.key for p in PRESETS)}")


def preset_provider(entry: ProviderPreset, models: tuple[str, ...] = ()) -> ProviderConfig:
    """The ``[[providers]]`` entry for ``entry`` (``models`` overrides its list, e.g.
    from discovery)."""
    return ProviderConfig(
        name=entry.key,
        kind=entry.kind,
        base_url=entry.base_url,
        models=list(models or entry.models),
        api_key_env=entry.api_key_env,
        reasoning_protocol=entry.reasoning_protocol,
        context_window=entry.context_window,
    )


def preset_toml(entry: ProviderPreset, models: tuple[str, ...] = ()) -> str:
    """The same entry as TOML text (JSON strings are valid TOML basic strings)."""
    config = preset_provider(entry, models)
    lines = [
        "[[providers]]",
        f"name = {json.dumps(config.name)}",
        f"kind = {json.dumps(config.kind)}",
        f"base_url = {json.dumps(config.base_url)}",
        f"models = {json.dumps(config.models, ensure_ascii=False)}",
        f"api_key_env = {json.dumps(config.api_key_env)}",
        f"context_window = {config.context_window}",
    ]
    if entry.reasoning_protocol is not None:
        lines.append(f"reasoning_protocol = {json.dumps(entry.reasoning_protocol)}")
    return "\n".join(lines) + "\n"
