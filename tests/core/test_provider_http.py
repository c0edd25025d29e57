"""The three built-in kinds share one HTTP base: construction and prepare
are written once (provider/http.py); a kind keeps its path, body and event parser
(the stream loop around it is shared too)."""

from __future__ import annotations

import pytest

from reasonix_core.config.schema import ProviderConfig
from reasonix_core.provider.anthropic import AnthropicProvider
from reasonix_core.provider.http import HttpProvider, count
from reasonix_core.provider.openai import OpenAIProvider
from reasonix_core.provider.responses import ResponsesProvider

KINDS = (OpenAIProvider, AnthropicProvider, ResponsesProvider)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_kinds_keep_only_their_own_parts(kind: type[HttpProvider]) -> None:
    assert issubclass(kind, HttpProvider)
    for shared in ("__init__", "prepare", "stream", "aclose", "_http", "_parse", "drain"):
        assert shared not in vars(kind), f"{kind.__name__} redefines {shared}"
    for own in ("endpoint", "build_body", "efforts", "event_parser"):
        assert own in vars(kind), f"{kind.__name__} lacks {own}"


def test_request_url_wins_over_the_kind_path() -> None:
    base = ProviderConfig(name="p", base_url="https://h.example/v1/")
    assert OpenAIProvider(base, "").url == "https://h.example/v1/chat/completions"
    assert AnthropicProvider(base, "").url == "https://h.example/v1/messages"
    assert ResponsesProvider(base, "").url == "https://h.example/v1/responses"
    fixed = ProviderConfig(name="p", base_url="https://h.example", request_url="https://x/y")
    assert {k(fixed, "").url for k in KINDS} == {"https://x/y"}


def test_usage_counts_ignore_what_is_not_a_count() -> None:
    assert [count(v) for v in (5, 0, -1, None, "7", 2.0, True)] == [5, 0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize(
    ("url", "verifies"),
    [
        ("https://api.example/v1", True),
        ("HTTPS://api.example/v1", True),
        ("http://127.0.0.1:8080/v1", False),
    ],
)
def test_tls_verification_is_skipped_only_for_plain_http(url: str, verifies: bool) -> None:
    # Start-up: an http:// endpoint never makes a TLS connection, so no verifying
    # context (CA bundle) is built for it; an https:// endpoint always verifies.
    import ssl

    provider = OpenAIProvider(ProviderConfig(name="p", base_url=url), "")
    pool = provider._http()._transport._pool  # type: ignore[attr-defined]
    context: ssl.SSLContext = pool._ssl_context
    assert (context.verify_mode == ssl.CERT_REQUIRED) is verifies
    assert context.check_hostname is verifies


def test_httpcores_sniffio_probe_is_answered_from_the_module_cache() -> None:
    # httpcore runs `import sniffio` about seven times a request; where sniffio is
    # not installed each was a failed import searching sys.path (~0.1 ms). Once a
    # client exists, the probe must not reach the path finders any more.
    import subprocess
    import sys

    # sniffio is hidden from the child whatever this environment holds (the test
    # extra's selenium pulls it in through trio): the case is a user's install.
    code = (
        "import sys\n"
        "from importlib.machinery import PathFinder\n"
        "class Hide:\n"
        "    @classmethod\n"
        "    def find_spec(cls, name, path=None, target=None):\n"
        "        return None if name == 'sniffio' else PathFinder.find_spec(name, path, target)\n"
        "sys.meta_path[sys.meta_path.index(PathFinder)] = Hide\n"
        "from reasonix_core.config.schema import ProviderConfig\n"
        "from reasonix_core.provider.openai import OpenAIProvider\n"
        "import httpcore._synchronization as sync\n"
        "OpenAIProvider(ProviderConfig(name='p', base_url='http://127.0.0.1:9'), '')._http()\n"
        "asked = []\n"
        "class Spy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        asked.append(name)\n"
        "sys.meta_path.insert(0, Spy())\n"
        "for _ in range(3):\n"
        "    assert sync.current_async_library() == 'asyncio'\n"
        "assert 'sniffio' not in asked, asked\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
