"""MCP server entries: the ``mcpServers`` object of ``.mcp.json``, the shape MCP clients share.

Entries come from ``<cwd>/.mcp.json`` and from ``mcpServers`` in the settings files (project
local, project, user); for the same name the project wins (order below). Each entry is checked on
its own: a malformed one becomes a problem sentence naming the file, line and server, and the
others still load. Transports: stdio (``command``, ``args``, ``env``, ``cwd``), streamable HTTP
(``url``, ``headers``; ``"type": "http"`` or a plain ``url``) and the older SSE (``"type": "sse"``,
or a ``url`` ending in ``/sse``). Optional: ``timeout`` (start-up seconds), ``disabled``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_ext.settings import MCP_JSON, Settings, SettingsFile, load_settings, read_settings_file

from .interpolate import Masker, expand

Transport = Literal["stdio", "http", "sse"]
_TYPES: dict[str, Transport] = {
    "stdio": "stdio", "http": "http", "streamable-http": "http", "streamable_http": "http",
    "streamablehttp": "http", "sse": "sse"}


@dataclass(frozen=True, eq=False)
class ServerConfig:
    """One server to start, with its variables already substituted. Its repr masks secrets."""

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Seconds to wait for the server to start and list its tools (None: the manager's default).
    timeout: float | None = None
    source: Path | None = None
    masker: Masker = field(default_factory=Masker)

    @classmethod
    def stdio(cls, name: str, command: str, args: tuple[str, ...] | list[str] = (), *,
              env: Mapping[str, str] | None = None, cwd: str | None = None,
              timeout: float | None = None) -> ServerConfig:
        """A stdio server from Python; ``env`` values are treated as secrets."""
        env = dict(env or {})
        return cls(name, "stdio", command=command, args=tuple(args), env=env, cwd=cwd,
                   timeout=timeout, masker=Masker(env.values()))

    @classmethod
    def http(cls, name: str, url: str, *, headers: Mapping[str, str] | None = None,
             sse: bool = False, timeout: float | None = None) -> ServerConfig:
        """An HTTP server from Python; header values are treated as secrets."""
        headers = dict(headers or {})
        return cls(name, "sse" if sse else "http", url=url, headers=headers, timeout=timeout,
                   masker=Masker(headers.values()))

    def mask(self, text: str) -> str:
        return self.masker(text)

    @property
    def target(self) -> str:
        """The command line or URL, secrets masked."""
        if self.transport == "stdio":
            return self.mask(" ".join([self.command, *self.args]))
        return self.mask(self.url)

    def describe(self) -> str:
        """``stdio: npx -y pkg (env: TOKEN)`` / ``http: https://...``, secrets masked."""
        extra = [f"env: {', '.join(sorted(self.env))}"] if self.env else []
        extra += [f"headers: {', '.join(sorted(self.headers))}"] if self.headers else []
        tail = f" ({'; '.join(extra)})" if extra else ""
        return f"{self.transport}: {self.target}{tail}"

    @property
    def origin(self) -> str:
        """Where the entry comes from, for messages: a file path, or "code"."""
        return str(self.source) if self.source is not None else "code"

    def __repr__(self) -> str:
        return f"ServerConfig({self.name!r}, {self.describe()!r}, source={self.origin!r})"


@dataclass(frozen=True)
class McpConfig:
    """The servers found for a project: usable ones, disabled names and problems."""

    servers: dict[str, ServerConfig]
    problems: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()
    searched: tuple[Path, ...] = ()


class EntryError(ValueError):
    """A malformed server entry; the message says what to fix."""


def parse_server(name: str, entry: object, *, source: Path | None = None,
                 environ: Mapping[str, str] | None = None, base_dir: Path | None = None,
                 require_vars: bool = True) -> ServerConfig:
    """One entry as a ServerConfig. Raises EntryError with what is wrong (no file, no name)."""
    env_in = os.environ if environ is None else environ
    if not name.strip():
        raise EntryError("has an empty name; give it a name such as \"docs\"")
    if not isinstance(entry, dict):
        raise EntryError("must be an object with \"command\" or \"url\"")
    reader = _Reader(entry, env_in, require_vars)
    transport = _transport(entry)
    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or timeout <= 0):
        raise EntryError("\"timeout\" must be a number of seconds above 0")
    seconds = float(timeout) if timeout is not None else None
    if transport == "stdio":
        command = reader.text("command", required=True)
        args = tuple(reader.texts("args"))
        env = reader.mapping("env")
        cwd = reader.text("cwd") or None
        if cwd is not None and base_dir is not None and not Path(cwd).expanduser().is_absolute():
            cwd = str(base_dir / cwd)
        return ServerConfig(name, "stdio", command=command, args=args, env=env, cwd=cwd,
                            timeout=seconds, source=source,
                            masker=Masker([*reader.secrets, *env.values()]))
    url = reader.text("url", required=True)
    if not url.lower().startswith(("http://", "https://")):
        raise EntryError(f"has url {Masker(reader.secrets)(url)!r}; it must start with "
                         "http:// or https://")
    headers = reader.mapping("headers")
    return ServerConfig(name, transport, url=url, headers=headers, timeout=seconds,
                        source=source, masker=Masker([*reader.secrets, *headers.values()]))


