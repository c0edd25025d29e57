"""``reasonix setup``: list the provider presets or add one to the user's config
(docs/CLI.md#reasonix-setup). The presets are the core's table
(reasonix_core/provider/presets.py); this module only writes the entry."""

from __future__ import annotations

import argparse
import os
import tomllib
from pathlib import Path

from reasonix_core.errors import ConfigError


def add_setup_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    setup = sub.add_parser("setup", help="list provider presets, or add one to your config")
    setup.add_argument(
        "preset", nargs="?", metavar="PRESET", help="the preset to add (omit to list them)"
    )


def run_setup(args: argparse.Namespace, home: Path) -> str:
    """The command's output; raises ConfigError when the entry cannot be added."""
    from reasonix_core.provider.presets import PRESETS, preset, preset_toml

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
    path = home / "config.toml"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        existing = tomllib.loads(text).get("providers", [])
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML ({exc}); fix it before adding a preset"
        ) from None
    if any(isinstance(p, dict) and p.get("name") == entry.key for p in existing):
        raise ConfigError(f"{path} already has a provider named {entry.key!r}")
    home.mkdir(parents=True, exist_ok=True)
    separator = (
        "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    )
    # Appended with O_APPEND: the user's own lines stay byte for byte.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(separator + preset_toml(entry))
    key = f"; put the key in ${entry.api_key_env}" if entry.needs_key else ""
    return f"added provider {entry.key!r} to {path}{key}\n"
