"""``reasonix mcp list / get / add / remove / auth``: the MCP servers a folder
declares, editing those declarations, and logging in to remote servers.

The decisions live in the core (:mod:`reasonix_core.mcp.declare`,
:mod:`reasonix_core.mcp.oauth`); this module parses, prints and picks exit codes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasonix_tui.cli_common import EXIT_FAILED, EXIT_OK, SubParsers, fail

if TYPE_CHECKING:
    from reasonix_core.config import Config
    from reasonix_core.mcp import McpServerConfig
    from reasonix_core.mcp.declare import Scope
    from reasonix_core.mcp.tokens import TokenStore

ACTIONS = ("list", "get", "add", "remove", "auth")
_ADD_OPTIONS = (
    "--scope", "--transport", "--header", "--env", "--client-id", "--callback-port",
)  # fmt: skip
_SCOPE_HELP = "user: ~/.reasonix/config.toml; project: ./reasonix.toml"


def add_mcp_parser(sub: SubParsers) -> None:
    mcp = sub.add_parser("mcp", help="list, add, remove and log in to MCP servers")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", metavar="ACTION")
    mcp_list = mcp_sub.add_parser("list", help="start each server and show its status")
    mcp_list.add_argument("--json", dest="mcp_json", action="store_true", help="one JSON array")
    mcp_list.add_argument(
        "--no-connect",
        action="store_true",
        help="show the declarations without starting any server",
    )
    get = mcp_sub.add_parser("get", help="show one server's declaration and login state")
    get.add_argument("name", help="the server's name")
    add = mcp_sub.add_parser(
        "add",
        help="declare a server: NAME URL (remote) or NAME -- CMD ARGS... (local)",
        usage=(
            "reasonix mcp add [--scope user|project] NAME URL [--transport http|sse] "
            "[--header K:V]...\n       reasonix mcp add [--scope user|project] NAME "
            "[--env K=V]... -- CMD ARGS..."
        ),
    )
    add.add_argument("--scope", choices=("user", "project"), help=_SCOPE_HELP + " (default user)")
    add.add_argument("--transport", choices=("http", "sse"), help="a remote server's transport")
    add.add_argument("--header", action="append", default=[], metavar="K:V", help="HTTP header")
    add.add_argument("--env", action="append", default=[], metavar="K=V", help="environment")
    add.add_argument("--client-id", metavar="ID", help="OAuth client registered beforehand")
    add.add_argument(
        "--callback-port", metavar="PORT", help="the login's loopback port that client names"
    )
    add.add_argument("name", help="the server's name")
    # Everything after NAME: the URL, or `-- CMD ARGS...`, and options given after NAME
    # (argparse cannot intermix them with a variable-length positional).
    add.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    remove = mcp_sub.add_parser("remove", help="remove a server from the file that declares it")
    remove.add_argument("--scope", choices=("user", "project"), help=_SCOPE_HELP)
    remove.add_argument("name", help="the server's name")
    auth = mcp_sub.add_parser("auth", help="log in to a remote server (OAuth), or --logout")
    auth.add_argument("name", help="the server's name")
    auth.add_argument("--logout", action="store_true", help="forget the server's tokens")
    auth.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long to wait for the browser (default 300)",
    )


def mcp_command(args: argparse.Namespace) -> int:
    handler = {
        "list": _list,
        "get": _get,
        "add": _add,
        "remove": _remove,
        "auth": _auth,
    }[args.mcp_command]
    return handler(args)


def _context() -> tuple[Config, Path, Path]:
    from reasonix_core.config import load_config, reasonix_home

    home = reasonix_home()
    config = load_config(Path.cwd(), home=home).config
    workspace = Path(config.sandbox.workspace_root or Path.cwd()).resolve()
    return config, workspace, home


def _add(args: argparse.Namespace) -> int:
    from reasonix_core.mcp.declare import add_server

    argv = ["--scope", args.scope] if args.scope else []
    argv += ["--transport", args.transport] if args.transport else []
    for header in args.header:
        argv += ["--header", header]
    for item in args.env:
        argv += ["--env", item]
    argv += ["--client-id", args.client_id] if args.client_id else []
    argv += ["--callback-port", args.callback_port] if args.callback_port else []
    scope, fields = add_request([*argv, args.name, *args.rest])
    _, workspace, home = _context()
    path = add_server(scope, fields, workspace, home)
    sys.stdout.write(f"added MCP server {fields['name']!r} to {path}\n")
    if scope == "project":
        sys.stdout.write(
            "note: a project's servers start only in a trusted folder (`reasonix trust`)\n"
        )
    return EXIT_OK


def add_request(argv: list[str]) -> tuple[Scope, dict[str, Any]]:
    """``[options] NAME URL`` or ``[options] NAME -- CMD ARGS...`` (what follows
    ``reasonix mcp add``, also typed in ``/mcp``) as (scope, the entry's fields).
    :class:`UsageError` naming what is wrong."""
    from reasonix_core.errors import UsageError
    from reasonix_core.mcp.declare import remote_fields, stdio_fields

    options, positional, command = _split_add_args(argv)
    if not positional:
        raise UsageError("no server name: NAME URL, or NAME -- CMD ARGS...")
    name, positional = positional[0], positional[1:]
    if not command and positional and not (len(positional) == 1 and "://" in positional[0]):
        # argparse drops a `--` that directly follows NAME: what is left is the command.
        positional, command = [], positional
    transport = (options.get("transport") or [""])[-1]
    headers, env = options.get("header", []), options.get("env", [])
    oauth = {k: (options.get(k) or [""])[-1] for k in ("client_id", "callback_port")}
    scope = (options.get("scope") or ["user"])[-1]
    if scope not in ("user", "project"):
        raise UsageError(f"--scope {scope!r}: use user or project")
    if command:
        if positional:
            raise UsageError(f"unexpected {positional[0]!r} before --")
        if transport or headers or oauth["client_id"] or oauth["callback_port"]:
            raise UsageError(
                "--transport, --header, --client-id and --callback-port are for a remote "
                "server (NAME URL)"
            )
        return scope, stdio_fields(name, command, env=env)
    if len(positional) != 1:
        raise UsageError("give either a URL or -- CMD ARGS... after the name")
    if env:
        raise UsageError("--env is for a local server (NAME -- CMD ARGS...)")
    return scope, remote_fields(
        name, positional[0], transport=transport or "http", headers=headers, **oauth
    )


def _split_add_args(argv: list[str]) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """``argv`` as (options, positionals, the command after ``--``)."""
    from reasonix_core.errors import UsageError

    options: dict[str, list[str]] = {}
    positional: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return options, positional, argv[i + 1 :]
        key, eq, value = token.partition("=")
        if key in _ADD_OPTIONS:
            if not eq:
                if i + 1 >= len(argv):
                    raise UsageError(f"{key} needs a value")
                i += 1
                value = argv[i]
            options.setdefault(key[2:].replace("-", "_"), []).append(value)
        elif token.startswith("-") and len(token) > 1:
            raise UsageError(f"unknown option {token!r} (a command goes after --)")
        else:
            positional.append(token)
        i += 1
    return options, positional, []


def _remove(args: argparse.Namespace) -> int:
    from reasonix_core.mcp.declare import remove_server

    _, workspace, home = _context()
    path = remove_server(args.name, args.scope, workspace, home)
    sys.stdout.write(f"removed MCP server {args.name!r} from {path}\n")
    return EXIT_OK


def _find(name: str, config: Config, workspace: Path, home: Path) -> McpServerConfig | None:
    from reasonix_core.mcp import setup_for

    setup = setup_for(config, workspace, home)
    return next((s for s in setup.servers if s.name == name), None)


def _unknown(name: str, workspace: Path, home: Path) -> int:
    from reasonix_core.mcp.declare import declared
    from reasonix_core.trust import review_project

    if declared(name, workspace, home) and review_project(workspace, home).needs_trust:
        return fail(
            f"MCP server {name!r} is declared by this project, which is not trusted; "
            "`reasonix trust` applies it"
        )
    return fail(f"no MCP server named {name!r} (see `reasonix mcp list --no-connect`)")


def _get(args: argparse.Namespace) -> int:
    from reasonix_core.mcp.tokens import TokenStore

    config, workspace, home = _context()
    server = _find(args.name, config, workspace, home)
    if server is None:
        return _unknown(args.name, workspace, home)
    lines = [f"{server.name}:", f"  source: {server.source}", f"  transport: {server.transport}"]
    if server.transport == "stdio":
        lines.append(f"  command: {' '.join([server.command, *server.args])}")
        if server.env:  # names only: values are often secrets
            lines.append(f"  env: {', '.join(sorted(server.env))}")
    else:
        lines.append(f"  url: {server.url}")
        if server.headers:
            lines.append(f"  headers: {', '.join(sorted(server.headers))}")
        if server.client_id:
            lines.append(f"  client_id: {server.client_id}")
        lines.append(f"  auth: {_login_state(TokenStore(home), server.url)}")
    lines.append(f"  enabled: {'yes' if server.enabled else 'no'}")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _login_state(store: TokenStore, url: str) -> str:
    import time

    if not store.logged_in(url):
        return "not logged in"
    expires = store.expires_at(url)
    if expires is None:
        return "logged in"
    left = expires - time.time()
    if left <= 0:
        return "logged in (token expired; refreshed at the next connection)"
    return f"logged in (token expires in {int(left // 60)} min)"


def _auth(args: argparse.Namespace) -> int:
    from reasonix_core.mcp.tokens import TokenStore

    config, workspace, home = _context()
    server = _find(args.name, config, workspace, home)
    if server is None:
        return _unknown(args.name, workspace, home)
    if server.transport == "stdio":
        return fail(f"MCP server {server.name!r} is a local command; only remote servers log in")
    store = TokenStore(home)
    if args.logout:
        if store.forget(server.url):
            sys.stdout.write(f"logged out of {server.name!r}: its tokens are forgotten\n")
        else:
            sys.stdout.write(f"{server.name!r} had no stored tokens\n")
        return EXIT_OK
    if not args.timeout > 0:
        return fail("--timeout must be a positive number of seconds")
    import anyio

    from reasonix_core.mcp.login import login

    def announce(url: str) -> None:
        sys.stderr.write(
            f"Opening the browser to log in to {server.name!r}. If it does not open, "
            f"visit:\n  {url}\n"
        )
        sys.stderr.flush()

    status = anyio.run(
        lambda: login(
            server, home, workspace=workspace, browser_timeout=args.timeout, announce=announce
        )
    )
    if status.phase != "ready":
        return fail(f"could not log in to {server.name!r}: {status.reason or status.phase}",
                    EXIT_FAILED)  # fmt: skip
    sys.stdout.write(f"logged in to {server.name!r} ({status.tools} tools)\n")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    import json

    import anyio

    from reasonix_core.mcp import make_host

    config, workspace, home = _context()
    host = make_host(config, workspace, home)

    async def collect() -> list:
        if args.no_connect:
            return host.status()
        async with host:
            return await host.wait_ready()

    statuses = anyio.run(collect)
    if args.mcp_json:
        sys.stdout.write(json.dumps([s.to_json() for s in statuses], ensure_ascii=False) + "\n")
        return EXIT_OK
    from reasonix_core.trust import review_project

    review = review_project(workspace, home)
    if review.needs_trust:
        sys.stdout.write(
            f"note: {review.folder} is not trusted: its project settings "
            f"({review.summary()}) are not applied; `reasonix trust` applies them\n"
        )
    if not statuses:
        sys.stdout.write(
            "No MCP servers configured (add [[mcp.servers]] to reasonix.toml or a .mcp.json).\n"
        )
        return EXIT_OK
    rows = [("NAME", "TRANSPORT", "STATE", "TOOLS", "PROMPTS", "RESOURCES", "RECONNECTS", "ERROR")]
    for s in statuses:
        error = f"{s.error_class}: {s.reason}" if s.error_class else s.reason
        rows.append(
            (
                s.name,
                s.transport,
                s.phase,
                str(s.tools),
                str(s.prompts),
                str(s.resources),
                str(s.reconnects),
                error or "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)]
        sys.stdout.write("  ".join([*cells, row[-1]]).rstrip() + "\n")
    for problem in host.problems:
        sys.stdout.write(f"\n{problem}")
    if host.problems:
        sys.stdout.write("\n")
    return EXIT_OK
