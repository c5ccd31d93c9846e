"""One MCP server connection, owned by one long-lived task that serves requests from a queue.

The SDK is built on anyio: its task groups and cancel scopes must be entered and left in the same
task. So each server gets an owner task that opens the transport and the session, lists the
tools, then runs every request it is handed (concurrently, each in its own cancel scope) until
the connection ends; callers on the kernel's event loop only put jobs on a queue and await
futures. A caller that is cancelled cancels its request; a start-up that takes too long hits the
owner's deadline; ``close()`` cancels the owner, whose exit kills the process tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, Literal, TypeVar

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from . import procs
from .config import ServerConfig
from .errors import ConnectionLostError, ServerUnavailableError, lost_connection, reason
from .stdio import StdioProcess

T = TypeVar("T")
State = Literal["idle", "connecting", "connected", "disconnected", "failed", "closed"]
ClientFn = Callable[[Client], Awaitable[T]]

log = logging.getLogger(__name__)
_CLIENT_INFO = types.Implementation(name="agent_ext", version="0.1.0")
#: Seconds ``close()`` waits for the owner to wind down before killing the tree outright.
CLOSE_WAIT = 8.0


class _Job:
    """One request: the work to do with the client and the future its caller awaits."""

    def __init__(self, fn: ClientFn[Any], future: asyncio.Future[Any]) -> None:
        self.fn = fn
        self.future = future
        self.scope: anyio.CancelScope | None = None
        future.add_done_callback(self._done)

    def _done(self, future: asyncio.Future[Any]) -> None:
        if future.cancelled() and self.scope is not None:
            self.scope.cancel()


class ServerConnection:
    """A server's connection state, tools and request queue (see the module docstring)."""

    #: The SDK's era negotiation: "auto" probes for a 2026-era server and falls back to the
    #: initialize handshake; "legacy" goes straight to the handshake.
    mode = "auto"

    def __init__(self, config: ServerConfig, *, connect_timeout: float = 10.0,
                 max_retries: int = 3, backoff: float = 0.5,
                 on_tools: Callable[[ServerConnection], None] | None = None,
                 on_lost: Callable[[ServerConnection], None] | None = None,
                 on_spawn: Callable[[int], None] | None = None,
                 on_exit: Callable[[int], None] | None = None) -> None:
        self.config = config
        self.name = config.name
        self.connect_timeout = config.timeout or connect_timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.state: State = "idle"
        self.reason: str | None = None
        self.tools: list[types.Tool] = []
        self.capabilities: types.ServerCapabilities | None = None
        self.protocol: str | None = None
        self.server_info: types.Implementation | None = None
        self.process: StdioProcess | None = None
        self.connected_at: float | None = None
        self._on_tools = on_tools
        self._on_lost = on_lost
        self._on_spawn = on_spawn
        self._on_exit = on_exit
        self._owner: asyncio.Task[None] | None = None
        self._jobs: asyncio.Queue[_Job | None] = asyncio.Queue()
        self._accepting = False
        self._closing = False
        self._scope: anyio.CancelScope | None = None
        self._lock = asyncio.Lock()
        self._relist = asyncio.Event()
        self._lost: str | None = None
        self._abort: str | None = None
        self._http_error: str | None = None
        self._inflight: set[_Job] = set()

    # -- connecting -----------------------------------------------------------------------------

    async def connect(self) -> bool:
        """Connect (once); True when connected, else ``state`` is failed with a ``reason``."""
        async with self._lock:
            return await self._connect()

    async def _connect(self) -> bool:
        if self.state == "connected":
            return True
        if self._closing:
            return False
        await self._join_owner()
        self.state, self.reason, self._lost, self._abort = "connecting", None, None, None
        self._http_error = None
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[str | None] = loop.create_future()
        self._jobs = asyncio.Queue()
        self._owner = loop.create_task(self._own(ready), name=f"agent_ext mcp {self.name}")
        try:
            failure = await asyncio.shield(ready)
        except asyncio.CancelledError:
            self._abort = "start-up was cancelled"
            self._cancel_owner()
            raise
        return failure is None

    async def ensure(self) -> None:
        """Be connected, reconnecting (bounded retries with backoff) after the server stopped."""
        if self.state == "connected" and self._accepting:
            return
        async with self._lock:
            if self.state == "connected" and self._accepting:
                return
            if self.state == "connected":
                await self._wait_owner()
            if self.state != "disconnected":
                raise ServerUnavailableError(self.unavailable())
            for attempt in range(self.max_retries):
                if attempt:
                    await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
                if await self._connect():
                    return
                if self._closing:
                    break
            if not self._closing:
                self.reason = (f"could not be restarted after {self.max_retries} attempts: "
                               f"{self.reason}")
                if self._on_lost is not None:
                    self._on_lost(self)
            raise ServerUnavailableError(self.unavailable())

    def unavailable(self) -> str:
        """Why calls to this server fail now, and what to do."""
        where = self.config.origin
        if self.state == "closed":
            return f"MCP server {self.name!r} is closed; reconnect it with %agent mcp reconnect."
        if self.state == "idle":
            return f"MCP server {self.name!r} has not been started yet."
        return (f"MCP server {self.name!r} is not running: {self.reason}; check its entry in "
                f"{where}, then %agent mcp reconnect {self.name}.")

    # -- the owner task -------------------------------------------------------------------------

    async def _own(self, ready: asyncio.Future[str | None]) -> None:
        failure: str | None = None
        timed_out = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
                self._scope = scope
                if self._closing:
                    scope.cancel()
                try:
                    async with AsyncExitStack() as stack:
                        client = await self._open(stack)
                        await self._list_tools(client)
                        scope.deadline = math.inf
                        self._connected(client)
                        if self._on_tools is not None:
                            self._on_tools(self)
                        if not ready.done():
                            ready.set_result(None)
                        await self._serve(client)
                except Exception as exc:  # noqa: BLE001  every failure becomes a reason
                    failure = reason(exc, self._http_error)
            if scope.cancelled_caught and self.state == "connecting":
                timed_out = self._abort is None
                failure = self._abort or f"did not answer within {self.connect_timeout:g} s"
        finally:
            self._scope = None
            self._accepting = False
            self._finish(ready, failure, timed_out)

    async def _open(self, stack: AsyncExitStack) -> Client:
        config = self.config
        if config.transport == "stdio":
            self.process = StdioProcess(config, on_spawn=self._on_spawn, on_exit=self._on_exit)
            transport: Any = self.process.open()
        elif config.transport == "http":
            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=dict(config.headers), timeout=httpx2.Timeout(30.0, read=300.0),
                event_hooks={"response": [self._saw_response]}))
            transport = streamable_http_client(config.url, http_client=http)
        else:
            transport = sse_client(config.url, headers=dict(config.headers))
        client = Client(transport, message_handler=self._on_message, client_info=_CLIENT_INFO,
                        cache=None, mode=self.mode)
        return await stack.enter_async_context(client)

    async def _saw_response(self, response: httpx2.Response) -> None:
        """Keep the last HTTP error status: the SDK reports a 401 as a bare internal error."""
        if response.status_code >= 400:
            self._http_error = f"HTTP {response.status_code} {response.reason_phrase}".strip()

    def _connected(self, client: Client) -> None:
        self.capabilities = client.server_capabilities
        self.protocol = client.protocol_version
        self.server_info = client.server_info
        self.connected_at = time.monotonic()
        self.state = "connected"
        self._accepting = True

    def _finish(self, ready: asyncio.Future[str | None], failure: str | None,
                timed_out: bool) -> None:
        """Settle the state after the owner's connection ended, and answer every open job."""
        exit_note = self.process.exit_note() if self.process is not None else ""
        detail = self.config.mask((failure if timed_out else exit_note or failure or self._lost)
                                  or "the connection ended")
        lost = self._lost_error(detail)
        pending = list(self._inflight)
        self._inflight.clear()
        while not self._jobs.empty():
            job = self._jobs.get_nowait()
            if job is not None:
                pending.append(job)
        for job in pending:
            if not job.future.done():
                job.future.set_exception(lost)
        if self._closing:
            self.state, self.reason = "closed", None
            if not ready.done():
                ready.set_result("closed")
            return
        self.reason = detail
        if not ready.done():
            self.state = "failed"
            ready.set_result(self.reason)
        else:
            self.state = "disconnected"
            if self._on_lost is not None:
                self._on_lost(self)

    async def _serve(self, client: Client) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._relister, client)
            caps = self.capabilities
            if (self.protocol in MODERN_PROTOCOL_VERSIONS and caps is not None
                    and caps.tools is not None and caps.tools.list_changed):
                tg.start_soon(self._listen, client)
            if self.process is not None:
                tg.start_soon(self._watch_process, self.process)
            while True:
                job = await self._jobs.get()
                if job is None:
                    break
                tg.start_soon(self._run, client, job)
            tg.cancel_scope.cancel()

    async def _run(self, client: Client, job: _Job) -> None:
        """Run one job; if the connection fails under it, ``_finish`` answers it with the
        connection's final reason (known only once the owner has wound down)."""
        if job.future.done():
            return
        self._inflight.add(job)
        try:
            with anyio.CancelScope() as scope:
                job.scope = scope
                value = await job.fn(client)
                if not job.future.done():
                    job.future.set_result(value)
        except Exception as exc:  # noqa: BLE001  handed to the caller
            if lost_connection(exc):
                self._stop_serving(reason(exc, self._http_error))
            elif not job.future.done():
                job.future.set_exception(exc)
        finally:
            if job.future.done():
                self._inflight.discard(job)

    def _lost_error(self, detail: str) -> ConnectionLostError:
        if self._closing:
            return ConnectionLostError(f"MCP server {self.name!r} was shut down during the call",
                                       restarts=False)
        return ConnectionLostError(f"MCP server {self.name!r} stopped during the call "
                                   f"({detail})")

    def _stop_serving(self, why: str) -> None:
        if self._lost is None:
            self._lost = why
        self._accepting = False
        self._jobs.put_nowait(None)

    async def _watch_process(self, process: StdioProcess) -> None:
        await process.wait_exit()
        await anyio.sleep(0.05)
        self._stop_serving("the server process exited")

    # -- tool list changes ------------------------------------------------------------------------

    async def _on_message(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._relist.set()
        elif isinstance(message, Exception):
            log.debug("MCP server %r transport message: %s", self.name, message)

    async def _listen(self, client: Client) -> None:
        """2026-era servers announce list changes only on a ``subscriptions/listen`` stream."""
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    self._relist.set()

    async def _relister(self, client: Client) -> None:
        while True:
            await self._relist.wait()
            self._relist.clear()
            try:
                await self._list_tools(client)
            except Exception as exc:  # noqa: BLE001  a failed re-list keeps the old tools
                if lost_connection(exc):
                    self._stop_serving(reason(exc))
                    return
                log.warning("MCP server %r: re-listing tools failed: %s", self.name, exc)
                continue
            if self._on_tools is not None:
                self._on_tools(self)

    async def _list_tools(self, client: Client) -> None:
        caps = client.server_capabilities
        if caps.tools is None:
            self.tools = []
            return
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        self.tools = tools

    # -- requests -------------------------------------------------------------------------------

    async def request(self, fn: ClientFn[T]) -> T:
        """Run ``fn(client)`` in the owner task; reconnects first if the server had stopped."""
        await self.ensure()
        if not self._accepting:
            raise ServerUnavailableError(self.unavailable())
        job = _Job(fn, asyncio.get_running_loop().create_future())
        self._jobs.put_nowait(job)
        result: T = await job.future
        return result

    # -- closing --------------------------------------------------------------------------------

    def _cancel_owner(self) -> None:
        self._accepting = False
        if self._scope is not None:
            self._scope.cancel()

    async def _wait_owner(self) -> None:
        """Let an owner that is already winding down finish (bounded)."""
        owner = self._owner
        if owner is not None and not owner.done():
            await asyncio.wait({owner}, timeout=CLOSE_WAIT)

    async def _join_owner(self) -> None:
        owner = self._owner
        if owner is not None and not owner.done():
            self._cancel_owner()
            await asyncio.wait({owner}, timeout=CLOSE_WAIT)

    async def close(self) -> None:
        """Stop the connection and the server's process tree; safe to call twice."""
        self._closing = True
        self._cancel_owner()
        owner = self._owner
        if owner is not None and not owner.done():
            done, _ = await asyncio.wait({owner}, timeout=CLOSE_WAIT)
            if not done:
                owner.cancel()
        self.kill_now()
        self.state, self.reason = "closed", None

    def kill_now(self) -> None:
        """Kill the server's process tree synchronously (interpreter exit, stuck shutdown)."""
        process = self.process
        if process is not None and process.pid is not None:
            procs.kill_now(process.pid)
