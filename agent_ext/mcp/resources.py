"""The ``mcp://`` scheme: MCP resources, resource templates and prompts for read_file.

Forms (the resource URI is written as the server gives it; percent-encode it only if it holds
characters a path cannot, such as spaces)::

    mcp://                          the servers, their state and tool counts
    mcp://<server>/                 the server's resources, resource templates and prompts
    mcp://<server>/<uri>            one resource, e.g. mcp://docs/file:///guide.md
    mcp://<server>/?prompts         the prompts with their arguments (listed, never run)
    mcp://<server>/?prompt=<name>   one prompt's description and arguments

Text is capped at 200,000 characters (read on with offset/limit), images at 5 MB; other binary
data is described, not dumped. Selectors are not peeled off (``:12`` may belong to a URI).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote

from agent_ext.core.errors import ErrorCode
from agent_ext.core.kinds import Tier
from agent_ext.core.result import ImagePart, Part, TextPart
from agent_ext.urls import ParsedURL, Resolved, URLError

from .content import blob_part, resource_url
from .errors import ConnectionLostError, ServerUnavailableError

if TYPE_CHECKING:
    import mcp_types as types

    from .connection import ServerConnection

MAX_TEXT_CHARS = 200_000
MAX_LISTED = 500
FORMS = ("mcp:// (servers), mcp://<server>/ (its resources), mcp://<server>/<uri> (one "
         "resource), mcp://<server>/?prompts (its prompts)")


class _Lines(Protocol):
    """The part of a read selector this scheme uses (line ranges from offset/limit)."""

    @property
    def has_lines(self) -> bool: ...

    def resolve(self, total_lines: int) -> list[tuple[int, int]]: ...


class McpScheme:
    """``mcp://`` for the URL router (see the module docstring)."""

    name = "mcp"
    read_only = True
    peel_selectors = False

    def __init__(self, connections: Callable[[], Mapping[str, ServerConnection]]) -> None:
        self._connections = connections
        self._known: dict[str, list[str]] = {}

    def tier_for(self, url: ParsedURL) -> Tier:
        return Tier.READ

    def locations(self, url: ParsedURL) -> list[str] | None:
        """The address itself, from which rules take the server it reads; a ``file://``
        resource also names the local file, so path rules apply to it as to the path."""
        rest = url.href.strip().split("://", 1)[-1]
        uri = unquote(rest.partition("/")[2])
        found = [url.href]
        if uri.lower().startswith("file://"):
            path = unquote(uri[len("file://"):])
            path = path if path.startswith("/") else "/" + path.partition("/")[2]
            found.append(path)
        return found

    async def resolve(self, url: ParsedURL, selector: Any) -> Resolved:
        if not url.hierarchical:
            raise URLError(ErrorCode.INVALID_TOOL_PARAMS,
                           f"{url.href!r} is not an mcp:// address; use {FORMS}.")
        rest = url.href.strip().split("://", 1)[1]
        server, _, tail = rest.partition("/")
        if not server:
            return Resolved(text=self._servers(), cacheable=False)
        conn = self._connection(unquote(server))
        if tail in ("", "?"):
            return Resolved(text=await self._index(conn), cacheable=False)
        if tail.startswith("?"):
            return Resolved(text=await self._query(conn, tail[1:]), cacheable=False)
        return await self._read(conn, tail, selector)

    def complete(self, prefix: str) -> list[str]:
        """Server names, then the resource URIs last listed for the server."""
        server, sep, tail = prefix.partition("/")
        if not sep:
            return [f"{n}/" for n in sorted(self._connections()) if n.startswith(server)]
        return [f"{server}/{u}" for u in self._known.get(server, []) if u.startswith(tail)]

    # -- listings -------------------------------------------------------------------------------

    def _connection(self, name: str) -> ServerConnection:
        conns = self._connections()
        if name not in conns:
            known = ", ".join(sorted(conns)) or "none are configured"
            raise URLError(ErrorCode.FILE_NOT_FOUND,
                           f"no MCP server named {name!r} (servers: {known}); list them with "
                           "mcp://")
        return conns[name]

    def _servers(self) -> str:
        conns = self._connections()
        if not conns:
            return ("No MCP servers are configured. Add them to .mcp.json (\"mcpServers\") or "
                    "with %agent mcp add.")
        lines = ["MCP servers (read mcp://<server>/ for a server's resources and prompts):"]
        for name, conn in sorted(conns.items()):
            state = conn.state + (f": {conn.reason}" if conn.reason else "")
            tools = f", {len(conn.tools)} tools" if conn.state == "connected" else ""
            lines.append(f"  {name}: {state}{tools} ({conn.config.describe()})")
        return "\n".join(lines)

    async def _index(self, conn: ServerConnection) -> str:
        caps = await self._capabilities(conn)
        lines = [f"MCP server {conn.name!r} ({conn.state}; {conn.config.describe()})"]
        if caps.resources is not None:
            resources = await self._all(conn, "resources")
            self._known[conn.name] = [r.uri for r in resources]
            lines.append(f"Resources ({len(resources)}):" if resources else "Resources: none")
            lines += [f"  {resource_url(conn.name, r.uri)}"
                      f"{_about(r.name, r.description, r.mime_type)}"
                      for r in resources[:MAX_LISTED]]
            templates = await self._all(conn, "templates")
            if templates:
                lines.append(f"Resource templates ({len(templates)}; fill in the {{...}} parts):")
                lines += [f"  {resource_url(conn.name, t.uri_template)}"
                          f"{_about(t.name, t.description, t.mime_type)}"
                          for t in templates[:MAX_LISTED]]
        else:
            lines.append("Resources: this server offers none")
        if caps.prompts is not None:
            prompts = await self._all(conn, "prompts")
            lines.append(f"Prompts: {len(prompts)} (mcp://{conn.name}/?prompts)")
        lines.append(f"Read a resource with read_file(\"mcp://{conn.name}/<uri>\").")
        return "\n".join(lines)

    async def _query(self, conn: ServerConnection, query: str) -> str:
        key, _, value = query.partition("=")
        if key == "prompts":
            prompts = await self._all(conn, "prompts")
            if not prompts:
                return f"MCP server {conn.name!r} offers no prompts."
            head = (f"Prompts of MCP server {conn.name!r} (listed, not run; * = required "
                    "argument):")
            return "\n".join([head, *(_prompt(p) for p in prompts)])
        if key == "prompt" and value:
            prompts = await self._all(conn, "prompts")
            found = next((p for p in prompts if p.name == unquote(value)), None)
            if found is None:
                raise URLError(ErrorCode.FILE_NOT_FOUND,
                               f"MCP server {conn.name!r} has no prompt {unquote(value)!r}; "
                               f"list them with mcp://{conn.name}/?prompts")
            return _prompt(found, detail=True)
        if key in ("resources", "templates"):
            return await self._index(conn)
        raise URLError(ErrorCode.INVALID_TOOL_PARAMS,
                       f"unknown query ?{query} in an mcp:// address; use {FORMS}.")

    async def _capabilities(self, conn: ServerConnection) -> types.ServerCapabilities:
        async def caps(client: Any) -> types.ServerCapabilities:
            found: types.ServerCapabilities = client.server_capabilities
            return found

        result: types.ServerCapabilities = await self._call(conn, caps)
        return result

    async def _all(self, conn: ServerConnection, what: str) -> list[Any]:
        """Every page of resources, templates or prompts (at most 20 pages)."""
        out: list[Any] = []
        cursor: str | None = None
        for _ in range(20):
            page = await self._call(conn, _lister(what, cursor))
            out += page[0]
            cursor = page[1]
            if not cursor:
                break
        return out

    async def _call(self, conn: ServerConnection, fn: Callable[[Any], Any]) -> Any:
        from mcp.shared.exceptions import MCPError  # noqa: PLC0415  (loaded with the server)

        try:
            return await conn.request(fn)
        except (ServerUnavailableError, ConnectionLostError) as exc:
            raise URLError(ErrorCode.READ_CONTENT_FAILURE, str(exc)) from None
        except MCPError as exc:
            raise URLError(ErrorCode.READ_CONTENT_FAILURE,
                           f"MCP server {conn.name!r} answered with an error: {exc.message}"
                           ) from None

    # -- reading --------------------------------------------------------------------------------

    async def _read(self, conn: ServerConnection, uri: str, selector: Any) -> Resolved:
        from mcp.shared.exceptions import MCPError  # noqa: PLC0415  (loaded with the server)

        candidates = list(dict.fromkeys([uri, unquote(uri)]))
        last: MCPError | None = None
        for candidate in candidates:
            try:
                result: types.ReadResourceResult = await conn.request(_reader(candidate))
            except (ServerUnavailableError, ConnectionLostError) as exc:
                raise URLError(ErrorCode.READ_CONTENT_FAILURE, str(exc)) from None
            except MCPError as exc:
                last = exc
                continue
            return _resolved(conn.name, result, selector)
        message = last.message if last is not None else "not found"
        raise URLError(ErrorCode.FILE_NOT_FOUND,
                       f"MCP server {conn.name!r} could not read {uri!r}: {message}. List its "
                       f"resources with mcp://{conn.name}/")


