"""``reasonix serve``: the Reasonix app in a browser, behind a token, a password or
(loopback only) nothing; ``reasonix serve --set-password`` (docs/SERVE.md).

The server itself needs the ``serve`` extra (textual-serve, aiohttp); it is
imported only when a server starts, and its absence is one line saying how to
install it. Standard library only at module level: the parser imports this module
on every ``reasonix`` start.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reasonix_tui.cli_common import EXIT_FAILED, EXIT_OK, SubParsers, fail

INSTALL_HINT = (
    "reasonix serve needs the serve extra: pip install 'reasonix[serve]' "
    "(or: uv tool install 'reasonix[serve]')"
)


def add_serve_parser(sub: SubParsers) -> None:
    serve = sub.add_parser(
        "serve", help="serve the app to a browser, behind a token or password (docs/SERVE.md)"
    )
    serve.add_argument("--host", dest="serve_host", metavar="H",
                       help="address to listen on (default: [serve] host, 127.0.0.1)")  # fmt: skip
    serve.add_argument("--port", dest="serve_port", type=int, metavar="P",
                       help="port to listen on (default: [serve] port, 8765; 0: any free)")  # fmt: skip
    serve.add_argument(
        "--auth", dest="serve_auth", choices=("token", "password", "none"),
        help="token: a per-launch URL (default); password: --set-password's; none: loopback only",
    )  # fmt: skip
    serve.add_argument(
        "--behind-proxy", dest="serve_behind_proxy", action="store_true", default=None,
        help="behind a trusted reverse proxy (TLS, X-Forwarded-*); allows --auth none off loopback",
    )  # fmt: skip
    serve.add_argument("-c", "--continue", dest="serve_continue", action="store_true",
                       help="the first tab continues the newest session of this folder")  # fmt: skip
    serve.add_argument("-r", "--resume", dest="serve_resume", metavar="ID",
                       help="the first tab resumes session ID")  # fmt: skip
    serve.add_argument(
        "--set-password", action="store_true",
        help="store a password hash in the user's config.toml and use password auth",
    )  # fmt: skip


def serve_command(args: argparse.Namespace) -> int:
    from reasonix_core.config import load_config
    from reasonix_core.home import reasonix_home

    if args.set_password:
        return _set_password(reasonix_home() / "config.toml")
    loaded = load_config(Path.cwd())
    for notice in loaded.ignored:
        sys.stderr.write(f"reasonix: note: {notice}\n")
    settings = loaded.config.serve
    host = args.serve_host if args.serve_host is not None else settings.host
    port = args.serve_port if args.serve_port is not None else settings.port
    auth = args.serve_auth or settings.auth_mode
    behind_proxy = bool(args.serve_behind_proxy) or settings.behind_proxy
    if not 0 <= port <= 65535:
        return fail(f"--port {port}: not a port number (0-65535)")
    problem = _refusal(host, auth, behind_proxy, settings.password_hash)
    if problem is not None:
        return fail(problem)
    try:
        from reasonix_tui.serve.server import ReasonixServer, ServeOptions, app_argv, bind_socket
    except ImportError:
        return fail(INSTALL_HINT)
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        return fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", EXIT_FAILED)
    options = ServeOptions(
        host=host,
        port=sock.getsockname()[1],
        auth=auth,
        folder=Path.cwd(),
        app_argv=app_argv(_app_flags(args)),
        resume_argv=_resume_flags(args),
        password_hash=settings.password_hash,
        behind_proxy=behind_proxy,
        hosts=settings.hosts,
    )
    server = ReasonixServer(options, on_ready=_announce)
    server.run(sock)
    sys.stdout.write("reasonix serve: stopped\n")
    return EXIT_OK


def _refusal(host: str, auth: str, behind_proxy: bool, password_hash: str) -> str | None:
    """Why this combination must not start, or None."""
    from reasonix_tui.serve.guard import is_loopback
    from reasonix_tui.serve.password import PasswordHashError, check_hash

    if auth == "none" and not is_loopback(host) and not behind_proxy:
        return (
            f"--auth none on {host or 'every address'} lets anyone on the network drive "
            "this agent; use --auth token or password, or --behind-proxy behind a trusted "
            "reverse proxy that authenticates (docs/SERVE.md)"
        )
    if auth == "password":
        if not password_hash:
            return "password auth needs a password: run `reasonix serve --set-password` first"
        try:
            check_hash(password_hash)
        except PasswordHashError as exc:
            return f"[serve] password_hash in the user's config.toml: {exc}"
    return None


def _app_flags(args: argparse.Namespace) -> list[str]:
    """The global flags every tab's app gets (``reasonix --model X serve``)."""
    flags: list[str] = []
    if args.model:
        flags += ["--model", args.model]
    if args.effort:
        flags += ["--effort", args.effort]
    if args.permission_mode:
        flags += ["--permission-mode", args.permission_mode]
    for folder in args.add_dir or []:
        flags += ["--add-dir", str(Path(folder).expanduser().absolute())]
    return flags


def _resume_flags(args: argparse.Namespace) -> list[str]:
    resume_id = args.serve_resume or args.resume_id
    if resume_id:
        return ["--resume", resume_id]
    if args.serve_continue or args.continue_last:
        return ["--continue"]
    return []


def _announce(url: str) -> None:
    sys.stdout.write(f"Reasonix is served at {url}\nCtrl+C stops the server and every tab.\n")
    sys.stdout.flush()


def _set_password(config: Path) -> int:
    import getpass

    from reasonix_core.config.writeback import set_config_value
    from reasonix_tui.serve.password import MIN_LENGTH, hash_password

    if sys.stdin.isatty():
        password = getpass.getpass("New password for reasonix serve: ")
        if getpass.getpass("Again: ") != password:
            return fail("the two passwords differ; nothing was stored")
    else:  # piped: the first line (scripts, tests)
        password = sys.stdin.readline().rstrip("\r\n")
    if len(password) < MIN_LENGTH:
        return fail(f"the password must have at least {MIN_LENGTH} characters; nothing was stored")
    set_config_value(config, "serve.password_hash", hash_password(password))
    set_config_value(config, "serve.auth_mode", "password")
    sys.stdout.write(
        f"Stored the password's scrypt hash in {config} ([serve] password_hash; "
        'auth_mode = "password").\n'
    )
    return EXIT_OK
