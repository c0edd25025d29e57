"""The ``Message.meta`` keys under which a provider kind keeps an answer's own records.

Apart from the providers so that a reader of saved transcripts (the TUI's resume,
ACP's ``session/load``, :mod:`reasonix_core.provider.searches`) can tell which
messages carry them without importing the providers, and httpx with them: a
resumed session is drawn before the engine exists. Nothing here imports.
"""

from __future__ import annotations

#: The Anthropic kind: an answer's whole content when server-side blocks came with
#: it (JSON text of the blocks, replayed as is on every later request).
ANTHROPIC_CONTENT_META = "anthropic_content"
#: The Responses kind: an answer's ``web_search_call`` items (JSON text), replayed as
#: received before the answer's message on every later request.
RESPONSES_SEARCHES_META = "responses_web_search"
