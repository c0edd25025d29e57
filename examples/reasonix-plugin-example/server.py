"""reasonix-plugin-example: the template for writing a Reasonix plugin.

A Reasonix plugin is an MCP server. This one speaks MCP over stdio using the
official ``mcp`` SDK and offers:

- tools ``echo`` and ``wordcount`` (both marked read-only, so Reasonix may run
  them in parallel and under read-only permission paths);
- a prompt ``review``, which Reasonix shows as the slash command
  ``/mcp__example__review <path> [focus]``;
- a resource ``style://guide``, which a message can pull in with
  ``@example:style://guide``.

Declare it in ``reasonix.toml`` (see README.md next to this file)::

    [[mcp.servers]]
    name = "example"
    command = "python"
    args = ["examples/reasonix-plugin-example/server.py"]

Anything the server prints to stderr goes to ``~/.reasonix/logs/mcp-example.log``;
stdout belongs to the protocol, so never ``print()`` there.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer(
    "reasonix-plugin-example",
    version="1.0.0",
    instructions="Small text utilities and this project's style guide.",
)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

STYLE_GUIDE = """\
# Style guide

- Names say what a thing is; functions say what they do.
- Comments explain why, not what.
- Keep functions short; split a module before it passes ~400 lines.
- Errors a user can act on name the file, the key and the fix.
"""


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the text unchanged. Useful to check that the plugin is reachable."""
    return text


@server.tool(annotations=READ_ONLY)
def wordcount(text: str) -> str:
    """Count the lines, words and characters of a text."""
    lines = len(text.splitlines())
    words = len(text.split())
    return f"{words} words, {lines} lines, {len(text)} characters"


@server.prompt()
def review(path: str, focus: str = "") -> str:
    """Ask for a careful review of one file against the project's style guide."""
    extra = f" Pay particular attention to {focus}." if focus else ""
    return (
        f"Review {path} for correctness first and style second, following the style "
        f"guide (@example:style://guide).{extra} List concrete problems with line "
        "numbers and a suggested fix for each; say so plainly if you find none."
    )


@server.resource("style://guide", name="style-guide", mime_type="text/markdown")
def style_guide() -> str:
    """The project's style guide."""
    return STYLE_GUIDE


if __name__ == "__main__":
    server.run("stdio")
