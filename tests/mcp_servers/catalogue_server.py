"""A stdio test server whose tools come from a catalogue file, padded with synthetic tools.

Usage: ``catalogue_server.py CATALOGUE SERVER TOTAL``: the catalogue's tools of SERVER (raw
JSON schemas, read-only hints kept), then synthetic ones up to TOTAL tools.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

_VERBS = ("get", "list", "create", "update", "delete", "search", "export", "archive", "sync",
          "share")
_NOUNS = ("record", "report", "ticket", "dataset", "job", "alert", "invoice", "event", "team",
          "label", "comment", "webhook")


def tools_for(catalogue: Path, server: str, total: int) -> list[types.Tool]:
    entries = [e for e in json.loads(catalogue.read_text()) if e["server"] == server][:total]
    tools = [types.Tool(
        name=e["name"], description=e["description"] or e["name"],
        input_schema=e["input_schema"] or {"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=bool(e.get("read_only"))))
        for e in entries]
    taken = {t.name for t in tools}
    names = [f"{verb}_{noun}" for noun in _NOUNS for verb in _VERBS
             if f"{verb}_{noun}" not in taken]
    for name in names[:total - len(tools)]:
        verb, noun = name.split("_")
        tools.append(types.Tool(
            name=name, description=f"{verb.capitalize()} a {noun} on {server} (synthetic): "
            "takes the record id and returns a short status line.",
            input_schema={"type": "object", "properties": {
                "record_id": {"type": "string", "description": "The record to process"},
                "dry_run": {"type": "boolean", "description": "Only report what would happen"}},
                "required": ["record_id"]}))
    return tools


def main() -> None:
    catalogue, name, total = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    tools = tools_for(catalogue, name, total)

    async def list_tools(ctx: ServerRequestContext[Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=f"called {params.name}")])

    server: Server[Any] = Server(name, on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
