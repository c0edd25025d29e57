"""The provider-side web searches of a saved answer, whichever kind kept them.

Each kind keeps its own records in the assistant message's ``meta`` (the Anthropic
kind its whole content, the Responses kind its ``web_search_call`` items); a replayed
transcript (the TUI's resume, ACP's ``session/load``) shows them as the live events did.
"""

from __future__ import annotations

from reasonix_core import events as ev
from reasonix_core.messages import Message
from reasonix_core.provider.kept_meta import ANTHROPIC_CONTENT_META, RESPONSES_SEARCHES_META


def past_searches(message: Message) -> list[ev.WebSearched]:
    """The searches the provider ran for this answer, in order (none: [])."""
    meta = message.meta
    if message.role != "assistant" or not (
        ANTHROPIC_CONTENT_META in meta or RESPONSES_SEARCHES_META in meta
    ):
        return []
    # Only for an answer that kept them: the providers bring httpx, which drawing a
    # resumed session (before the engine exists) otherwise does without.
    from reasonix_core.provider import anthropic, responses

    found = [*anthropic.stored_searches(message), *responses.stored_searches(message)]
    return [
        ev.WebSearched(call_id=s.call_id, query=s.query, results=s.results, error=s.error)
        for s in found
    ]
