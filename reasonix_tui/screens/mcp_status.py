"""The ``/mcp`` status screen: one row per server; refresh and reconnect keys."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from reasonix_tui.screens.overlay import Overlay
from reasonix_tui.services import AppServices

COLUMNS = ("server", "transport", "state", "tools", "prompts", "resources", "reconnects", "error")
EMPTY = (
    "No MCP servers configured.\n"
    "Add one under [mcp.servers.<name>] in reasonix.toml, then reopen /mcp."
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
            yield Static("r refresh · c reconnect selected · Esc close", classes="hint")

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
        self.dismiss(None)
