"""The MCP host on the official ``mcp`` SDK (seed 000 §3.3, §3.16).

- :mod:`.config`: ``[[mcp.servers]]`` and ``.mcp.json`` declarations;
- :mod:`.host`: :class:`McpHost`, one owner task per server;
- :mod:`.connection`: the per-server supervisor and call path;
- :mod:`.capability`: ``use_capability``, the stable proxy tool;
- :mod:`.status`: the immutable status records behind ``/mcp``.

Importing this package does not import the SDK; the host loads it in a worker
thread once a server is started (see :mod:`._sdk`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonix_core.mcp.config import McpConfigProblem, McpServerConfig, McpSetup, load_mcp_setup
from reasonix_core.mcp.status import McpServerStatus

if TYPE_CHECKING:
    from reasonix_core.config import Config
    from reasonix_core.mcp.host import McpHost

__all__ = [
    "McpConfigProblem",
    "McpServerConfig",
    "McpServerStatus",
    "McpSetup",
    "load_mcp_setup",
    "make_host",
    "setup_for",
]


def setup_for(
    config: Config,
    workspace: Path,
    home: Path,
    *,
    trust_project: bool = False,
    extra_files: Sequence[Path] = (),
) -> McpSetup:
    """The MCP declarations for ``workspace`` with ``[tools]`` timeouts as defaults
    (``extra_files``: ``--mcp-config``)."""
    return load_mcp_setup(
        workspace,
        home,
        startup_timeout=config.tools.mcp_startup_timeout_seconds,
        call_timeout=config.tools.mcp_call_timeout_seconds,
        trust_project=trust_project,
        extra_files=extra_files,
    )


def make_host(
    config: Config,
    workspace: Path,
    home: Path,
    *,
    trust_project: bool = False,
    extra_files: Sequence[Path] = (),
    **options: Any,
) -> McpHost:
    """An (unentered) host for the servers declared for ``workspace``; the project's
    own declarations only when the folder is trusted (or ``trust_project``)."""
    from reasonix_core.mcp.host import McpHost
    from reasonix_core.mcp.oauth import McpAuth
    from reasonix_core.mcp.tokens import TokenStore

    setup = setup_for(config, workspace, home, trust_project=trust_project, extra_files=extra_files)
    options.setdefault("auth", McpAuth(TokenStore(home)))
    return McpHost(setup, workspace=workspace, log_dir=home / "logs", **options)
