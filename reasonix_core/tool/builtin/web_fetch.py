"""``web_fetch``: fetch an http(s) URL and return readable text.

SSRF guard: before every hop (the first request and each redirect) the host is
resolved and every address is checked; private, link-local, shared (CGNAT),
multicast, reserved and unspecified addresses are refused before any
connection is made. Loopback is allowed. A redirect to another host is not
followed: the permission check approved the first host only, so the model gets
the new URL and a new call is checked again. The request then goes to the checked
address itself (the ``Host`` header and TLS SNI keep the original name), so a
second DNS answer cannot swap in a different address. Environment proxies are
not used, for the same reason.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import anyio
import httpx
from pydantic import BaseModel, Field

from reasonix_core.tool.args import ARGS_CONFIG, validate_args
from reasonix_core.tool.base import ToolContext, ToolResult
from reasonix_core.tool.builtin.specs import WEB_FETCH as SPEC
from reasonix_core.tool.builtin.specs import SpecifiedTool

TIMEOUT_SECONDS = 15.0
MAX_BODY_BYTES = 1024 * 1024
MAX_REDIRECTS = 5
# What the model gets back at most; a 1 MiB text body would swamp the context.
MAX_TEXT_CHARS = 100_000
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchRefused(Exception):
    """The URL or one of its addresses is not allowed."""


# -- address checks ---------------------------------------------------------


def address_problem(ip: IPAddress) -> str | None:
    """Why ``ip`` must not be fetched, or None if it may be."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            return address_problem(embedded)
    if ip.is_loopback:
        return None
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private address"
    if ip.is_reserved:
        return "a reserved address"
    if not ip.is_global:
        return "a non-public address"
    return None


async def resolve_checked(host: str, port: int) -> list[IPAddress]:
    """Resolve ``host`` and check every address; raise FetchRefused if any is banned."""
    addresses: list[IPAddress] = []
    try:
        addresses.append(ipaddress.ip_address(host))
    except ValueError:
        pass
    if not addresses:
        try:
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise FetchRefused(f"could not resolve host {host!r}: {exc}") from None
        for _family, _kind, _proto, _name, sockaddr in infos:
            ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if ip not in addresses:
                addresses.append(ip)
        if not addresses:
            raise FetchRefused(f"host {host!r} has no addresses")
    for ip in addresses:
        problem = address_problem(ip)
        if problem:
            raise FetchRefused(f"refused to fetch {host}: {ip} is {problem}")
    return addresses


def check_url(url: httpx.URL) -> None:
    if url.scheme not in ("http", "https"):
        raise FetchRefused(f"only http and https URLs can be fetched, not {url.scheme or 'no'}:")
    if not url.host:
        raise FetchRefused("the URL has no host")


# -- HTML to text -----------------------------------------------------------


def html_to_text(html: str, base_url: str = "") -> str:
    """Readable text from HTML: headings, paragraphs, list items, ``text (url)`` links."""
    # Imported on the first page: html.parser is ~3 ms of every start-up otherwise.
    from reasonix_core.tool.html_text import readable_text

    return readable_text(html, base_url)


# -- content types ----------------------------------------------------------

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {
        "application/json", "application/xml", "application/javascript",
        "application/x-javascript", "application/ecmascript", "application/yaml",
        "application/x-yaml", "application/toml", "application/x-sh",
        "application/sql", "application/graphql", "application/x-ndjson",
    }
)  # fmt: skip


def classify(mime: str, head: bytes) -> str:
    """``"html"``, ``"text"`` or ``"binary"``."""
    if mime in HTML_TYPES:
        return "html"
    if mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml")):
        return "text"
    if mime:
        return "binary"
    if b"\x00" in head[:8192]:
        return "binary"
    sniff = head[:1024].lstrip().lower()
    if sniff.startswith((b"<!doctype html", b"<html")):
        return "html"
    return "text"


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", "replace")
    except LookupError:
        return body.decode("utf-8", "replace")


# -- fetching ---------------------------------------------------------------


class WebFetchArgs(BaseModel):
    model_config = ARGS_CONFIG

    url: str = Field(min_length=1)


def _pinned(url: httpx.URL, ip: IPAddress) -> tuple[httpx.URL, dict[str, str], dict[str, Any]]:
    """The request URL aimed at ``ip``, with the Host header and SNI of ``url``."""
    host = url.raw_host.decode("ascii")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return url, {}, {}
    headers = {"Host": url.netloc.decode("ascii")}
    extensions: dict[str, Any] = {"sni_hostname": host} if url.scheme == "https" else {}
    return url.copy_with(host=str(ip)), headers, extensions


