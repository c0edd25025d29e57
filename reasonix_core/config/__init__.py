"""Configuration: schema, layered TOML loading, model resolution and API keys.

``set_config_value`` (comment-preserving write-back) is imported lazily so that
loading config never imports ``tomlkit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reasonix_core.config.loader import (
    PROJECT_FILE,
    USER_FILE,
    LoadedConfig,
    load_config,
    reasonix_home,
)
from reasonix_core.config.prices import DEEPSEEK_PRICES_USD, Price, is_peak, price_for
from reasonix_core.config.resolve import ResolvedModel, describe_models, resolve_model
from reasonix_core.config.schema import (
    AgentConfig,
    Config,
    ModelOverride,
    PermissionsConfig,
    ProviderConfig,
    SandboxConfig,
    ToolsConfig,
    builtin_provider,
)
from reasonix_core.config.secrets import (
    parse_dotenv,
    read_api_key,
    read_dotenv,
    save_api_key,
    secret_env_names,
)

if TYPE_CHECKING:
    from reasonix_core.config.writeback import set_config_value

__all__ = [
    "DEEPSEEK_PRICES_USD",
    "PROJECT_FILE",
    "USER_FILE",
    "AgentConfig",
    "Config",
    "LoadedConfig",
    "ModelOverride",
    "PermissionsConfig",
    "Price",
    "ProviderConfig",
    "ResolvedModel",
    "SandboxConfig",
    "ToolsConfig",
    "builtin_provider",
    "describe_models",
    "is_peak",
    "load_config",
    "parse_dotenv",
    "price_for",
    "read_api_key",
    "read_dotenv",
    "reasonix_home",
    "resolve_model",
    "save_api_key",
    "secret_env_names",
    "set_config_value",
]


def __getattr__(name: str) -> Any:
    if name == "set_config_value":
        from reasonix_core.config.writeback import set_config_value

        return set_config_value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
