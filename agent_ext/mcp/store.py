"""Adding and removing servers in the project's ``.mcp.json``, atomically, keeping other keys.

``%agent mcp add`` and ``remove`` persist through here so that the next session starts the same
servers. The file is replaced in one rename (a crash leaves the old file), keeps its mode, and
keeps every key and server it had that the change does not touch. Entries are stored as given:
write secrets as ``${VAR}`` so that the file can be shared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_ext.fs.atomic import atomic_write
from agent_ext.settings import MCP_JSON

from .config import EntryError, parse_server


class McpConfigError(ValueError):
    """The change cannot be made; the message says what to fix."""


def add_server(cwd: str | Path, name: str, entry: Mapping[str, Any], *,
               replace: bool = False) -> Path:
    """Add (or with ``replace`` overwrite) server ``name`` in ``<cwd>/.mcp.json``."""
    path = Path(cwd).expanduser().absolute() / MCP_JSON
    try:
        parse_server(name, dict(entry), source=path, require_vars=False)
    except EntryError as exc:
        raise McpConfigError(f"MCP server {name!r} {exc}; nothing was written.") from None
    data = _read(path)
    servers = data.setdefault("mcpServers", {})
    if name in servers and not replace:
        raise McpConfigError(f"{path} already has an MCP server named {name!r}; remove it first "
                             "or pass replace=True.")
    servers[name] = dict(entry)
    _write(path, data)
    return path


def remove_server(cwd: str | Path, name: str) -> bool:
    """Remove server ``name`` from ``<cwd>/.mcp.json``; whether it was there."""
    path = Path(cwd).expanduser().absolute() / MCP_JSON
    if not path.exists():
        return False
    data = _read(path)
    servers = data.get("mcpServers", {})
    if name not in servers:
        return False
    del servers[name]
    _write(path, data)
    return True


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8-sig")
        data = json.loads(text) if text.strip() else {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise McpConfigError(f"{path} cannot be read ({exc}); fix it first, nothing was "
                             "written.") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise McpConfigError(f"{path} must be a JSON object whose \"mcpServers\" is an object; "
                             "fix it first, nothing was written.")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    """Written atomically (temp file, fsync, rename), keeping the old file's permission bits."""
    atomic_write(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