async def _send(
    client: httpx.AsyncClient, url: httpx.URL, addresses: list[IPAddress], headers: dict[str, str]
) -> httpx.Response:
    """Send the request to the first checked address that accepts a connection."""
    failure: httpx.ConnectError | None = None
    for ip in addresses:
        target, extra_headers, extensions = _pinned(url, ip)
        request = client.build_request(
            "GET", target, headers={**headers, **extra_headers}, extensions=extensions
        )
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as exc:
            failure = exc
    assert failure is not None
    raise failure


async def fetch(url_text: str) -> ToolResult:
    try:
        url = httpx.URL(url_text.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        return ToolResult.error(f"web_fetch: invalid URL: {exc}")
    headers = {
        "User-Agent": "Reasonix web_fetch (+https://github.com/esengine/reasonix)",
        "Accept": "text/html,application/xhtml+xml,text/plain,application/json;q=0.9,*/*;q=0.5",
        "Accept-Encoding": "identity",
    }
    async with httpx.AsyncClient(
        timeout=TIMEOUT_SECONDS, follow_redirects=False, trust_env=False
    ) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            try:
                check_url(url)
                port = url.port or (443 if url.scheme == "https" else 80)
                addresses = await resolve_checked(url.raw_host.decode("ascii"), port)
            except FetchRefused as exc:
                return ToolResult.error(f"web_fetch: {exc}", url=str(url))
            response = await _send(client, url, addresses, headers)
            try:
                if response.status_code in REDIRECT_CODES and "location" in response.headers:
                    try:
                        target = url.join(response.headers["location"])
                    except httpx.InvalidURL as exc:
                        return ToolResult.error(f"web_fetch: bad redirect location: {exc}")
                    try:
                        check_url(target)
                    except FetchRefused as exc:
                        return ToolResult.error(f"web_fetch: {exc}", url=str(target))
                    if target.host.lower() != url.host.lower():
                        # The permission check approved this host only; following
                        # would send the request (and whatever the URL carries)
                        # to a host nobody approved. A new call is checked again.
                        return ToolResult.error(
                            f"web_fetch: {url} redirects to {target}, a different host; "
                            "not followed. Call web_fetch with that URL to fetch it.",
                            code="REDIRECT_OTHER_HOST",
                            url=str(target),
                        )
                    url = target
                    continue
                return await _read(response, url)
            finally:
                await response.aclose()
    return ToolResult.error(f"web_fetch: too many redirects (more than {MAX_REDIRECTS})")


async def _read(response: httpx.Response, url: httpx.URL) -> ToolResult:
    mime = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if mime and classify(mime, b"") == "binary":
        return ToolResult.error(
            f"web_fetch: {url} is binary content ({mime}); only text and HTML are returned",
            url=str(url),
        )
    body = bytearray()
    truncated = False
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            del body[MAX_BODY_BYTES:]
            truncated = True
            break
    kind = classify(mime, bytes(body))
    if kind == "binary":
        return ToolResult.error(
            f"web_fetch: {url} is binary content; only text and HTML are returned", url=str(url)
        )
    text = _decode(bytes(body), response.charset_encoding)
    if kind == "html":
        text = html_to_text(text, str(url))
    clipped = len(text) > MAX_TEXT_CHARS
    if clipped:
        text = text[:MAX_TEXT_CHARS] + f"\n[... text truncated at {MAX_TEXT_CHARS} characters ...]"
    status = f"{response.status_code} {response.reason_phrase}".strip()
    header = f"{status} · {mime or 'unknown type'} · {len(body)} bytes · {url}"
    if truncated:
        header += " · body truncated at 1 MiB"
    meta = {
        "url": str(url),
        "status": response.status_code,
        "content_type": mime,
        "bytes": len(body),
        "truncated": truncated,
    }
    result = f"{header}\n\n{text or '(empty body)'}"
    if response.status_code >= 400:
        return ToolResult(text=result, is_error=True, outcome="error", meta=meta)
    return ToolResult(text=result, meta=meta)


class WebFetchTool(SpecifiedTool, spec=SPEC):
    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        parsed: WebFetchArgs = validate_args(WebFetchArgs, args)
        try:
            with anyio.fail_after(TIMEOUT_SECONDS):
                return await fetch(parsed.url)
        except TimeoutError:
            return ToolResult.error(f"web_fetch: timed out after {TIMEOUT_SECONDS:g} s")
        except httpx.TimeoutException:
            return ToolResult.error(f"web_fetch: timed out after {TIMEOUT_SECONDS:g} s")
        except httpx.HTTPError as exc:
            return ToolResult.error(f"web_fetch: request failed: {type(exc).__name__}: {exc}")
