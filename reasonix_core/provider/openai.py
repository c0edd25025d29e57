"""The ``openai`` provider kind: DeepSeek and any OpenAI-compatible ``/chat/completions``.

Handles what the real services do (see shared/reference/wire-formats.md §1–§2,
§5): keep-alive comments, ``reasoning_content`` deltas, tool-call fragments
accumulated by index, usage on the finish chunk (DeepSeek) or on a separate
``choices: []`` chunk (OpenAI), both cache-field conventions, the DeepSeek-only
finish reasons, and in-band ``{"error": ...}`` events.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from reasonix_core.errors import ProviderError, StreamInterrupted
from reasonix_core.jsontext import dumps_utf8
from reasonix_core.messages import Message, ToolCall
from reasonix_core.provider.base import (
    Chunk,
    PreparedRequest,
    ReasoningChunk,
    Request,
    StreamEnd,
    TextChunk,
    ToolCallFragment,
    register_kind,
)
from reasonix_core.provider.sse import iter_sse
from reasonix_core.usage import Usage

if TYPE_CHECKING:
    from reasonix_core.config.schema import ProviderConfig

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
# Finish reasons that mean the server cut generation short: transient, retried.
TRANSIENT_FINISH = frozenset({"insufficient_system_resource", "aborted"})
DEEPSEEK_EFFORTS = {
    "low": "low",
    "minimal": "low",
    "medium": "high",
    "high": "high",
    "xhigh": "high",
    "max": "max",
    "ultra": "max",
}
OPENAI_EFFORTS = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "max": "high",
}
DISABLED_EFFORTS = frozenset({"disabled", "none", "off"})
# Official DeepSeek output ceiling (384K); used for the automatic budget.
DEEPSEEK_MAX_OUTPUT = 393_216


def _encode(value: Any) -> bytes:
    # dumps_utf8: a lone surrogate the model sent earlier must not make the request unsendable.
    return dumps_utf8(value, separators=(",", ":")).encode()


class HttpStreaming:
    """The HTTP side shared by every streaming provider kind: one lazily created
    client, the POST of the frozen bytes, and the mapping of transport failures
    to retryable ProviderErrors. A kind supplies ``_parse(response)``."""

    _client: httpx.AsyncClient | None
    _transport: httpx.AsyncBaseTransport | None
    stream_idle_timeout: float

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self._transport,
                timeout=httpx.Timeout(
                    connect=30.0, read=self.stream_idle_timeout, write=60.0, pool=30.0
                ),
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def stream(self, prepared: PreparedRequest) -> AsyncIterator[Chunk]:
        client = self._http()
        try:
            async with client.stream(
                "POST", prepared.url, content=prepared.body, headers=list(prepared.headers)
            ) as response:
                if response.status_code != 200:
                    raw = await response.aread()
                    raise http_error(response.status_code, raw, response.headers)
                async for chunk in self._parse(response):
                    yield chunk
        except ProviderError:
            raise
        except httpx.TimeoutException as exc:
            raise ProviderError(
                f"request timed out ({type(exc).__name__})", retryable=True, kind="timeout"
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise StreamInterrupted(f"connection dropped mid-stream: {exc}") from None
        except httpx.TransportError as exc:
            raise ProviderError(
                f"cannot reach {prepared.url}: {exc}", retryable=True, kind="connection"
            ) from None

    def _parse(self, response: httpx.Response) -> AsyncIterator[Chunk]:
        raise NotImplementedError


class OpenAIProvider(HttpStreaming):
    """One vendor endpoint speaking OpenAI-compatible chat completions."""

    def __init__(
        self,
        config: ProviderConfig,
        api_key: str,
        *,
        stream_idle_timeout: float = 300.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = config.name
        self.config = config
        self._api_key = api_key
        self._protocol = config.effective_reasoning_protocol()
        self.stream_idle_timeout = stream_idle_timeout
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        base = config.base_url.rstrip("/")
        self.url = config.request_url or f"{base}/chat/completions"

    # -- request building -------------------------------------------------

    def thinking_enabled(self, effort: str) -> bool:
        if self._protocol != "deepseek":
            return False
        return effort.lower() not in DISABLED_EFFORTS

    def max_output_tokens(self, model: str) -> int | None:
        return DEEPSEEK_MAX_OUTPUT if self._protocol == "deepseek" else None

    def encode_message(self, msg: Message, *, replay_reasoning: bool) -> dict[str, Any]:
        if msg.role == "assistant":
            out: dict[str, Any] = {"role": "assistant"}
            out["content"] = msg.content if (msg.content or not msg.tool_calls) else None
            if out["content"] is None and not msg.tool_calls:
                out["content"] = ""
            if replay_reasoning:
                reasoning = msg.reasoning_content or ""
                out["reasoning_content"] = "" if self.config.strip_chain_of_thought else reasoning
            if msg.tool_calls:
                out["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in msg.tool_calls
                ]
            return out
        if msg.role == "tool":
            return {"role": "tool", "tool_call_id": msg.tool_call_id, "content": msg.content or ""}
        out = {"role": msg.role, "content": msg.content or ""}
        if msg.name:
            out["name"] = msg.name
        return out

    def build_body(self, request: Request) -> dict[str, Any]:
        effort = (request.effort or "auto").lower()
        thinking = self.thinking_enabled(effort)
        # DeepSeek rejects tool requests whose earlier assistant turns lack the
        # reasoning_content key (HTTP 400), so replay it on every one of them.
        replay = thinking and bool(request.tools)
        body: dict[str, Any] = {
            "model": request.model,
            "messages": [self.encode_message(m, replay_reasoning=replay) for m in request.messages],
        }
        if request.tools:
            body["tools"] = [t.to_openai() for t in request.tools]
        if self._protocol == "deepseek":
            if effort in DISABLED_EFFORTS:
                body["thinking"] = {"type": "disabled"}
            elif effort in DEEPSEEK_EFFORTS:
                body["thinking"] = {"type": "enabled"}
                body["reasoning_effort"] = DEEPSEEK_EFFORTS[effort]
        elif self._protocol == "openai" and effort in OPENAI_EFFORTS:
            body["reasoning_effort"] = OPENAI_EFFORTS[effort]
        if request.max_output_tokens is not None:
            body["max_tokens"] = request.max_output_tokens
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        return body

    def prepare(self, request: Request) -> PreparedRequest:
        headers = [("Content-Type", "application/json"), ("Accept", "text/event-stream")]
        if self._api_key:
            headers.append(("Authorization", f"Bearer {self._api_key}"))
        headers.extend(self.config.headers.items())
        return PreparedRequest(
            url=self.url,
            body=_encode(self.build_body(request)),
            headers=tuple(headers),
            model=request.model,
        )

    # -- streaming --------------------------------------------------------

    async def _parse(self, response: httpx.Response) -> AsyncIterator[Chunk]:
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage: Usage | None = None
        model = ""
        done = False
        events = iter_sse(response.aiter_lines()).__aiter__()
        while True:
            try:
                with anyio.fail_after(self.stream_idle_timeout):
                    event = await events.__anext__()
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise ProviderError(
                    f"no data from the provider for {self.stream_idle_timeout:g} s",
                    retryable=True,
                    kind="idle_timeout",
                ) from None
            if event.event == "raw":
                raise StreamInterrupted(f"unexpected line in stream: {event.data[:200]}")
            if event.data.strip() == "[DONE]":
                done = True
                break
            try:
                payload = json.loads(event.data)
            except (ValueError, RecursionError):  # also too deep, or numbers too long to load
                raise StreamInterrupted(f"malformed JSON in stream: {event.data[:200]}") from None
            if not isinstance(payload, dict):
                raise StreamInterrupted(f"unexpected stream payload: {event.data[:200]}")
            if payload.get("error"):
                raise stream_error(payload["error"])
            model = payload.get("model") or model
            if payload.get("usage"):
                usage = parse_usage(payload["usage"])
            for choice in payload.get("choices") or ():
                if not isinstance(choice, dict):
                    continue
                delta = choice.get("delta") or {}
                reasoning = delta.get("reasoning_content")
                if isinstance(reasoning, str) and reasoning:
                    yield ReasoningChunk(text=reasoning)
                content = delta.get("content")
                if isinstance(content, str) and content:
                    yield TextChunk(text=content)
                for frag in delta.get("tool_calls") or ():
                    yield self._accumulate(calls, frag)
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
        if not done and finish is None:
            raise StreamInterrupted()
        finish = finish or "stop"
        if finish in TRANSIENT_FINISH:
            raise ProviderError(
                f"the provider cut the response short (finish_reason={finish})",
                retryable=True,
                kind=finish,
            )
        tool_calls = tuple(
            ToolCall(
                id=entry["id"] or f"call_{index:02d}",
                name=entry["name"],
                arguments=entry["arguments"],
            )
            for index, entry in sorted(calls.items())
        )
        yield StreamEnd(finish_reason=finish, tool_calls=tool_calls, usage=usage, model=model)

    @staticmethod
    def _accumulate(calls: dict[int, dict[str, Any]], frag: Any) -> ToolCallFragment:
        if not isinstance(frag, dict):
            raise StreamInterrupted(f"malformed tool-call delta: {frag!r}"[:200])
        index = frag.get("index")
        if not isinstance(index, int):
            index = len(calls) if frag.get("id") else max(calls, default=0)
        entry = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        function = frag.get("function") or {}
        if frag.get("id"):
            entry["id"] = str(frag["id"])
        if function.get("name"):
            entry["name"] += str(function["name"]) if not entry["name"] else ""
        args = function.get("arguments")
        if isinstance(args, str):
            entry["arguments"] += args
        return ToolCallFragment(
            index=index,
            id=frag.get("id"),
            name=function.get("name"),
            arguments=args if isinstance(args, str) else "",
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def parse_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt = _int(raw.get("prompt_tokens"))
    completion = _int(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details") or {}
    hit_raw = raw.get("prompt_cache_hit_tokens")
    hit = _int(hit_raw) if hit_raw is not None else _int(details.get("cached_tokens"))
    miss_raw = raw.get("prompt_cache_miss_tokens")
    miss = _int(miss_raw) if miss_raw is not None else max(prompt - hit, 0)
    reasoning = _int((raw.get("completion_tokens_details") or {}).get("reasoning_tokens"))
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_hit_tokens=hit,
        cache_miss_tokens=miss,
        reasoning_tokens=reasoning,
    )


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _error_message(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):  # also too deep, or numbers too long to load
        return text[:500] or "(empty response body)"
    if isinstance(payload, dict):
        err = payload.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if payload.get("message"):
            return str(payload["message"])
    return text[:500]


def http_error(status: int, raw: bytes, headers: httpx.Headers) -> ProviderError:
    retryable = status in RETRYABLE_STATUS
    should = headers.get("x-should-retry")
    if should in ("true", "false"):
        retryable = should == "true"
    return ProviderError(
        _error_message(raw),
        status=status,
        retryable=retryable,
        retry_after=parse_retry_after(headers),
    )


def stream_error(err: Any) -> ProviderError:
    if isinstance(err, dict):
        message = str(err.get("message") or err)
        kind = str(err.get("type") or "stream_error")
        code = err.get("code")
        status = code if isinstance(code, int) else None
    else:
        message, kind, status = str(err), "stream_error", None
    retryable = kind not in ("invalid_request_error", "authentication_error")
    if status is not None:
        retryable = status in RETRYABLE_STATUS
    return ProviderError(message, status=status, retryable=retryable, kind="stream_error")


def _factory(config: ProviderConfig, api_key: str) -> OpenAIProvider:
    return OpenAIProvider(config, api_key)


register_kind("openai", _factory)

__all__ = ["HttpStreaming", "OpenAIProvider", "http_error", "parse_retry_after", "parse_usage"]