def _lister(what: str, cursor: str | None) -> Callable[[Any], Any]:
    async def run(client: Any) -> tuple[list[Any], str | None]:
        return await _list(client, what, cursor)

    return run


def _reader(uri: str) -> Callable[[Any], Any]:
    async def run(client: Any) -> types.ReadResourceResult:
        result: types.ReadResourceResult = await client.read_resource(uri)
        return result

    return run


async def _list(client: Any, what: str, cursor: str | None) -> tuple[list[Any], str | None]:
    if what == "resources":
        res = await client.list_resources(cursor=cursor)
        return list(res.resources), res.next_cursor
    if what == "templates":
        tpl = await client.list_resource_templates(cursor=cursor)
        return list(tpl.resource_templates), tpl.next_cursor
    prompts = await client.list_prompts(cursor=cursor)
    return list(prompts.prompts), prompts.next_cursor


def _about(name: str | None, description: str | None, mime: str | None) -> str:
    first = (description or "").strip().splitlines()
    text = ": ".join(b for b in (name, first[0] if first else "") if b)
    if mime:
        text += f" ({mime})"
    return f" — {text}" if text else ""


def _prompt(prompt: types.Prompt, *, detail: bool = False) -> str:
    args = ", ".join(f"{a.name}{'*' if a.required else ''}" for a in prompt.arguments or [])
    head = f"  {prompt.name}({args})"
    desc = (prompt.description or "").strip()
    if not detail:
        return head + (f" — {desc.splitlines()[0]}" if desc else "")
    lines = [f"Prompt {prompt.name!r}: {desc or '(no description)'}", "Arguments:"]
    lines += [f"  {a.name}{' (required)' if a.required else ''}: {a.description or ''}"
              for a in prompt.arguments or []] or ["  (none)"]
    return "\n".join(lines)


