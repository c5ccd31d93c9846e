"""The streamable HTTP test server on 127.0.0.1: refuses requests without the bearer token.

Usage: ``http_server.py PORT TOKEN [sse]``: streamable HTTP at /mcp, or the older SSE
transport at /sse with ``sse``.
"""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

server = MCPServer("remote")


@server.tool()
def remote_add(a: int, b: int) -> str:
    """Add two numbers on the remote server."""
    return str(a + b)


@server.resource("res://remote-readme", description="The remote readme")
def readme() -> str:
    return "remote readme text"


class BearerCheck:
    """Answers 401 unless the Authorization header carries the expected token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != self.expected:
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"missing or wrong token"})
            return
        await self.app(scope, receive, send)


def main() -> None:
    port, token = int(sys.argv[1]), sys.argv[2]
    inner = server.sse_app() if sys.argv[3:] == ["sse"] else server.streamable_http_app()
    app = BearerCheck(inner, token)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)


if __name__ == "__main__":
    main()
