"""The MCP servers an ACP client passes in ``session/new`` / ``session/load``, as
a ``.mcp.json``-shaped file the session's MCP host reads like ``--mcp-config``:
the client is the user, so its servers need no project trust."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer


def mcp_json(servers: list[Any]) -> dict[str, Any]:
    """``{"mcpServers": {...}}`` for the stdio, http and sse servers (ACP-transport
    servers are not supported and left out)."""
    out: dict[str, Any] = {}
    for server in servers:
        if isinstance(server, McpServerStdio):
            out[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": {v.name: v.value for v in server.env},
            }
        elif isinstance(server, HttpMcpServer | SseMcpServer):
            out[server.name] = {
                "type": server.type,
                "url": server.url,
                "headers": {h.name: h.value for h in server.headers},
            }
    return {"mcpServers": out}


def write_mcp_json(servers: list[Any]) -> Path | None:
    """The servers in a private temporary file (it may hold tokens: 0600 in a
    0700 folder), or None when there is none; the caller removes its folder."""
    declared = mcp_json(servers)
    if not declared["mcpServers"]:
        return None
    folder = Path(tempfile.mkdtemp(prefix="reasonix-acp-mcp-"))
    path = folder / "client.mcp.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(declared, fh)
    return path
