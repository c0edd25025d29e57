"""``reasonix trust``, ``permissions`` and ``config``: the settings a folder runs with
and its permission rules (``reasonix mcp`` is :mod:`reasonix_tui.cli_mcp`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reasonix_core.permission_modes import PRESETS
from reasonix_tui.cli_common import EXIT_OK, SubParsers, absolute_dirs, fail


def add_trust_parser(sub: SubParsers) -> None:
    trust = sub.add_parser(
        "trust", help="trust a folder's project settings (providers, presets, MCP servers)"
    )
    trust.add_argument(
        "path", nargs="?", type=Path, default=None, help="the folder (default: this one)"
    )
    trust.add_argument("--revoke", action="store_true", help="forget the trust for the folder")


def add_permissions_parser(sub: SubParsers) -> None:
    perms = sub.add_parser("permissions", help="inspect permission rules")
    perms_sub = perms.add_subparsers(dest="permissions_command", metavar="ACTION")
    check = perms_sub.add_parser("check", help="show the decision for a tool call and why")
    check.add_argument("tool", help="tool name, e.g. bash or edit_file")
    check.add_argument("arg", nargs="?", default="", help="command (bash) or path (file tools)")
    check.add_argument(
        "--permission-mode",
        dest="check_permission_mode",
        choices=PRESETS,
        help="the preset to check under (default from config)",
    )


def add_config_parser(sub: SubParsers) -> None:
    config = sub.add_parser("config", help="show or change settings")
    config_sub = config.add_subparsers(dest="config_command", metavar="SETTING")
    ratio = config_sub.add_parser(
        "compact-ratio", help="show or set agent.compact_ratio (the compaction threshold)"
    )
    ratio.add_argument(
        "value",
        nargs="?",
        metavar="VALUE",
        help="0.30-0.85 (or 30%%-85%%); presets 0.70, 0.80, 0.85",
    )
    ratio.add_argument(
        "--local",
        action="store_true",
        help="write ./reasonix.toml (the project) instead of the user config",
    )


def trust_command(args: argparse.Namespace) -> int:
    from reasonix_core.home import reasonix_home
    from reasonix_core.trust import record_trust, review_project, revoke_trust

    folder = args.path if args.path is not None else Path.cwd()
    if not folder.is_dir():
        return fail(f"{folder}: not a folder")
    home = reasonix_home()
    if args.revoke:
        if revoke_trust(folder, home):
            sys.stdout.write(f"no longer trusted: {folder.resolve()}\n")
        else:
            sys.stdout.write(f"{folder.resolve()} was not trusted\n")
        return EXIT_OK
    review = review_project(folder, home)
    if not review.risky:
        sys.stdout.write(
            f"nothing to trust in {review.folder}: its project files change no provider, "
            "permission loosening, sandbox loosening or MCP server\n"
        )
        return EXIT_OK
    record_trust(review, home)
    sys.stdout.write(f"trusted {review.folder} with these project settings:\n")
    for setting in review.risky:
        sys.stdout.write(f"  {setting}\n")
    sys.stdout.write("a change to any of them will ask again\n")
    return EXIT_OK


def permissions_command(args: argparse.Namespace) -> int:
    from reasonix_core.config import load_config
    from reasonix_core.hooks.settings import load_settings
    from reasonix_core.permission import explain
    from reasonix_core.session.policy import build_policy, rule_origins
    from reasonix_core.session.settings import RunSettings

    workspace = Path.cwd()
    loaded = load_config(workspace)
    config = loaded.config
    add_dirs = absolute_dirs(args.add_dir or [])
    if isinstance(add_dirs, str):
        return fail(add_dirs)
    settings = RunSettings(
        workspace=workspace,
        permission_mode=args.check_permission_mode,
        add_dirs=add_dirs,
        settings_files=list(getattr(args, "settings", None) or []),
    )
    claude = load_settings(
        Path(config.sandbox.workspace_root or workspace).resolve(),
        loaded.home,
        extra=settings.settings_files,
    )
    policy = build_policy(config, settings, workspace, claude=claude)
    origin = rule_origins(loaded.sources, claude.origin)
    sys.stdout.write(explain(policy, args.tool, args.arg, origin=origin) + "\n")
    withheld = [*loaded.withheld, *claude.withheld]
    if withheld:
        settings_named = ", ".join(dict.fromkeys(f"{s.file}: {s.setting}" for s in withheld))
        sys.stdout.write(
            f"note: this folder is not trusted; not applied: {settings_named} "
            "(`reasonix trust` applies them)\n"
        )
    return EXIT_OK


def _parse_ratio(text: str) -> float:
    from reasonix_core.errors import UsageError

    raw = text.strip().rstrip("%")
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(
            f"compact ratio must be a number like 0.80 or 80% (got {text!r})"
        ) from None
    if text.strip().endswith("%") or value > 1:
        value /= 100
    return round(value, 4)


def config_command(args: argparse.Namespace) -> int:
    from reasonix_core.config import PROJECT_FILE, USER_FILE, load_config, reasonix_home
    from reasonix_core.config.loader import read_toml

    workspace = Path.cwd()
    home = reasonix_home()
    project, user = workspace / PROJECT_FILE, home / USER_FILE
    if args.value is not None:
        from reasonix_core.config.writeback import set_config_value

        target = project if args.local else user
        set_config_value(target, "agent.compact_ratio", _parse_ratio(args.value))
        sys.stdout.write(f"wrote agent.compact_ratio to {target}\n")

    def declared(path: Path) -> float | None:
        agent = (read_toml(path) or {}).get("agent")
        value = agent.get("compact_ratio") if isinstance(agent, dict) else None
        return value if isinstance(value, int | float) else None

    loaded = load_config(workspace, home=home)
    value = loaded.config.agent.compact_ratio
    from_env = "REASONIX_AGENT__COMPACT_RATIO"
    if from_env in loaded.environment:
        source = f"environment variable {from_env}"
    elif declared(project) is not None:
        source = str(project)
    elif declared(user) is not None:
        source = str(user)
    else:
        source = "built-in default"
    sys.stdout.write(f"compact_ratio = {value:.2f} ({source})\n")
    if args.value is not None and from_env in loaded.environment:
        sys.stdout.write(f"note: {from_env} is set, which takes precedence over the files\n")
    elif args.value is not None and not args.local and declared(project) is not None:
        sys.stdout.write(f"note: {project} sets its own value, which takes precedence here\n")
    try:
        from reasonix_core.config import resolve_model

        resolved = resolve_model(loaded.config, None)
        window = resolved.provider.context_window_for(resolved.model)
        sys.stdout.write(
            f"compaction starts at {int(window * value):,} of {window:,} tokens ({resolved.ref})\n"
        )
    except Exception:  # no usable model configured: the ratio alone is still shown
        pass
    return EXIT_OK
