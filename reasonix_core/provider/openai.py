"""The ``openai`` provider kind: DeepSeek and any OpenAI-compatible ``/chat/completions``.

Handles what the real services do (see shared/reference/wire-formats.md §1–§2,
§5): keep-alive comments, ``reasoning_content`` deltas, tool-call fragments
accumulated by index, usage on the finish chunk (DeepSeek) or on a separate
``choices: []`` chunk (OpenAI), both cache-field conventions, the DeepSeek-only
finish reasons, and in-band ``{"error": ...}`` events.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from reasonix_core.efforts import (
    DEEPSEEK_EFFORTS,
    DISABLED_EFFORTS,
    OPENAI_CHAT_EFFORTS,
    accepted_efforts,
)
from reasonix_core.errors import ProviderError, ReasoningReplayRequired, StreamInterrupted
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
from reasonix_core.provider.http import (
    RETRYABLE_STATUS,
    TRANSIENT_FINISH,
    EventParser,
    HttpProvider,
    count,
    make_usage,
)
from reasonix_core.usage import Usage

if TYPE_CHECKING:
    from reasonix_core.config.schema import ProviderConfig

# Official DeepSeek output ceiling (384K); used for the automatic budget.
DEEPSEEK_MAX_OUTPUT = 393_216


# DeepSeek's two wordings of "earlier assistant turns must carry reasoning_content"
# (wire-formats.md §1.4): the current one, then the V3.2-era one.
_REPLAY_REQUIRED = (
    "reasoning_content in the thinking mode must be passed back",
    "missing reasoning_content field",
)


class OpenAIProvider(HttpProvider):
    """One vendor endpoint speaking OpenAI-compatible chat completions.

    DeepSeek models also answer behind gateways and local proxies whose host does
    not say "deepseek". Unless ``reasoning_protocol`` is set, a model whose name
    contains "deepseek", or whose stream returned ``reasoning_content``, has its
    reasoning replayed in later tool requests as DeepSeek requires; DeepSeek's own
    400 about it teaches the same for the model (:class:`ReasoningReplayRequired`,
    which the agent answers with one rebuilt request).
    """

    @functools.cached_property
    def _replaying(self) -> set[str]:
        """Models seen to speak DeepSeek's reasoning protocol on this endpoint."""
        return set()

    def _learns(self) -> bool:
        return self.config.reasoning_protocol is None and not self.deepseek

    def replays_reasoning(self, request: Request) -> bool:
        """Whether earlier assistant turns carry ``reasoning_content`` for the request's
        model beyond what the configured protocol says (detected, never configured):
        its name says DeepSeek, this endpoint learned it, or the history already holds
        its reasoning (a continued session: what an earlier process learned)."""
        if self.config.reasoning_protocol is not None:
            return False
        model = request.model
        if model in self._replaying or "deepseek" in model.lower():
            return True
        return any(m.role == "assistant" and m.reasoning_content for m in request.messages)

    def _observe(self, prepared: PreparedRequest, chunk: Chunk) -> None:
        if isinstance(chunk, ReasoningChunk) and self._learns():
            self._replaying.add(prepared.model)

    def _reinterpret(self, prepared: PreparedRequest, error: ProviderError) -> ProviderError:
        wording = error.message.lower()
        if (
            self._learns()
            and error.status == 400
            and prepared.model not in self._replaying
            and any(text in wording for text in _REPLAY_REQUIRED)
        ):
            self._replaying.add(prepared.model)
            return ReasoningReplayRequired(error.message)
        return error

    def endpoint(self, base: str) -> str:
        return f"{base}/chat/completions"

    def efforts(self) -> tuple[str, ...]:
        return accepted_efforts("openai", self._protocol) or ()

    # -- request building -------------------------------------------------

    def max_output_tokens(self, model: str) -> int | None:
        return DEEPSEEK_MAX_OUTPUT if self._protocol == "deepseek" else None

    def encode_message(
        self, msg: Message, *, replay_reasoning: bool, images: bool = False
    ) -> dict[str, Any]:
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
        if msg.images:
            out["content"] = _user_content(msg, images)
        if msg.name:
            out["name"] = msg.name
        return out

    def build_body(self, request: Request) -> dict[str, Any]:
        effort = (request.effort or "auto").lower()
        thinking = self.deepseek_thinking(effort)
        # DeepSeek rejects tool requests whose earlier assistant turns lack the
        # reasoning_content key (HTTP 400), so replay it on every one of them.
        replay = bool(request.tools) and (thinking or self.replays_reasoning(request))
        images = self.takes_images(request.model)
        body: dict[str, Any] = {
            "model": request.model,
            "messages": [
                self.encode_message(m, replay_reasoning=replay, images=images)
                for m in request.messages
            ],
        }
        if request.tools:
            body["tools"] = [t.to_openai() for t in request.tools]
        if self._protocol == "deepseek":
            if effort in DISABLED_EFFORTS:
                body["thinking"] = {"type": "disabled"}
            elif effort in DEEPSEEK_EFFORTS:
                body["thinking"] = {"type": "enabled"}
                body["reasoning_effort"] = DEEPSEEK_EFFORTS[effort]
        elif self._protocol == "openai" and effort in OPENAI_CHAT_EFFORTS:
            body["reasoning_effort"] = OPENAI_CHAT_EFFORTS[effort]
        if request.max_output_tokens is not None:
            body["max_tokens"] = request.max_output_tokens
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        return body

    # -- streaming --------------------------------------------------------

    def event_parser(self) -> EventParser:
        return _ChatStream()