def _resolved(server: str, result: types.ReadResourceResult, selector: Any) -> Resolved:
    import mcp_types as types  # noqa: PLC0415  (loaded with the server)

    texts: list[str] = []
    parts: list[Part] = []
    for item in result.contents:
        if isinstance(item, types.TextResourceContents):
            texts.append(item.text)
            parts.append(TextPart(item.text))
        else:
            part = blob_part(item.blob, item.mime_type, str(item.uri), server)
            parts.append(part)
    if len(texts) == len(parts):
        return _text("\n\n".join(texts), selector)
    if any(isinstance(p, ImagePart) for p in parts) or len(parts) > 1:
        return Resolved(parts=tuple(parts), cacheable=False)
    only = parts[0]
    assert isinstance(only, TextPart)
    return _text(only.text, selector)


def _text(text: str, selector: _Lines | None) -> Resolved:
    notes: list[str] = []
    full = True
    if selector is not None and selector.has_lines:
        lines = text.splitlines()
        picked = [ln for start, end in selector.resolve(len(lines)) for ln in lines[start - 1:end]]
        full = len(picked) == len(lines)
        text = "\n".join(picked)
    if len(text) > MAX_TEXT_CHARS:
        shown = text[:MAX_TEXT_CHARS].count("\n") + 1
        notes.append(f"[truncated at {MAX_TEXT_CHARS} characters (line {shown}); read on with "
                     "offset and limit]")
        text = text[:MAX_TEXT_CHARS]
        full = False
    return Resolved(text=text, cacheable=False, full=full, notes=tuple(notes))
