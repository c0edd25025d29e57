"""Settings the product retired (seed 000 §3.6, seed 004's compatibility table).

Read, never obeyed: ``guardian_model`` (Auto Guard is gone) is set aside by the schema
(``AgentConfig._LEGACY``) and said once per start; the old multi-threshold compaction
keys are removed from the user's ``config.toml`` on a normal start (tomlkit: every
comment and the layout stay), said once. A project's ``reasonix.toml`` is never
rewritten (it is the project's file, maybe under review): its keys are only ignored.
"""

from __future__ import annotations

import logging
from pathlib import Path

from reasonix_core.config.schema import WEB_SEARCH_KINDS, Config
from reasonix_core.errors import ConfigError

log = logging.getLogger(__name__)

#: ``[agent]`` keys of the retired multi-threshold compaction (one threshold remains:
#: ``compact_ratio``).
RETIRED_THRESHOLD_KEYS = (
    "soft_compact_ratio",
    "tool_result_snip_ratio",
    "compact_force_ratio",
    "cold_resume_prune",
    "context_editing",
)
#: ``[agent]`` keys read and ignored, with a notice (what retired them).
IGNORED_KEYS = {"guardian_model": "Auto Guard is retired; completion is the model's call"}


def retired_notices(config: Config, user_file: Path) -> list[str]:
    """The start's notices about retired settings: ``guardian_model`` ignored, and the
    threshold keys taken out of ``user_file`` (done here, at most one notice each)."""
    notices = [
        f"[agent] {key} is ignored: {why}"
        for key, why in IGNORED_KEYS.items()
        if key in config.agent.legacy
    ]
    notices.extend(
        f"[[providers]] {p.name!r}: web_search is ignored on kind {p.kind!r} "
        f"(the kinds with a server-side web search: {', '.join(WEB_SEARCH_KINDS)})"
        for p in config.providers
        if p.web_search and p.kind not in WEB_SEARCH_KINDS
    )
    removed = remove_threshold_keys(user_file)
    if removed:
        notices.append(
            f"removed retired [agent] {', '.join(removed)} from {user_file} "
            "(one compaction threshold remains: compact_ratio)"
        )
    return notices


def remove_threshold_keys(path: Path) -> list[str]:
    """Take the retired threshold keys out of ``[agent]`` of ``path``; the names
    removed (none: the file is not touched). A file that cannot be read or written
    back is left as it is (the keys are ignored anyway)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    if not any(key in text for key in RETIRED_THRESHOLD_KEYS):
        return []  # the common start: no TOML parse (nor tomlkit import), no write
    from reasonix_core.config.writeback import remove_table_keys

    try:
        return remove_table_keys(path, "agent", RETIRED_THRESHOLD_KEYS)
    except ConfigError as exc:
        log.warning("could not remove retired keys from %s: %s", path, exc)
        return []
