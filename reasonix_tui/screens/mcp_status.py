"""The ``/mcp`` status screen: one row per server; refresh, reconnect, add,
remove and log-in keys (``/mcp add …``, ``/mcp remove NAME``, ``/mcp auth NAME``
do the same from the composer).

Adding and removing edit the declaring file through the core
(:mod:`reasonix_core.mcp.declare`) and take effect with the next session; a
login runs the same flow as ``reasonix mcp auth`` (:mod:`reasonix_core.mcp.login`),
then reconnects the server so this session uses the new token.
"""

from __future__ import annotations

import shlex
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static

from reasonix_tui.screens.overlay import Overlay
from reasonix_tui.services import AppServices

COLUMNS = ("server", "transport", "state", "tools", "prompts", "resources", "reconnects", "error")
ADD_HINT = "NAME URL  or  NAME -- CMD ARGS  (--scope project, --header K:V, --env K=V)"
EMPTY = (
    "No MCP servers configured.\n"
    "Press a to add one (or `reasonix mcp add` in a shell); it starts with the next session."
)


class McpStatusScreen(Overlay[None]):
    DEFAULT_CSS = """
    McpStatusScreen {
        & DataTable { height: auto; max-height: 16; background: $surface; }
        & #empty { color: $text-muted; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh_status", "Refresh", show=False),
        Binding("c", "reconnect", "Reconnect", show=False),
        Binding("a", "add", "Add", show=False),
        Binding("d", "remove", "Remove", show=False),
        Binding("l", "login", "Log in", show=False),
        Binding("escape,q", "close", "Close", show=False),
    ]

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        self.services = services

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("MCP servers", id="title")
            table: DataTable[str] = DataTable(cursor_type="row", zebra_stripes=False)
            table.add_columns(*COLUMNS)
            yield table
            yield Static(EMPTY, id="empty", markup=False)
            add = Input(placeholder=ADD_HINT, id="add")
            add.display = False
            yield add
            yield Static(
                "r refresh · c reconnect · a add · d remove · l log in · Esc close", classes="hint"
            )

    def on_mount(self) -> None:
        self.action_refresh_status()

    def action_refresh_status(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        servers = self.services.mcp_status()
        for server in servers:
            table.add_row(
                server.name,
                server.transport,
                server.state,
                str(server.tools),
                str(server.prompts),
                str(server.resources),
                str(server.reconnects),
                server.error_class or "-",
                key=server.name,
            )
        table.display = bool(servers)
        self.query_one("#empty").display = not servers
        if servers:
            table.focus()

    def action_reconnect(self) -> None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        if row_key.value is not None:
            self.services.reconnect_mcp(row_key.value)
            self.notify(f"Reconnecting {row_key.value}…")
            self.action_refresh_status()

    def action_close(self) -> None:
        add = self.query_one("#add", Input)
        if add.display:  # Esc closes the add line first
            add.display = False
            self.query_one(DataTable).focus()
            return
        self.dismiss(None)

    # -- add / remove / log in ----------------------------------------------------

    def _selected(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return row_key.value

    def action_add(self) -> None:
        add = self.query_one("#add", Input)
        add.display = True
        add.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "add":
            return
        event.stop()
        if self.add_server(event.value):
            event.input.value = ""
            event.input.display = False
            self.query_one(DataTable).focus()

    def add_server(self, line: str) -> bool:
        """Declare a server from what follows ``reasonix mcp add``; False (and a
        notice saying why) when the line or the file is wrong."""
        from reasonix_core.errors import ReasonixError
        from reasonix_core.mcp.declare import add_server
        from reasonix_tui.cli_mcp import add_request

        try:
            scope, fields = add_request(shlex.split(line))
            path = add_server(scope, fields, self.services.workspace, self.services.config_home)
        except (ReasonixError, ValueError) as exc:
            self.notify(str(exc), severity="error")
            return False
        self.notify(f"Added {fields['name']} to {path}; it starts with the next session.")
        return True

    def action_remove(self) -> None:
        name = self._selected()
        if name is not None:
            self.remove_server(name)

    def remove_server(self, name: str) -> bool:
        from reasonix_core.errors import ReasonixError
        from reasonix_core.mcp.declare import remove_server

        try:
            path = remove_server(name, None, self.services.workspace, self.services.config_home)
        except ReasonixError as exc:
            self.notify(str(exc), severity="error")
            return False
        self.notify(f"Removed {name} from {path}; it stops with the next session.")
        return True

    def action_login(self) -> None:
        name = self._selected()
        if name is not None:
            self.run_worker(self.authenticate(name), exclusive=True, group="mcp-login")

    async def authenticate(self, name: str) -> bool:
        """Log in to server ``name`` (browser, loopback redirect), then reconnect it."""
        from reasonix_core.mcp.config import load_mcp_setup
        from reasonix_core.mcp.login import login

        workspace, home = self.services.workspace, self.services.config_home
        server = next((s for s in load_mcp_setup(workspace, home).servers if s.name == name), None)
        if server is None or server.transport == "stdio":
            why = "is not declared here" if server is None else "is a local command"
            self.notify(f"MCP server {name} {why}; only remote servers log in.", severity="error")
            return False

        def announce(url: str) -> None:
            self.notify(f"Log in to {name} in your browser. If it did not open: {url}", timeout=60)

        status = await login(server, home, workspace=workspace, announce=announce)
        if status.phase != "ready":
            self.notify(f"Could not log in to {name}: {status.reason}", severity="error")
            return False
        self.services.reconnect_mcp(name)
        self.notify(f"Logged in to {name}.")
        self.action_refresh_status()
        return True