def _transport(entry: dict[str, Any]) -> Transport:
    kind = entry.get("type", entry.get("transport"))
    if kind is not None:
        if not isinstance(kind, str) or kind.strip().lower() not in _TYPES:
            raise EntryError(f"has type {kind!r}; use \"stdio\", \"http\" or \"sse\"")
        return _TYPES[kind.strip().lower()]
    if "command" in entry:
        return "stdio"
    url = entry.get("url")
    if isinstance(url, str):
        return "sse" if url.rstrip("/").lower().endswith("/sse") else "http"
    raise EntryError("has neither \"command\" (a stdio server) nor \"url\" (an HTTP server)")


class _Reader:
    """Typed, interpolated access to an entry's fields; collects the substituted secrets."""

    def __init__(self, entry: dict[str, Any], environ: Mapping[str, str],
                 require_vars: bool) -> None:
        self.entry = entry
        self.environ = environ
        self.require_vars = require_vars
        self.secrets: set[str] = set()

    def expand(self, value: str, where: str) -> str:
        done = expand(value, self.environ)
        if done.missing and self.require_vars:
            var = done.missing[0]
            raise EntryError(f"uses ${{{var}}} in {where}, which is not set; set it in the "
                             f"environment (or write ${{{var}:-default}}) and reload")
        self.secrets |= done.secrets
        return done.text

    def text(self, key: str, *, required: bool = False) -> str:
        value = self.entry.get(key)
        if value is None:
            if required:
                raise EntryError(f"has no \"{key}\"")
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            raise EntryError(f"\"{key}\" must be a non-empty string")
        return self.expand(value, f"\"{key}\"")

    def texts(self, key: str) -> list[str]:
        value = self.entry.get(key, [])
        if not isinstance(value, list) or not all(_scalar(v) for v in value):
            raise EntryError(f"\"{key}\" must be a list of strings")
        return [self.expand(_as_text(v), f"\"{key}\"") for v in value]

    def mapping(self, key: str) -> dict[str, str]:
        value = self.entry.get(key, {})
        if not isinstance(value, dict) or not all(_scalar(v) for v in value.values()):
            raise EntryError(f"\"{key}\" must be an object of string values")
        return {str(k): self.expand(_as_text(v), f"\"{key}.{k}\"") for k, v in value.items()}


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool)


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_servers(servers: Mapping[str, Any], *, source: Path | None = None,
                  environ: Mapping[str, str] | None = None, base_dir: Path | None = None,
                  line_of: Callable[[str], int | None] | None = None,
                  ) -> tuple[dict[str, ServerConfig | str | None], list[str]]:
    """Entries by name: a ServerConfig, a problem sentence, or None when disabled."""
    out: dict[str, ServerConfig | str | None] = {}
    for name, entry in servers.items():
        if isinstance(entry, dict) and entry.get("disabled") is True:
            out[name] = None
            continue
        try:
            out[name] = parse_server(name, entry, source=source, environ=environ,
                                     base_dir=base_dir)
        except EntryError as exc:
            line = line_of(name) if line_of is not None else None
            where = (f"{source}:{line}" if line else str(source)) if source else "code"
            out[name] = f"{where}: MCP server {name!r} {exc}; it is not started."
    return out, [p for p in out.values() if isinstance(p, str)]


def load_mcp_config(cwd: str | Path = ".", *,
                    environ: Mapping[str, str] | None = None,
                    settings: Settings | None = None,
                    mcp_json: SettingsFile | Literal["read"] | None = "read") -> McpConfig:
    """Every server configured for ``cwd``; never raises for what a file contains.

    ``settings`` and ``mcp_json`` (``.mcp.json`` as read, None for none) replace the files
    of ``cwd``: project trust passes the parts in force.
    """
    root = Path(cwd).expanduser().absolute()
    settings = settings if settings is not None else load_settings(root, environ=environ)
    by_scope = {s.scope: s for s in settings.sources}
    mcp_path = root / MCP_JSON
    if mcp_json == "read":
        mcp_json = read_settings_file(mcp_path, "project") if mcp_path.exists() else None
    layers: list[SettingsFile] = []
    if "user" in by_scope:
        layers.append(by_scope["user"])
    problems: list[str] = []
    if mcp_json is not None:
        problems += [p for p in mcp_json.problems if "mcpServers" in p or not mcp_json.data]
        layers.append(mcp_json)
    layers += [by_scope[s] for s in ("project", "project local") if s in by_scope]
    merged: dict[str, ServerConfig | str | None] = {}
    for layer in layers:
        servers = layer.data.get("mcpServers")
        if not isinstance(servers, dict):
            continue
        found, _ = parse_servers(servers, source=layer.path, environ=environ, base_dir=root,
                                 line_of=_line_finder(layer))
        merged.update(found)
    return McpConfig(
        servers={n: c for n, c in merged.items() if isinstance(c, ServerConfig)},
        problems=(*problems, *(p for p in merged.values() if isinstance(p, str))),
        disabled=tuple(n for n, c in merged.items() if c is None),
        searched=(*settings.searched, mcp_path))


def _line_finder(source: SettingsFile) -> Callable[[str], int | None]:
    start = source.key_offset("mcpServers")

    def line_of(name: str) -> int | None:
        return source.line_at(source.key_offset(name, start)) if source.text else None

    return line_of
