"""Turning a model reference (``--model``, ``default_model``, a picker) into a
provider and a model id.

Accepted forms, tried in this order:

1. a provider name -> that provider's default model;
2. ``provider/model`` where the provider lists the model (the model part may
   itself contain ``/``, e.g. ``openrouter/meta-llama/llama-3``);
3. a bare model id -> the first provider that lists it;
4. ``provider/model`` where the provider has no ``models`` list (any id goes).

``discovered`` adds, per provider name, the ids its ``/models`` listed this session
(``/model``'s probe, reasonix_core/provider/discovery.py): form (2) accepts them as if
configured. The entry is the provider's own, so such a model gets the provider's
limits (its ``context_window``) and no configured price (its cost counts as unknown).

(2) is tried before (3) so that :attr:`ResolvedModel.ref` always resolves back
to the same provider, even when another provider lists a model whose id looks
like ``name/model``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from reasonix_core.config.schema import Config, ProviderConfig
from reasonix_core.errors import ConfigError

__all__ = ["ResolvedModel", "describe_models", "resolve_model"]


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """The provider entry and model id a model reference names."""

    provider: ProviderConfig
    model: str

    @property
    def ref(self) -> str:
        """The canonical ``provider/model`` reference."""
        return f"{self.provider.name}/{self.model}"


def resolve_model(
    config: Config,
    ref: str | None = None,
    discovered: Mapping[str, Collection[str]] | None = None,
) -> ResolvedModel:
    """Resolve ``ref``; ``None``/"" means ``config.default_model``, then the
    first provider's default model. A provider with no URL to send to is a
    config error here, before any request. ``discovered``: see the module."""
    resolved = _resolve(config, ref, discovered or {})
    provider = resolved.provider
    if not (provider.base_url.strip() or provider.request_url.strip()):
        where = f"{provider.declared_in}: " if provider.declared_in else ""
        raise ConfigError(
            f"{where}provider {provider.name!r} has no base_url (nor request_url); "
            'set the address of its API, e.g. base_url = "https://api.example.com/v1"'
        )
    return resolved


def _resolve(
    config: Config, ref: str | None, discovered: Mapping[str, Collection[str]]
) -> ResolvedModel:
    wanted = (ref or "").strip()
    origin = ""
    if not wanted:
        wanted = config.default_model.strip()
        origin = "default_model: " if wanted else ""
    if not wanted:
        if not config.providers:
            raise ConfigError("no providers are configured")
        return _provider_default(config.providers[0], origin)

    provider = config.provider(wanted)
    if provider is not None:
        return _provider_default(provider, origin)

    head, sep, tail = wanted.partition("/")
    named = config.provider(head) if sep and tail else None
    if named is not None and (tail in named.all_models() or tail in discovered.get(named.name, ())):
        return ResolvedModel(named, tail)

    for p in config.providers:
        if wanted in p.all_models():
            return ResolvedModel(p, wanted)

    if named is not None and not named.models:
        return ResolvedModel(named, tail)

    raise ConfigError(f"{origin}unknown model {wanted!r}. Configured: {describe_models(config)}")


def describe_models(config: Config) -> str:
    """``deepseek: deepseek-flash, deepseek-v4-pro; local: llama3``."""
    parts = []
    for p in config.providers:
        models = p.all_models()
        if models and p.models:
            listed = ", ".join(models)
        elif models:
            listed = f"{', '.join(models)} (or any {p.name}/<model>)"
        else:
            listed = f"any {p.name}/<model>"
        parts.append(f"{p.name}: {listed}")
    return "; ".join(parts) if parts else "(no providers)"


def _provider_default(provider: ProviderConfig, origin: str) -> ResolvedModel:
    model = provider.default_model()
    if not model:
        raise ConfigError(
            f"{origin}provider {provider.name!r} has no default model; "
            f"set `default` or `models` for it, or name one as {provider.name}/<model>"
        )
    return ResolvedModel(provider, model)
