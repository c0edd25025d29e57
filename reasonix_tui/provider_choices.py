"""What the first-run setup screen offers: the configured provider, then the core's
provider presets (reasonix_core/provider/presets.py, the one table), each with what
its key needs. Nothing here imports Textual; the engine's services and the test kit
both build their choices here."""

from __future__ import annotations

import os
from pathlib import Path

from reasonix_core.config import read_api_key
from reasonix_core.config.schema import Config, ProviderConfig
from reasonix_core.config.secrets import ENV_FILE
from reasonix_core.errors import ConfigError
from reasonix_core.provider.presets import PRESETS, preset_provider
from reasonix_tui.services import DEEPSEEK_KEYS_URL, ApiKeyInfo, ProviderChoice

# The variable a provider without ``api_key_env`` is given a key under (the
# first-run screen's historical default).
FALLBACK_KEY_VARIABLE = "DEEPSEEK_API_KEY"


def key_info(provider: ProviderConfig, home: Path, label: str = "") -> ApiKeyInfo:
    """Where ``provider``'s key comes from and goes to (``label``: the name to show)."""
    name = provider.api_key_env or FALLBACK_KEY_VARIABLE
    deepseek = "deepseek" in f"{provider.name} {provider.base_url}".lower()
    return ApiKeyInfo(
        provider=label or provider.name,
        variable=name,
        stored_in=home / ENV_FILE,
        from_environment=bool(os.environ.get(name)),
        signup_url=DEEPSEEK_KEYS_URL if deepseek else "",
    )


def _choice(
    key: str, label: str, provider: ProviderConfig, home: Path, key_label: str = ""
) -> ProviderChoice:
    endpoint = provider.base_url or provider.request_url
    if not provider.api_key_env.strip():
        # The presets' labels of local servers already say "no key".
        note = "" if "no key" in label else "no key"
        return ProviderChoice(key=key, label=label, endpoint=endpoint, note=note)
    try:
        read_api_key(provider, home)
    except ConfigError:
        return ProviderChoice(
            key=key,
            label=label,
            endpoint=endpoint,
            key_info=key_info(provider, home, key_label or label),
            note=f"${provider.api_key_env}",
        )
    return ProviderChoice(key=key, label=label, endpoint=endpoint, note="key set")


def provider_choices(config: Config, current: ProviderConfig, home: Path) -> list[ProviderChoice]:
    """The configured provider ``current`` first, then every preset; a preset whose
    name the config already has is offered as that (the user's own) entry."""
    labels = {p.key: p.label for p in PRESETS}
    own = labels.get(current.name, f"{current.name} (configured)")
    out = [_choice(current.name, own, current, home, key_label=current.name)]
    for entry in PRESETS:
        if entry.key == current.name:
            continue
        provider = config.provider(entry.key) or preset_provider(entry)
        out.append(_choice(entry.key, entry.label, provider, home))
    return out
