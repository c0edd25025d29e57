"""``reasonix acp``: an Agent Client Protocol (v1) agent on stdin/stdout for
editors (Zed) and ACP front ends (Toad). stdout carries protocol JSON only; the
log goes to a file (docs/ACP.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from reasonix_core.permission_modes import MODE_CHOICES
from reasonix_tui.cli_common import EFFORT_HELP, EXIT_OK, SubParsers


def add_acp_parser(sub: SubParsers) -> None:
    acp = sub.add_parser(
        "acp", help="speak the Agent Client Protocol on stdio (Zed, Toad; docs/ACP.md)"
    )
    acp.add_argument(
        "--model",
        "-m",
        dest="acp_model",
        metavar="MODEL",
        help="provider name, model id or provider/model",
    )
    acp.add_argument("--effort", dest="acp_effort", metavar="LEVEL", help=EFFORT_HELP)
    acp.add_argument(
        "--permission-mode", dest="acp_mode", choices=MODE_CHOICES,
        help="the mode new sessions start in (the editor can switch ask / auto / plan)",
    )  # fmt: skip
    acp.add_argument(
        "--trust-project", action="store_true",
        help="apply the project's risky settings without recorded trust",
    )  # fmt: skip
    acp.add_argument(
        "--log-file", type=Path, metavar="PATH",
        help="where the log goes (default: REASONIX_HOME/logs/acp.log)",
    )  # fmt: skip


def acp_command(args: argparse.Namespace) -> int:
    # Here, not at the top: the parser imports this module on every `reasonix` start.
    import asyncio
    import logging

    from reasonix_core.acp.agent import AcpOptions, serve
    from reasonix_core.home import reasonix_home

    log_file = args.log_file or reasonix_home() / "logs" / "acp.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    # Nothing but protocol JSON may reach stdout: every log record goes to the file.
    logging.basicConfig(
        filename=log_file, level=logging.INFO, force=True,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )  # fmt: skip
    options = AcpOptions(
        model=args.acp_model or args.model,
        effort=args.acp_effort or args.effort,
        permission_mode=args.acp_mode or args.permission_mode,
        trust_project=args.trust_project,
    )
    asyncio.run(serve(options))
    return EXIT_OK
