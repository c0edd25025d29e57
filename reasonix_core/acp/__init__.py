"""``reasonix acp``: an Agent Client Protocol (v1) agent over the session core.

A thin adapter: each ACP session is one :class:`~reasonix_core.session.core.Session`
(``agent.py``), its events map to ACP session updates (``updates.py``), its
permission questions become ``session/request_permission`` (``approver.py``);
``tool_calls.py`` (titles, kinds, paths), ``prompt_text.py`` (content blocks to a
turn), ``commands.py``, ``config_options.py``, ``mcp_servers.py`` and
``transport.py`` (JSON-RPC errors for bad input) are the rest.
The ``acp`` package (agent-client-protocol) is imported only here, never at
``reasonix`` start-up.
"""
