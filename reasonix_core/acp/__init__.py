"""``reasonix acp``: an Agent Client Protocol (v1) agent over the session core.

A thin adapter: each ACP session is one :class:`~reasonix_core.session.core.Session`
(``agent.py``), its events map to ACP session updates (``updates.py``), its
permission questions become ``session/request_permission`` (``approver.py``).
The ``acp`` package (agent-client-protocol) is imported only here, never at
``reasonix`` start-up.
"""
