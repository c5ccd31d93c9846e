"""The stdio test server: text, image, read-only, slow (progress), crashing and list-changing
tools, resources (text, image, binary, large, a template) and a prompt.

Options: ``--spawn-child`` starts a long-lived child process (its pid is the ``child_pid``
tool's answer) so tests can check that the whole tree dies; ``--hang`` never answers;
``--fail-if PATH`` exits at start-up while PATH exists (a server that cannot be restarted).
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
import mcp_types as types
from images import png
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("demo", instructions="A test server.")
CHILDREN: list[subprocess.Popen[bytes]] = []


@server.tool()
def echo(text: str) -> str:
    """Echo the text back, prefixed with 'echo: '."""
    return f"echo: {text}"


@server.tool(title="Red square")
def red_square() -> types.CallToolResult:
    """Draw a small red square and return it as a PNG image with a caption."""
    return types.CallToolResult(content=[
        types.TextContent(text="a red square"),
        types.ImageContent(data=base64.b64encode(png()).decode(), mime_type="image/png")])


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def lookup_weather(city: str) -> str:
    """Look up the weather forecast for a city (read-only)."""
    return f"sunny in {city}"


@server.tool()
async def slow_count(steps: int, ctx: Context) -> str:
    """Count slowly to `steps`, reporting progress on the way."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await anyio.sleep(0.05)
    return f"counted to {steps}"


@server.tool()
async def wait_forever() -> str:
    """Never return (for cancellation tests)."""
    await anyio.sleep(3600)
    return "unreachable"


@server.tool()
def crash() -> str:
    """Crash the server process in the middle of the call."""
    print("crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def fail() -> str:
    """Fail with an error the model should see."""
    raise ToolError("the widget is out of stock")


@server.tool()
def structured() -> types.CallToolResult:
    """Return structured content only."""
    return types.CallToolResult(content=[], structured_content={"count": 3, "ok": True})


@server.tool()
def mixed() -> types.CallToolResult:
    """Return every kind of content block."""
    blob = base64.b64encode(bytes(range(256))).decode()
    return types.CallToolResult(content=[
        types.TextContent(text="mixed results"),
        types.AudioContent(data=base64.b64encode(b"RIFF....").decode(), mime_type="audio/wav"),
        types.EmbeddedResource(resource=types.TextResourceContents(
            uri="res://notes", text="embedded notes", mime_type="text/plain")),
        types.EmbeddedResource(resource=types.BlobResourceContents(
            uri="res://data.bin", blob=blob, mime_type="application/octet-stream")),
        types.ResourceLink(uri="res://greeting", name="greeting"),
    ])


@server.tool()
def child_pid() -> str:
    """The pid of the child process this server started (0 if none)."""
    return str(CHILDREN[0].pid if CHILDREN else 0)


@server.tool()
def gone_soon() -> str:
    """A tool that change_tools removes."""
    return "still here"


@server.tool()
async def change_tools(ctx: Context) -> str:
    """Add the tool added_later, remove gone_soon, and announce the change."""
    def added_later(x: int) -> str:
        """A tool added while the server runs."""
        return f"added {x}"

    server.add_tool(added_later)
    server.remove_tool("gone_soon")
    await ctx.notify_tools_changed()
    if ctx.protocol_version is not None and not ctx.protocol_version.startswith("2026"):
        await ctx.session.send_tool_list_changed()
    return "changed"


@server.resource("res://greeting", description="A friendly greeting")
def greeting() -> str:
    return "Hello from the demo server"


@server.resource("res://numbers", mime_type="text/plain", description="Lines 1 to 50")
def numbers() -> str:
    return "\n".join(f"line {n}" for n in range(1, 51))


@server.resource("res://big.txt", mime_type="text/plain", description="Large text")
def big() -> str:
    return "x" * 300_000


@server.resource("res://logo.png", mime_type="image/png", description="The logo")
def logo() -> bytes:
    return png(8, 8, (0, 120, 255))


@server.resource("res://data.bin", mime_type="application/octet-stream")
def data() -> bytes:
    return bytes(range(256)) * 4


@server.resource("res://users/{user_id}", description="A user's profile")
def user(user_id: str) -> str:
    return f"user {user_id}"


@server.prompt(description="Summarize a text in a given style")
def summarize(text: str, style: str = "short") -> str:
    return f"Summarize in a {style} style: {text}"


def main() -> None:
    if "--hang" in sys.argv:
        time.sleep(3600)
    if "--fail-if" in sys.argv:
        marker = Path(sys.argv[sys.argv.index("--fail-if") + 1])
        if marker.exists():
            print("refusing to start: marker file present", file=sys.stderr)
            sys.exit(2)
    if "--spawn-child" in sys.argv:
        CHILDREN.append(subprocess.Popen([sys.executable, "-c",
                                          "import time; time.sleep(3600)"]))
    server.run()


if __name__ == "__main__":
    main()
