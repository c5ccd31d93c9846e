"""MCP tools as deferred agent_ext tools, kept in step with the server's tool list.

Each server tool is registered with ``register_external`` as ``mcp__<server>__<tool>``: deferred
(the model sees its name and loads the schema with tool_search), asking for approval by default,
read-only and concurrency-safe only when the server marks it ``readOnlyHint``. Its input schema
is used as the server sent it. When the server's list changes, new tools are registered, gone
ones removed, and changed ones updated in place so that their reveal marks stay.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types

from agent_ext.core import (
    ConfirmationDetails,
    ExecControl,
    Kind,
    Permission,
    Registry,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.core.errors import ToolRegistrationError
from agent_ext.core.params import validate_json_schema

from .content import to_result
from .errors import (
    MCP_SERVER_DISCONNECTED,
    MCP_SERVER_UNAVAILABLE,
    MCP_TOOL_ERROR,
    ConnectionLostError,
    ServerUnavailableError,
)

if TYPE_CHECKING:
    from .connection import ServerConnection

#: MCP results are cut here first, then by the normal per-result and per-turn budgets.
MAX_OUTPUT_CHARS = 500_000
_SUMMARY_ARGS = 2_000
_PROGRESS_EVERY = 0.2


class McpTool(Tool[dict[str, Any]]):
    """One tool of an MCP server (see the module docstring)."""

    max_output_chars = MAX_OUTPUT_CHARS
    defer = True

    def __init__(self, connection: ServerConnection, spec: types.Tool) -> None:
        self.connection = connection
        self.server = connection.name
        self.name = spec.name
        self.update(spec)

    def update(self, spec: types.Tool) -> None:
        """Take the server's (possibly changed) definition; the registered name stays."""
        self.spec = spec
        self.mcp_name = spec.name
        title = spec.title or (spec.annotations.title if spec.annotations else None) or ""
        self.description = (spec.description or title
                            or f"{spec.name} (a tool of MCP server {self.server!r})")
        self.search_hint = " ".join(w for w in (self.connection.name, title) if w)
        read_only = bool(spec.annotations and spec.annotations.read_only_hint)
        self.read_only = read_only
        self.kind = Kind.READ if read_only else Kind.OTHER
        schema = dict(spec.input_schema or {})
        if "type" not in schema:
            schema["type"] = "object"
        self._schema = schema

    def parameters_schema(self) -> dict[str, Any]:
        return self._schema

    def validate_params(self, raw: dict[str, Any]) -> dict[str, Any]:
        return validate_json_schema(self._schema, raw, max_string_chars=self.max_string_chars)

    def invocation(self, params: dict[str, Any], ctx: ToolContext) -> McpInvocation:
        return McpInvocation(self, params, ctx)


class McpInvocation(ToolInvocation[dict[str, Any]]):
    """One call of an MCP tool: asks by default, streams progress, maps the content."""

    tool: McpTool

    def description(self) -> str:
        return f"{self.tool.name}({_short(self.params, 120)})"

    def default_permission(self) -> Permission:
        return Permission.ASK

    async def confirmation_details(self) -> ConfirmationDetails:
        tool = self.tool
        args = _short(self.params, _SUMMARY_ARGS)
        return ConfirmationDetails(
            kind="mcp", title=f"Allow {tool.name}?",
            summary=f"MCP server {tool.server!r}, tool {tool.mcp_name!r}: {args}",
            tool_name=tool.name,
            extra={"server": tool.server, "tool": tool.mcp_name, "arguments": self.params,
                   "read_only": tool.read_only})

    async def execute(self, control: ExecControl) -> ToolResult:
        tool = self.tool
        progress = _Progress(control)
        try:
            result = await tool.connection.request(
                lambda client: client.call_tool(tool.mcp_name, self.params,
                                                progress_callback=progress))
        except ServerUnavailableError as exc:
            return ToolResult.fail(MCP_SERVER_UNAVAILABLE, str(exc))
        except ConnectionLostError as exc:
            then = "; the next call restarts the server." if exc.restarts else "."
            return ToolResult.fail(MCP_SERVER_DISCONNECTED,
                                   f"{exc}. The call may or may not have taken effect{then}")
        except Exception as exc:  # noqa: BLE001  a server's error answer goes to the model
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            return ToolResult.fail(MCP_TOOL_ERROR, f"{tool.mcp_name} (MCP server "
                                                   f"{tool.server!r}) failed: {message}")
        return to_result(result, tool.server or "", tool.mcp_name)


class _Progress:
    """Progress notifications as live output lines, at most one per 0.2 s (and the last)."""

    def __init__(self, control: ExecControl) -> None:
        self.control = control
        self.last = 0.0

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        now = time.monotonic()
        final = total is not None and progress >= total
        if now - self.last < _PROGRESS_EVERY and not final:
            return
        self.last = now
        amount = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        self.control.emit(f"{message} ({amount})\n" if message else f"progress {amount}\n")


@dataclass
class ToolSync:
    """What one sync changed, by registered name."""

    added: list[str]
    removed: list[str]
    updated: list[str]
    skipped: list[str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.updated)


def sync_tools(registry: Registry, connection: ServerConnection,
               current: dict[str, McpTool]) -> ToolSync:
    """Make the registry hold exactly ``connection.tools``; ``current`` maps MCP name → tool."""
    out = ToolSync([], [], [], [])
    listed = {spec.name: spec for spec in connection.tools}
    for mcp_name in [n for n in current if n not in listed]:
        tool = current.pop(mcp_name)
        if tool.name in registry:
            registry.unregister(tool.name)
        out.removed.append(tool.name)
    for mcp_name, spec in listed.items():
        existing = current.get(mcp_name)
        if existing is not None and existing.name in registry:
            if existing.spec != spec:
                existing.update(spec)
                out.updated.append(existing.name)
            continue
        tool = McpTool(connection, spec)
        try:
            current[mcp_name] = tool
            out.added.append(registry.register_external(connection.name, tool))
        except ToolRegistrationError as exc:
            current.pop(mcp_name, None)
            out.skipped.append(f"{mcp_name}: {exc}")
    if out.updated:
        registry.refresh()
    return out


def _short(value: object, limit: int) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"

