"""Model discovery for ``/model``: ask the provider's ``/models`` for its live list,
fall back to the configured one (docs/CONFIG.md#provider-presets).

Never raises: a model picker must open whatever the endpoint does (down, no such
route, a key it refuses, a hostile body). What a listing may hold is bounded, so a
huge or odd answer cannot flood the picker or smuggle control characters into it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx

from reasonix_core.config.schema import ProviderConfig

MAX_MODELS = 500
MAX_ID_LENGTH = 200
MAX_BODY_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ModelListing:
    models: tuple[str, ...]
    # "endpoint": the live list; "configured": the config's, and ``why`` says why.
    source: Literal["endpoint", "configured"]
    why: str = ""


def models_url(provider: ProviderConfig) -> str:
    base = provider.base_url.rstrip("/")
    if provider.kind == "anthropic":
        return f"{base.removesuffix('/v1')}/v1/models"
    return f"{base}/models"


def _headers(provider: ProviderConfig, api_key: str | None) -> dict[str, str]:
    headers = dict(provider.headers)
    if api_key:
        if provider.kind == "anthropic":
            headers["x-api-key"] = api_key
            headers["anthropic-version"] = "2023-06-01"
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def _ids(payload: object) -> tuple[str, ...]:
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise ValueError("no `data` list")
    out: list[str] = []
    for item in data[:MAX_MODELS]:
        model = item.get("id") if isinstance(item, dict) else None
        if (
            isinstance(model, str)
            and 0 < len(model) <= MAX_ID_LENGTH
            and model.isprintable()
            and model not in out
        ):
            out.append(model)
    return tuple(out)


async def discover_models(
    provider: ProviderConfig,
    api_key: str | None,
    *,
    request_timeout: float = 5.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ModelListing:
    """The endpoint's models, or the configured list with the reason it was used."""
    configured = tuple(provider.all_models())
    try:
        async with httpx.AsyncClient(
            timeout=request_timeout, trust_env=False, transport=transport, follow_redirects=False
        ) as client:
            response = await client.get(models_url(provider), headers=_headers(provider, api_key))
        if response.status_code != 200:
            return ModelListing(configured, "configured", f"HTTP {response.status_code}")
        if len(response.content) > MAX_BODY_BYTES:
            return ModelListing(configured, "configured", "listing too large")
        models = _ids(response.json())
    except (httpx.HTTPError, ValueError) as exc:
        return ModelListing(configured, "configured", type(exc).__name__)
    if not models:
        return ModelListing(configured, "configured", "empty listing")
    return ModelListing(models, "endpoint")
