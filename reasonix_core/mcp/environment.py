"""The environment a stdio MCP server starts with.

The MCP SDK passes only ``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM`` and
``USER``: a server then cannot reach the network through the user's proxy, fails
TLS behind a corporate CA (``uvx mcp-server-time`` loses ``SSL_CERT_FILE``),
prints mojibake without the locale and writes temp files to the wrong place. Over
the SDK's list a server gets the locale, proxy, CA and temp-dir variables below,
the project folder (``REASONIX_PROJECT_DIR``, and ``CLAUDE_PROJECT_DIR`` for
servers written for Claude Code), then its own declared ``env``. Nothing else is
inherited: no provider key or other secret reaches a server unless its own
declaration names it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["PASSED_THROUGH", "PROJECT_DIR_VARIABLES", "server_environment"]

_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY")

#: Inherited from Reasonix's own environment when set (beside every ``LC_*``).
PASSED_THROUGH: tuple[str, ...] = (
    "LANG",
    "LANGUAGE",
    "TZ",
    *_PROXIES,
    *(name.lower() for name in _PROXIES),
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "TMPDIR",
    "TEMP",
    "TMP",
)

#: Set to the workspace for every server.
PROJECT_DIR_VARIABLES: tuple[str, ...] = ("REASONIX_PROJECT_DIR", "CLAUDE_PROJECT_DIR")


def server_environment(
    declared: Mapping[str, str],
    workspace: Path,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """What a server gets on top of the SDK's default variables; ``declared`` (the
    server's own ``env``) wins over everything here."""
    source = os.environ if environ is None else environ
    out = {
        name: value
        for name, value in source.items()
        if name in PASSED_THROUGH or name.startswith("LC_")
    }
    out.update(dict.fromkeys(PROJECT_DIR_VARIABLES, str(workspace)))
    out.update(declared)
    return out
