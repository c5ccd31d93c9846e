"""McpManager: a session's MCP servers, started together, their tools kept in the registry.

``await start()`` connects every configured server in parallel, each bounded by its start-up
timeout, so one slow or broken server delays nothing beyond that bound and leaves the others
working; each failure is reported once as a notice that says what to fix. Tools are registered
deferred, so the first request names them without carrying their schemas. A server that dies
mid-session is restarted by the next call (bounded retries); one that cannot be restarted loses
its tools. ``await aclose()`` stops everything, process trees included, and may be called twice;
``stop_now()`` does the same without awaiting (for ``%agent reset`` and ``%unload_ext``), and the
next ``start()`` connects the servers again.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agent_ext.core import Registry
from agent_ext.trust import check_project

from . import procs
from .config import EntryError, McpConfig, ServerConfig, load_mcp_config, parse_server
from .reaper import Reaper
from .resources import McpScheme
from .store import McpConfigError, add_server

if TYPE_CHECKING:
    from .connection import ServerConnection, State
    from .tools import McpTool

#: Extra seconds past a server's start-up timeout before start() stops waiting for it.
_SLACK = 10.0
#: Seconds stop_now() waits for the killed process trees to be gone.
_STOP_WAIT = 2.0


@dataclass(frozen=True)
class McpNotice:
    """Something the user should hear about a server (the Agent shows it as a Notice)."""

    text: str
    level: str = "info"
    server: str | None = None


@dataclass(frozen=True)
class ServerStatus:
    """One server as ``%agent mcp list`` shows it; secrets are masked."""

    name: str
    state: State | str
    reason: str | None
    target: str
    tools: int
    source: str
    pid: int | None = None
    protocol: str | None = None

    def line(self) -> str:
        state = self.state + (f": {self.reason}" if self.reason else "")
        tools = f", {self.tools} tool{'s' if self.tools != 1 else ''}" if self.tools else ""
        return f"{self.name}: {state}{tools} — {self.target} [{self.source}]"


class McpManager:
    """The MCP servers of one agent session (see the module docstring)."""

    def __init__(self, configs: McpConfig | Mapping[str, ServerConfig] | Iterable[ServerConfig],
                 registry: Registry, *, on_event: Callable[[McpNotice], None] | None = None,
                 max_servers: int = 8, connect_timeout: float = 10.0, max_retries: int = 3,
                 backoff: float = 0.5) -> None:
        self.registry = registry
        self.on_event = on_event
        self.max_servers = max_servers
        self.connect_timeout = connect_timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.problems: tuple[str, ...] = ()
        self.disabled: tuple[str, ...] = ()
        if isinstance(configs, McpConfig):
            self.problems, self.disabled = configs.problems, configs.disabled
            configs = configs.servers
        listed = configs.values() if isinstance(configs, Mapping) else configs
        self.configs: dict[str, ServerConfig] = {c.name: c for c in listed}
        self._conns: dict[str, ServerConnection] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._tools: dict[str, dict[str, McpTool]] = {}
        self._pids: set[int] = set()
        # Kills the servers' process groups if this process dies without running any code.
        self._reaper = Reaper()
        self._reported: set[tuple[str, str]] = set()
        self._started = False
        self._atexit = False
        self.scheme = McpScheme(lambda: self._conns)

    @classmethod
    def from_project(cls, cwd: str | Path, registry: Registry, *,
                     environ: Mapping[str, str] | None = None,
                     on_event: Callable[[McpNotice], None] | None = None,
                     max_servers: int = 8, connect_timeout: float = 10.0,
                     trust_project: bool | Literal["once"] | None = None) -> McpManager:
        """The servers of ``cwd``'s ``.mcp.json`` and settings files (not yet started).

        The project's own servers are included only when it is trusted (the user's kept
        answer, or ``trust_project``), as for an ``Agent``; the user's servers always are.
        """
        project = check_project(cwd, trust=trust_project, environ=environ)
        config = load_mcp_config(cwd, environ=environ, settings=project.settings,
                                 mcp_json=project.mcp_json)
        return cls(config, registry, on_event=on_event, max_servers=max_servers,
                   connect_timeout=connect_timeout)

    # -- events ---------------------------------------------------------------------------------

    def _notice(self, text: str, level: str = "info", server: str | None = None) -> None:
        if self.on_event is not None:
            self.on_event(McpNotice(text, level, server))

    def _report_failure(self, conn: ServerConnection, verb: str) -> None:
        key = (conn.name, conn.reason or "")
        if key in self._reported:
            return
        self._reported.add(key)
        self._notice(f"MCP server {conn.name!r} {verb}: {conn.reason}; check its entry in "
                     f"{conn.config.origin}, then %agent mcp reconnect {conn.name}.",
                     "warning", conn.name)

    # -- connections ----------------------------------------------------------------------------

    @property
    def connections(self) -> Mapping[str, ServerConnection]:
        return dict(self._conns)

    def _make(self, config: ServerConfig) -> ServerConnection:
        # The MCP SDK takes about a second to import: it loads with the first server.
        from .connection import ServerConnection  # noqa: PLC0415

        conn = ServerConnection(config, connect_timeout=self.connect_timeout,
                                max_retries=self.max_retries, backoff=self.backoff,
                                on_tools=self._tools_changed, on_lost=self._lost,
                                on_spawn=self._spawned, on_exit=self._exited)
        self._conns[config.name] = conn
        self._tools.setdefault(config.name, {})
        return conn

    def _spawned(self, pid: int) -> None:
        self._pids.add(pid)
        self._reaper.add(pid)
        if not self._atexit:
            atexit.register(self.kill_processes)
            self._atexit = True

    @property
    def reaper_pid(self) -> int | None:
        """The pid of the watcher that kills the servers if this process is killed outright."""
        return self._reaper.pid

    def _exited(self, pid: int) -> None:
        self._pids.discard(pid)
        self._reaper.remove(pid)

    def _current(self, conn: ServerConnection) -> bool:
        """Whether ``conn`` is still the server's connection (stop_now() drops them unawaited)."""
        return self._conns.get(conn.name) is conn

    def _tools_changed(self, conn: ServerConnection) -> None:
        if not self._current(conn):
            return
        from .tools import sync_tools  # noqa: PLC0415

        first = not self._tools.get(conn.name)
        change = sync_tools(self.registry, conn, self._tools.setdefault(conn.name, {}))
        for problem in change.skipped:
            self._notice(f"MCP server {conn.name!r}: tool {problem}; it is left out.", "warning",
                         conn.name)
        if change and not first:
            bits = [f"+{len(change.added)} new"] if change.added else []
            bits += [f"-{len(change.removed)} gone"] if change.removed else []
            bits += [f"{len(change.updated)} changed"] if change.updated else []
            self._notice(f"MCP server {conn.name!r} changed its tools ({', '.join(bits)}).",
                         "info", conn.name)

    def _lost(self, conn: ServerConnection) -> None:
        if not self._current(conn):
            return
        if conn.state == "failed":
            self._drop_tools(conn.name)
            self._report_failure(conn, "stopped and was not restarted")
        else:
            self._notice(f"MCP server {conn.name!r} stopped: {conn.reason}; the next call "
                         "restarts it.", "warning", conn.name)

    def _drop_tools(self, name: str) -> None:
        self.registry.unregister_server(name)
        self._tools[name] = {}

    # -- start ----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect every configured server that is not running yet, in parallel, bounded."""
        if not self._started:
            self._started = True
            for problem in self.problems:
                self._notice(problem, "warning")
        waiting = [c for c in self.configs.values()
                   if c.name not in self._conns or self._conns[c.name].state in ("idle", "closed")]
        room = self.max_servers - sum(c.state == "connected" for c in self._conns.values())
        conns = [self._make(c) for c in waiting]
        for conn in conns[max(room, 0):]:
            conn.state = "failed"
            conn.reason = (f"not started: at most {self.max_servers} MCP servers run at once; "
                           "disable some (\"disabled\": true) or raise max_servers")
        starting = conns[:max(room, 0)]
        await asyncio.gather(*(self._start_one(c) for c in starting))
        for conn in conns:
            if conn.state == "failed":
                self._report_failure(conn, "did not start")
        up = [c for c in starting if c.state == "connected"]
        if up:
            listed = ", ".join(f"{c.name} ({len(c.tools)} tools)" for c in up)
            self._notice(f"MCP servers connected: {listed}; their tools are found with "
                         "tool_search.")

    async def _start_one(self, conn: ServerConnection) -> None:
        try:
            await asyncio.wait_for(conn.connect(), conn.connect_timeout + _SLACK)
        except asyncio.TimeoutError:
            conn.state, conn.reason = "failed", f"did not answer within {conn.connect_timeout:g} s"

    # -- runtime changes ------------------------------------------------------------------------

    def reconfigure(self, config: McpConfig) -> list[str]:
        """Use ``config``'s servers from now on (project trust changed); names of the stopped.

        When a running server is dropped or changed, every server is stopped now (the next
        ``start()`` connects those still configured); a new server waits for that start.
        """
        def same(a: ServerConfig, b: ServerConfig | None) -> bool:
            return b is not None and (a.describe(), a.origin) == (b.describe(), b.origin)

        # Servers added from code or `%agent mcp add --no-save` come from no file: they stay.
        servers = {**{n: c for n, c in self.configs.items() if c.source is None},
                   **config.servers}
        stale = [n for n in self._conns if not same(self.configs[n], servers.get(n))
                 ] if all(n in self.configs for n in self._conns) else list(self._conns)
        running = [n for n, c in self._conns.items() if c.state == "connected"]
        if stale:
            self.stop_now()
        self.configs = servers
        self.problems, self.disabled = config.problems, config.disabled
        return running if stale else []

    async def add(self, config: ServerConfig) -> ServerStatus:
        """Start a new server now (``%agent mcp add``); replaces one of the same name."""
        if config.name in self._conns:
            await self.remove(config.name)
        running = sum(c.state == "connected" for c in self._conns.values())
        if running >= self.max_servers:
            raise ValueError(f"{running} MCP servers are running, the most this session allows; "
                             f"remove one first (%agent mcp remove <name>).")
        self.configs[config.name] = config
        conn = self._make(config)
        await self._start_one(conn)
        if conn.state == "failed":
            self._report_failure(conn, "did not start")
        return self.status(config.name)[0]

    async def add_entry(self, name: str, entry: Mapping[str, object], *,
                        save_in: str | Path | None = None) -> ServerStatus:
        """Start a server from an ``mcpServers`` entry (``%agent mcp add``).

        With ``save_in`` (a project folder) the entry is also written to its ``.mcp.json`` so
        that later sessions start it too; nothing is saved when the entry is malformed.
        """
        return await self.add(_entry_config(name, entry, save_in))

    def configure(self, name: str, entry: Mapping[str, object], *,
                  save_in: str | Path | None = None) -> ServerConfig:
        """Add a server that the next ``start()`` (the next run) connects, without waiting.

        For callers that cannot await (a line magic); a running server of the same name keeps
        running until then.
        """
        config = _entry_config(name, entry, save_in)
        self.configs[name] = config
        old = self._conns.get(name)
        if old is not None and old.state != "connected":
            self._conns.pop(name)
        return config

    def forget(self, name: str) -> bool:
        """Remove server ``name`` now (its tools and reveal marks); its process stops shortly."""
        known = self.configs.pop(name, None) is not None
        conn = self._conns.pop(name, None)
        self._drop_tools(name)
        if conn is not None:
            task = asyncio.ensure_future(conn.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        return known or conn is not None

    async def remove(self, name: str) -> bool:
        """Stop server ``name`` and remove its tools (and their reveal marks)."""
        self.configs.pop(name, None)
        conn = self._conns.pop(name, None)
        if conn is None:
            return False
        await conn.close()
        self._drop_tools(name)
        return True

    async def reconnect(self, name: str) -> ServerStatus:
        """Stop and start server ``name`` again (after fixing its entry, or a failure)."""
        config = self.configs.get(name)
        if config is None:
            raise KeyError(f"no MCP server named {name!r}")
        old = self._conns.pop(name, None)
        if old is not None:
            await old.close()
        self._reported = {r for r in self._reported if r[0] != name}
        conn = self._make(config)
        await self._start_one(conn)
        if conn.state != "connected":
            self._drop_tools(name)
        if conn.state == "failed":
            self._report_failure(conn, "did not start")
        return self.status(name)[0]

    # -- state ----------------------------------------------------------------------------------

    def tool_names(self, name: str) -> list[str]:
        """The registered names of server ``name``'s tools (``%agent mcp tools <name>``)."""
        return sorted(t.name for t in self._tools.get(name, {}).values())

    def status(self, name: str | None = None) -> list[ServerStatus]:
        """Every server's state (or one server's), for ``%agent mcp list``."""
        out: list[ServerStatus] = []
        for config in self.configs.values():
            if name is not None and config.name != name:
                continue
            conn = self._conns.get(config.name)
            proc = conn.process if conn is not None else None
            out.append(ServerStatus(
                config.name, conn.state if conn is not None else "idle",
                conn.reason if conn is not None else None, config.describe(),
                len(self._tools.get(config.name, {})), config.origin,
                proc.pid if proc is not None and conn is not None
                and conn.state == "connected" else None,
                conn.protocol if conn is not None else None))
        if name is None:
            out += [ServerStatus(n, "disabled", None, "", 0, "config") for n in self.disabled
                    if n not in self.configs]
        return out

    # -- shutdown -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop every server and kill their process trees; tools are removed. Idempotent."""
        conns = list(self._conns.values())
        try:
            await asyncio.gather(*(c.close() for c in conns), *self._closing,
                                 return_exceptions=True)
        finally:
            for conn in conns:
                self._drop_tools(conn.name)
            self.kill_processes()
            self._reaper.close()
            self._started = False
            self._reported.clear()
            if self._atexit:
                atexit.unregister(self.kill_processes)
                self._atexit = False

    def stop_now(self, wait: float = _STOP_WAIT) -> None:
        """Kill every server's process tree and remove its tools, synchronously.

        For callers that cannot await (``%agent reset``, ``%unload_ext``) yet must not return
        while a server process lives: the trees get SIGKILL and are waited for (at most ``wait``
        seconds), each connection winds down in the background, and the next ``start()``
        connects every server again.
        """
        conns = list(self._conns.values())
        self._conns.clear()
        for conn in conns:
            self._drop_tools(conn.name)
        groups = set(self._pids)
        members = {p for g in groups for p in (g, *procs.descendants(g))}
        self.kill_processes()
        deadline = time.monotonic() + wait
        while (any(procs.alive(p) for p in members) or any(procs.group_alive(g) for g in groups)
               ) and time.monotonic() < deadline:
            time.sleep(0.01)
        self._started = False
        self._reported.clear()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop runs: each owner winds down when its loop runs next
        for conn in conns:
            task = loop.create_task(conn.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def kill_processes(self) -> None:
        """SIGKILL every server process tree still known, synchronously (interpreter exit)."""
        for pid in list(self._pids):
            with contextlib.suppress(OSError):
                procs.kill_now(pid)
        self._pids.clear()


def _entry_config(name: str, entry: Mapping[str, object],
                  save_in: str | Path | None) -> ServerConfig:
    """Check an entry (variables must be set), then save it when asked; its config."""
    base = Path(save_in).expanduser().absolute() if save_in is not None else None
    try:
        config = parse_server(name, dict(entry), base_dir=base)
    except EntryError as exc:
        raise McpConfigError(f"MCP server {name!r} {exc}; nothing was saved.") from None
    if base is None:
        return config
    return dataclasses.replace(config, source=add_server(base, name, entry, replace=True))
