"""Error codes of MCP results, and exceptions turned into one readable reason.

The SDK raises from inside task groups, so a refused connection arrives as an exception group
around an ``httpx2.ConnectError``; ``reason`` digs out the cause that says what happened.
"""

from __future__ import annotations

import re
import sys

#: A tool result the server marked ``isError``, or an error the server answered a call with.
MCP_TOOL_ERROR = "mcp_tool_error"
#: The server is not running (did not start, stopped and could not be restarted, or removed).
MCP_SERVER_UNAVAILABLE = "mcp_server_unavailable"
#: The server stopped while the call was running; the next call restarts it.
MCP_SERVER_DISCONNECTED = "mcp_server_disconnected"
_STATUS = re.compile(r"\b[1-5]\d\d(?: [A-Za-z ]+)?\b")


class ServerUnavailableError(RuntimeError):
    """A server cannot take calls now; the message says why and what to do."""


class ConnectionLostError(RuntimeError):
    """The server went away while a request was in flight; ``restarts``: the next call may."""

    def __init__(self, message: str, *, restarts: bool = True) -> None:
        super().__init__(message)
        self.restarts = restarts


def _sdk_error(exc: BaseException) -> tuple[bool, bool]:
    """(is an error the MCP SDK raised, is its "connection closed" code).

    Only a loaded SDK raises its own errors, so this imports nothing.
    """
    module = sys.modules.get("mcp.shared.exceptions")
    if module is None or not isinstance(exc, module.MCPError):
        return False, False
    from mcp_types import CONNECTION_CLOSED  # noqa: PLC0415

    return True, exc.code == CONNECTION_CLOSED


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or ``[exc]``."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, tuple) and inner:
        return [leaf for e in inner if isinstance(e, BaseException) for leaf in leaves(e)]
    return [exc]


def lost_connection(exc: BaseException) -> bool:
    """Whether ``exc`` means the connection itself failed (not a server-side error answer)."""
    for leaf in leaves(exc):
        sdk, closed = _sdk_error(leaf)
        if sdk:
            if closed:
                return True
            continue
        if isinstance(leaf, ConnectionLostError | OSError | EOFError):
            return True
        module = type(leaf).__module__
        if module.startswith(("httpx", "anyio", "httpcore")):
            return True
    return False


def reason(exc: BaseException, http_error: str | None = None) -> str:
    """One line saying what went wrong, from the most telling exception inside ``exc``.

    ``http_error`` is the last HTTP error status seen on the connection, if any.
    """
    found = leaves(exc)
    best = next((e for e in found if not _generic(e)), found[0])
    sdk, closed = _sdk_error(best)
    if http_error and (sdk or type(best).__name__ == "HTTPStatusError"):
        return f"the server answered {http_error}{_hint(http_error)}"
    if sdk:
        if closed:
            return "the connection closed"
        return f"the server answered with an error: {getattr(best, 'message', best)}"
    text = str(best).strip()
    name = type(best).__name__
    if name in ("ConnectError", "ConnectionRefusedError"):
        return f"could not connect ({text or 'connection refused'})"
    if name == "HTTPStatusError":
        status = _STATUS.search(text)
        code = f"HTTP {status.group(0)}" if status else "an HTTP error"
        return f"the server answered {code}{_hint(code)}"
    if isinstance(best, TimeoutError) or "Timeout" in name:
        return "timed out"
    return f"{name}: {text}" if text and name not in ("RuntimeError", "ServerStartError") else (
        text or name)


def _generic(exc: BaseException) -> bool:
    return type(exc).__name__ in ("CancelledError", "ClosedResourceError", "EndOfStream",
                                  "BrokenResourceError", "GeneratorExit")


def _hint(status: str) -> str:
    if " 401" in status or " 403" in status:
        return " (check the headers, e.g. the Authorization token)"
    if " 404" in status:
        return " (check the url's path, often /mcp or /sse)"
    return ""
