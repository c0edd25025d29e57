"""``reasonix setup``: list the provider presets or add one to the user's config
(docs/CLI.md#reasonix-setup). The presets are the core's table
(reasonix_core/provider/presets.py) and so is the writer (``install_preset``, shared
with the TUI setup screen); this module only parses and answers."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from reasonix_core.errors import ConfigError

if TYPE_CHECKING:
    from reasonix_core.provider.presets import ProviderPreset


def add_setup_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    setup = sub.add_parser("setup", help="list provider presets, or add one to your config")
    setup.add_argument(
        "preset", nargs="?", metavar="PRESET", help="the preset to add (omit to list them)"
    )
    setup.add_argument(
        "--default",
        action="store_true",
        help="also make it default_model (the provider sessions start with)",
    )


def run_setup(args: argparse.Namespace, home: Path) -> str:
    """The command's output; raises ConfigError when the entry cannot be added."""
    from reasonix_core.provider.presets import PRESETS, install_preset, preset

    if not args.preset:
        lines = [
            f"{p.key:<20} {p.label}  ({p.base_url}"
            + (f", key in ${p.api_key_env})" if p.needs_key else ", no key)")
            for p in PRESETS
        ]
        return "\n".join(lines) + "\n"
    try:
        entry = preset(args.preset)
    except KeyError as exc:
        raise ConfigError(str(exc.args[0])) from None
    models, listed = _local_models(entry) if not entry.models else ((), "")
    path = install_preset(home, entry, models, make_default=args.default)
    default = "; it is now default_model" if args.default else ""
    key = f"; put the key in ${entry.api_key_env}" if entry.needs_key else ""
    return f"added provider {entry.key!r} to {path}{default}{key}{listed}\n"


def _local_models(entry: ProviderPreset) -> tuple[tuple[str, ...], str]:
    """A local server's preset lists no models: ask the server (as the TUI setup screen
    does); one that does not answer still gets its entry, with the way to name a model."""
    import anyio

    from reasonix_core.provider.discovery import discover_models
    from reasonix_core.provider.presets import preset_provider

    listing = anyio.run(discover_models, preset_provider(entry), None)
    if listing.source == "endpoint":
        return listing.models, f"; the server lists {len(listing.models)} models"
    return (), (
        f"; couldn't list its models ({listing.why}): start the server and name one "
        f"as {entry.key}/<model>"
    )
