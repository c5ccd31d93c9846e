"""MCP servers for the agent: configuration, connections, deferred tools and ``mcp://`` resources.

Nothing here imports IPython; the Agent starts an ``McpManager`` on its first run, registers
``manager.scheme`` with its URL router, and closes the manager with the session. The MCP SDK
loads with the first server: ``ServerConnection`` and ``McpTool`` are imported on first use.
"""

from typing import TYPE_CHECKING, Any

from .config import McpConfig, ServerConfig, load_mcp_config, parse_server, parse_servers
from .errors import MCP_SERVER_DISCONNECTED, MCP_SERVER_UNAVAILABLE, MCP_TOOL_ERROR
from .manager import McpManager, McpNotice, ServerStatus
from .resources import McpScheme
from .store import McpConfigError, add_server, remove_server

if TYPE_CHECKING:
    from .connection import ServerConnection
    from .tools import McpTool

__all__ = [
    "MCP_SERVER_DISCONNECTED",
    "MCP_SERVER_UNAVAILABLE",
    "MCP_TOOL_ERROR",
    "McpConfig",
    "McpConfigError",
    "McpManager",
    "McpNotice",
    "McpScheme",
    "McpTool",
    "ServerConfig",
    "ServerConnection",
    "ServerStatus",
    "add_server",
    "load_mcp_config",
    "parse_server",
    "parse_servers",
    "remove_server",
]


def __getattr__(name: str) -> Any:
    if name == "ServerConnection":
        from .connection import ServerConnection  # noqa: PLC0415

        return ServerConnection
    if name == "McpTool":
        from .tools import McpTool  # noqa: PLC0415

        return McpTool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
