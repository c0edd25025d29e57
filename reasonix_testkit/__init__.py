"""Reasonix's test kit: the loopback fixture server and the scripted TUI services.

Not part of the product: pyproject's package discovery ships only
``reasonix_core`` and ``reasonix_tui`` (``tests/test_packaging.py`` holds that).
``tests/`` and ``snapshots/`` import it through pytest's ``pythonpath``;
``bench/_common.py`` puts the repository root on ``sys.path`` for the scripts. The HTTP
layer under the fixture server is the product's (``reasonix_core.bench.loopback_http``,
which e2ebench's replay stands on); the kit adds the scripted answers and faults.

One :class:`FixtureServer` speaks a wire format through its dialect:
:class:`ChatDialect` (DeepSeek / OpenAI Chat Completions),
:class:`AnthropicDialect` (Anthropic Messages, also DeepSeek's ``/anthropic``)
and :class:`ResponsesDialect` (OpenAI / DeepSeek Responses).
"""

from reasonix_testkit.approver import ScriptedApprover
from reasonix_testkit.dialects.anthropic import AnthropicDialect
from reasonix_testkit.dialects.chat import ChatDialect
from reasonix_testkit.dialects.responses import ResponsesDialect
from reasonix_testkit.prompt_cache import count_tokens
from reasonix_testkit.script import (
    ContentScript,
    HttpError,
    RecordedRequest,
    Reply,
    Responder,
    ScriptItem,
    Stall,
    ToolCallSpec,
    Verbatim,
)
from reasonix_testkit.server import Dialect, FixtureServer

__all__ = [
    "AnthropicDialect",
    "ChatDialect",
    "ContentScript",
    "Dialect",
    "FixtureServer",
    "HttpError",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ResponsesDialect",
    "ScriptItem",
    "ScriptedApprover",
    "Stall",
    "ToolCallSpec",
    "Verbatim",
    "count_tokens",
]
