"""Model discovery for ``/model``: ask the provider's ``/models`` for its live list,
fall back to the configured one (docs/CONFIG.md#provider-presets).

Never raises: a model picker must open whatever the endpoint does (down, no such
route, a key it refuses, a hostile body). What a listing may hold is bounded, so a
huge or odd answer cannot flood the picker or smuggle control characters into it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import anyio
import httpx

from reasonix_core.config.schema import ProviderConfig
from reasonix_core.images import learn_vision_models

MAX_MODELS = 500
MAX_ID_LENGTH = 200
MAX_BODY_BYTES = 2 * 1024 * 1024
# The whole exchange, however slowly an endpoint trickles its answer.
TOTAL_TIMEOUT = 10.0


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


def _vision_ids(payload: object, models: tuple[str, ...]) -> set[str]:
    """Listed models whose metadata says they take images (``input_modalities``,
    DeepSeek's and OpenCode's listings): discovered capability (images.py)."""
    data = payload.get("data") if isinstance(payload, dict) else None
    out: set[str] = set()
    for item in data[:MAX_MODELS] if isinstance(data, list) else ():
        if not isinstance(item, dict):
            continue
        modalities = item.get("input_modalities")
        if isinstance(modalities, list) and "image" in modalities and item.get("id") in models:
            out.add(item["id"])
    return out


async def discover_models(
    provider: ProviderConfig,
    api_key: str | None,
    *,
    request_timeout: float = 5.0,
    total_timeout: float = TOTAL_TIMEOUT,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ModelListing:
    """The endpoint's models, or the configured list with the reason it was used.
    ``request_timeout`` bounds each network wait, ``total_timeout`` the whole."""
    configured = tuple(provider.all_models())
    try:
        with anyio.fail_after(total_timeout):
            status, body = await _get(provider, api_key, request_timeout, transport)
        if status != 200:
            return ModelListing(configured, "configured", f"HTTP {status}")
        if body is None:
            return ModelListing(configured, "configured", "listing too large")
        payload = json.loads(body)
        models = _ids(payload)
        learn_vision_models(provider.name, _vision_ids(payload, models))
    except (TimeoutError, httpx.TimeoutException):  # the deadline, or one network wait
        return ModelListing(configured, "configured", "timed out")
    except (httpx.HTTPError, ValueError, RecursionError) as exc:
        return ModelListing(configured, "configured", type(exc).__name__)
    if not models:
        return ModelListing(configured, "configured", "empty listing")
    return ModelListing(models, "endpoint")


async def _get(
    provider: ProviderConfig,
    api_key: str | None,
    request_timeout: float,
    transport: httpx.AsyncBaseTransport | None,
) -> tuple[int, bytes | None]:
    """The status and body (None past :data:`MAX_BODY_BYTES`: not read further)."""
    async with (
        httpx.AsyncClient(
            timeout=request_timeout, trust_env=False, transport=transport, follow_redirects=False
        ) as client,
        client.stream("GET", models_url(provider), headers=_headers(provider, api_key)) as response,
    ):
        if response.status_code != 200:
            return response.status_code, b""
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                return 200, None
        return 200, bytes(body)