def _user_content(msg: Message, images: bool) -> str | list[dict[str, Any]]:
    """A user turn with images: text then ``image_url`` data-URL parts (wire-formats.md
    §1.3), or the text with a note per image for a model that takes none."""
    text = msg.content or ""
    if not images:
        return "\n\n".join([text, *(image.note() for image in msg.images)])
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    parts.extend({"type": "image_url", "image_url": {"url": i.data_url}} for i in msg.images)
    return parts


class _ChatStream(EventParser):
    """What one streamed chat completion has said so far."""

    sentinel = "[DONE]"

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: Usage | None = None
        self.model = ""

    def on_sentinel(self) -> None:
        self.finished = True

    def feed(self, event: str, payload: dict[str, Any]) -> list[Chunk]:
        if payload.get("error"):
            raise stream_error(payload["error"])
        self.model = payload.get("model") or self.model
        if payload.get("usage"):
            self.usage = parse_usage(payload["usage"])
        out: list[Chunk] = []
        for choice in payload.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                out.append(ReasoningChunk(text=reasoning))
            content = delta.get("content")
            if isinstance(content, str) and content:
                out.append(TextChunk(text=content))
            for frag in delta.get("tool_calls") or ():
                out.append(self._accumulate(frag))
            if choice.get("finish_reason"):
                self.finish = str(choice["finish_reason"])
        return out

    def end(self) -> StreamEnd:
        if not self.finished and self.finish is None:
            raise StreamInterrupted()
        finish = self.finish or "stop"
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
            for index, entry in sorted(self.calls.items())
        )
        return StreamEnd(
            finish_reason=finish, tool_calls=tool_calls, usage=self.usage, model=self.model
        )

    def _accumulate(self, frag: object) -> ToolCallFragment:
        calls = self.calls
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


def parse_usage(raw: object) -> Usage | None:
    """Chat usage: DeepSeek's ``prompt_cache_hit/miss_tokens`` or OpenAI's
    ``prompt_tokens_details.cached_tokens``."""
    if not isinstance(raw, dict):
        return None
    prompt = count(raw.get("prompt_tokens"))
    details = raw.get("prompt_tokens_details") or {}
    hit_raw = raw.get("prompt_cache_hit_tokens")
    hit = count(hit_raw) if hit_raw is not None else count(details.get("cached_tokens"))
    miss_raw = raw.get("prompt_cache_miss_tokens")
    return make_usage(
        prompt,
        count(raw.get("completion_tokens")),
        hit,
        reasoning=count((raw.get("completion_tokens_details") or {}).get("reasoning_tokens")),
        miss=count(miss_raw) if miss_raw is not None else None,
    )


def stream_error(err: object) -> ProviderError:
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

__all__ = ["OpenAIProvider", "parse_usage"]
