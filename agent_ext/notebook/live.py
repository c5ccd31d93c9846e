"""LiveNotebook: the notebook open in the browser, read and edited through the agent-ext extension.

The kernel and the extension talk over an abstract ``Transport`` (the Jupyter host implements it
with a comm), so this module needs no IPython. A ``BridgeChannel`` multiplexes requests over one
transport: request ids, futures resolved with ``call_soon_threadsafe`` (replies arrive on kernel
subshell threads), timeouts, and the ``hello`` handshake, in which every tab on the kernel
answers with its client id. Edits go to the tab that ran the agent's cell. A tab that never got
the current channel (the page was reloaded, or the kernel restarted and loaded us again) gets a
new channel and a new handshake. Reads are incremental: each cell comes back in full only when
it changed since this document last read it. Given a ``fallback``, a ``LiveNotebook`` whose
handshake finds no usable tab makes the same call on the document the fallback gives (the
.ipynb file) instead.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

from agent_ext.core.errors import ErrorCode

from .document import CellData, NotebookDocument, NotebookError, NotebookSnapshot

#: The bridge protocol this side speaks; the extension reports its own in ``hello``.
PROTOCOL = 1
#: The comm target the extension registers.
TARGET = "agent_ext.bridge"
#: Seconds to wait for the tabs' handshake before deciding there is no extension.
HELLO_TIMEOUT = 2.0
#: Seconds to wait for one answer (``save`` gets more).
REQUEST_TIMEOUT = 10.0
SAVE_TIMEOUT = 60.0
NOT_OPEN = "notebook_not_open"

Message = dict[str, Any]
P = ParamSpec("P")
T = TypeVar("T")


class Transport(Protocol):
    """A message channel to the notebook frontends: the kernel's comm, or a test double."""

    def open(self, hello: Message, receive: Callable[[Message], None],
             closed: Callable[[], None]) -> None:
        """Open a new channel (closing any previous one) with ``hello`` as its opening message.

        ``receive`` gets every message the frontends send, from any thread; ``closed`` runs when
        a frontend closes the channel.
        """
        ...

    def send(self, message: Message) -> None:
        """Send ``message`` to every frontend on the channel."""
        ...

    def close(self) -> None:
        """Close the channel (idempotent)."""
        ...


class BridgeUnavailableError(NotebookError):
    """No usable bridge: no extension answered, it speaks another protocol, or no tab is left."""

    def __init__(self, message: str) -> None:
        super().__init__(NOT_OPEN, message)


@dataclass(frozen=True)
class Tab:
    """One browser tab's answer to ``hello``: which notebook it shows and what it runs."""

    client: str
    path: str
    root: str | None
    version: str
    protocol: int
    app: str | None

    @property
    def absolute_path(self) -> str:
        """The notebook's path on disk (the tab's path is relative to the server root)."""
        root = Path(self.root).expanduser() if self.root else Path.cwd()
        return os.path.normpath(root / self.path)


def tab_from(message: Mapping[str, Any]) -> Tab | None:
    """The tab a ``hello`` reply describes, or None for a malformed reply."""
    client, path = message.get("client"), message.get("path")
    if not isinstance(client, str) or not isinstance(path, str):
        return None
    protocol = message.get("protocol")
    root, app = message.get("root"), message.get("app")
    return Tab(client=client, path=path, root=root if isinstance(root, str) else None,
               version=str(message.get("version", "?")),
               protocol=protocol if isinstance(protocol, int) else 0,
               app=app if isinstance(app, str) else None)


class BridgeChannel:
    """Requests and replies over one transport, and which tabs answer on it (thread-safe)."""

    def __init__(self, transport: Transport, *, version: str = "",
                 hello_timeout: float = HELLO_TIMEOUT,
                 request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.transport = transport
        self.version = version
        self.hello_timeout = hello_timeout
        self.request_timeout = request_timeout
        #: Bumped on every (re)open: documents drop their read caches when it changes.
        self.generation = 0
        self._rids = itertools.count(1)
        self._lock = threading.Lock()
        self._open = False
        self._opened_at = 0.0
        self._hello_rid = -1
        self._tabs: dict[str, Tab] = {}
        self._waited: set[str | None] = set()
        self._pending: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Message]]] = {}
        self._wakers: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    # -- lifetime -------------------------------------------------------------------------------

    def start(self) -> None:
        """Open the channel and send the handshake; the tabs' answers arrive in the background."""
        with self._lock:
            self._hello_rid = next(self._rids)
            self._tabs.clear()
            self._open = True
            self._opened_at = time.monotonic()
            self.generation += 1
            generation = self.generation
        hello = {"op": "hello", "rid": self._hello_rid, "protocol": PROTOCOL,
                 "version": self.version}
        self.transport.open(hello, lambda m: self._receive(m, generation),
                            lambda: self._closed(generation))

    def close(self) -> None:
        """Close the channel; waiting requests fail at once."""
        with self._lock:
            self._open = False
        self.transport.close()
        self._fail_pending("the notebook bridge was closed")

    @property
    def absent(self) -> bool:
        """Whether a handshake was waited for in vain and no tab has answered since."""
        with self._lock:
            return bool(self._waited) and not self._tabs

    def tabs(self) -> dict[str, Tab]:
        """The tabs that answered the current handshake, by client id."""
        with self._lock:
            return dict(self._tabs)

    # -- the handshake --------------------------------------------------------------------------

    async def tab(self, client: str | None) -> Tab:
        """The tab to address for ``client`` (the session of the running cell).

        Waits for the handshake at most ``hello_timeout`` once per client; a client missing
        from an answered handshake (a reloaded page) gets a new channel first. When that client
        never answers (a console on the notebook's kernel), another tab on the kernel serves.
        """
        with self._lock:
            found = self._pick(client)
            waited = client in self._waited
            stale = time.monotonic() - self._opened_at > self.hello_timeout
            reopen = not self._open or (found is None and not waited and stale)
        if found is None and waited and not reopen:
            raise self._missing()
        if found is not None and not reopen:
            return self._check(found)
        if reopen:
            self.start()
        found = await self._wait_for(client)
        if found is None:
            raise self._missing()
        return self._check(found)

    def _missing(self) -> BridgeUnavailableError:
        return BridgeUnavailableError(
            "no JupyterLab or Notebook 7 page with the agent-ext extension answered within "
            f"{self.hello_timeout:g} s. A headless run (nbclient, papermill, jupyter execute) "
            "has none; in a browser, install agent-ext in the environment that runs the Jupyter "
            "server (pip install agent-ext), restart the server and reload the page.")

    def _pick(self, client: str | None) -> Tab | None:
        """The tab for ``client`` if it answered, else any tab once ``client`` was waited for."""
        found = self._tabs.get(client) if client is not None else None
        if found is None and (client is None or client in self._waited) and self._tabs:
            found = next(iter(self._tabs.values()))
        return found

    async def _wait_for(self, client: str | None) -> Tab | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.hello_timeout
        while True:
            with self._lock:
                found = self._tabs.get(client) if client is not None else self._pick(None)
                if found is not None:
                    return found
                remaining = deadline - loop.time()
                if remaining <= 0:
                    self._waited.add(client)
                    return self._pick(client)
                waker: asyncio.Future[None] = loop.create_future()
                self._wakers.append((loop, waker))
            await asyncio.wait({waker}, timeout=remaining)

    def _check(self, tab: Tab) -> Tab:
        if tab.protocol != PROTOCOL:
            raise BridgeUnavailableError(
                f"The agent-ext extension in the browser (version {tab.version}) speaks bridge "
                f"protocol {tab.protocol}; this kernel's agent_ext ({self.version or '?'}) speaks "
                f"{PROTOCOL}. Install the same agent-ext version for the kernel and the Jupyter "
                "server, restart both and reload the page.")
        return tab

    # -- requests -------------------------------------------------------------------------------

    async def request(self, client: str, op: str, args: Mapping[str, Any],
                      timeout: float | None = None) -> Message:
        """Send ``op`` to the tab of ``client`` and return its reply (``ok`` true or false)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Message] = loop.create_future()
        with self._lock:
            rid = next(self._rids)
            self._pending[rid] = (loop, future)
        try:
            self.transport.send({"op": op, "rid": rid, "to": client, **args})
            return await asyncio.wait_for(future, timeout or self.request_timeout)
        except asyncio.TimeoutError:
            with self._lock:
                self._tabs.pop(client, None)
            raise NotebookError(
                NOT_OPEN,
                f"The notebook tab did not answer {op!r} within "
                f"{timeout or self.request_timeout:g} s (closed, reloaded or busy?). The change "
                "may or may not have landed: read the notebook again before retrying.") from None
        finally:
            with self._lock:
                self._pending.pop(rid, None)

    # -- incoming (any thread) ------------------------------------------------------------------

    def _receive(self, message: Message, generation: int) -> None:
        rid = message.get("rid")
        with self._lock:
            if generation != self.generation:
                return
            if rid == self._hello_rid:
                tab = tab_from(message) if message.get("ok") else None
                if tab is not None:
                    self._tabs[tab.client] = tab
                wakers, self._wakers = self._wakers, []
                waiting = None
            else:
                wakers = []
                waiting = self._pending.pop(rid, None) if isinstance(rid, int) else None
        for loop, waker in wakers:
            loop.call_soon_threadsafe(_settle, waker, None)
        if waiting is not None:
            loop, future = waiting
            loop.call_soon_threadsafe(_settle, future, message)

    def _closed(self, generation: int) -> None:
        with self._lock:
            if generation != self.generation:
                return
            self._open = False
            self._tabs.clear()
        self._fail_pending("the browser closed the notebook bridge")

    def _fail_pending(self, why: str) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for loop, future in pending.values():
            loop.call_soon_threadsafe(_settle, future, {"ok": False, "code": NOT_OPEN,
                                                        "message": why.capitalize() + "."})


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


#: What serves a call when the bridge is unavailable: given why and the notebook's path, the
#: document to use instead (it may raise a NotebookError that says what to do).
Fallback = Callable[[BridgeUnavailableError, "str | None"], NotebookDocument]


def _or_fallback(
    method: Callable[Concatenate[LiveNotebook, P], Awaitable[T]],
) -> Callable[Concatenate[LiveNotebook, P], Coroutine[Any, Any, T]]:
    """``method`` on the live notebook; the same call on the fallback document when the bridge
    is unavailable.

    Only a failed handshake falls back (nothing was sent then); a request that timed out may
    have landed, so its error goes to the caller.
    """
    name = method.__name__

    @functools.wraps(method)
    async def call(doc: LiveNotebook, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            done = await method(doc, *args, **kwargs)
        except BridgeUnavailableError as why:
            if doc.fallback is None:
                raise
            doc.live = False
            instead = doc.fallback(why, doc.path)
            return cast("T", await getattr(instead, name)(*args, **kwargs))
        doc.live = True
        return done

    return call


class LiveNotebook:
    """A NotebookDocument on the notebook open in a browser tab (see the module docstring)."""

    def __init__(self, channel: BridgeChannel, path: str | None, client_id: str | None,
                 fallback: Fallback | None = None) -> None:
        self.channel = channel
        self.client_id = client_id
        self.fallback = fallback
        #: False while the fallback serves (the last call found no usable tab).
        self.live = True
        self._path = path
        self._cache: dict[str, tuple[int, CellData]] = {}
        self._generation = -1
        self._epoch = 0

    @property
    def path(self) -> str | None:
        """The notebook's absolute path: as given, else as the tab reports it."""
        if self._path is not None:
            return self._path
        tabs = self.channel.tabs()
        tab = tabs.get(self.client_id) if self.client_id else next(iter(tabs.values()), None)
        return tab.absolute_path if tab is not None else None

    @path.setter
    def path(self, value: str | None) -> None:
        self._path = value

    @_or_fallback
    async def read(self) -> NotebookSnapshot:
        for attempt in range(2):
            if self.channel.generation != self._generation or attempt:
                self._cache.clear()
                self._generation = self.channel.generation
                self._epoch = next(_epochs)
            reply = await self._call("read", {"cache": self._epoch})
            cells = self._cells(reply.get("cells"))
            if cells is not None:
                return _snapshot(reply, cells, self.path)
        raise NotebookError(ErrorCode.NOTEBOOK_INVALID_JSON,
                            "The notebook's cells could not be read from the browser; reload the "
                            "page and retry.")

    @_or_fallback
    async def replace_source(self, cell_id: str, source: str, *, clear_outputs: bool) -> None:
        await self._call("replace_source", {"cell_id": cell_id, "source": source,
                                            "clear_outputs": clear_outputs})

    @_or_fallback
    async def insert(self, after_cell_id: str | None, cell_type: str, source: str,
                     cell_id: str) -> None:
        await self._call("insert", {"after": after_cell_id, "cell_type": cell_type,
                                    "source": source, "cell_id": cell_id})

    @_or_fallback
    async def delete(self, cell_id: str) -> None:
        await self._call("delete", {"cell_id": cell_id})

    @_or_fallback
    async def move(self, cell_id: str, after_cell_id: str | None) -> None:
        await self._call("move", {"cell_id": cell_id, "after": after_cell_id})

    @_or_fallback
    async def set_type(self, cell_id: str, cell_type: str) -> None:
        await self._call("set_type", {"cell_id": cell_id, "cell_type": cell_type})

    @_or_fallback
    async def set_outputs(self, cell_id: str, outputs: list[dict[str, Any]],
                          execution_count: int | None) -> None:
        await self._call("set_outputs", {"cell_id": cell_id, "outputs": outputs,
                                         "execution_count": execution_count})

    @_or_fallback
    async def save(self) -> None:
        await self._call("save", {}, timeout=SAVE_TIMEOUT)

    @_or_fallback
    async def ensure_persistent_ids(self) -> bool:
        return bool((await self._call("ensure_persistent_ids", {})).get("changed"))

    @_or_fallback
    async def selection(self) -> str | None:
        found = (await self._call("selection", {})).get("cell_id")
        return found if isinstance(found, str) else None

    # -- internals ------------------------------------------------------------------------------

    async def _call(self, op: str, args: Mapping[str, Any],
                    timeout: float | None = None) -> Message:
        tab = await self.channel.tab(self.client_id)
        reply = await self.channel.request(tab.client, op, args, timeout)
        if not reply.get("ok"):
            code = str(reply.get("code") or ErrorCode.NOTEBOOK_EDIT_FAILURE)
            if code not in _CODES:
                code = ErrorCode.NOTEBOOK_EDIT_FAILURE
            raise NotebookError(code, str(reply.get("message") or f"{op} failed in the browser."))
        return reply

    def _cells(self, entries: object) -> list[CellData] | None:
        """The cells of a read reply, completed from the cache; None on a cache miss."""
        if not isinstance(entries, list):
            raise NotebookError(ErrorCode.NOTEBOOK_INVALID_JSON,
                                "The browser sent a malformed notebook; reload the page.")
        cells: list[CellData] = []
        fresh: dict[str, tuple[int, CellData]] = {}
        for entry in entries:
            cell_id, rev = entry[0], entry[1]
            if len(entry) > 2:
                fresh[cell_id] = (rev, cell_from_json(entry[2]))
                cells.append(fresh[cell_id][1])
                continue
            hit = self._cache.get(cell_id)
            if hit is None or hit[0] != rev:
                return None
            fresh[cell_id] = hit
            cells.append(hit[1])
        self._cache = fresh
        return cells


_epochs = itertools.count(1)
_CODES = frozenset({ErrorCode.NOTEBOOK_CELL_NOT_FOUND, ErrorCode.NOTEBOOK_EDIT_FAILURE,
                    ErrorCode.NOTEBOOK_INVALID_JSON, NOT_OPEN})


def cell_from_json(raw: Mapping[str, Any]) -> CellData:
    """A cell as the shared model's ``toJSON`` gives it."""
    found = raw.get("id")
    code = raw.get("cell_type") == "code"
    source = raw.get("source")
    outputs = raw.get("outputs") if code else None
    count = raw.get("execution_count") if code else None
    metadata = raw.get("metadata")
    return CellData(id=found if isinstance(found, str) and found else None,
                    cell_type=str(raw.get("cell_type")),
                    source="".join(source) if isinstance(source, list) else str(source or ""),
                    metadata=metadata if isinstance(metadata, dict) else {},
                    outputs=outputs if isinstance(outputs, list) else [],
                    execution_count=count if isinstance(count, int) else None)


def _snapshot(reply: Mapping[str, Any], cells: list[CellData],
              path: str | None) -> NotebookSnapshot:
    meta = reply.get("metadata")
    major, minor = reply.get("nbformat"), reply.get("nbformat_minor")
    return NotebookSnapshot(cells=tuple(cells), metadata=meta if isinstance(meta, dict) else {},
                            nbformat=major if isinstance(major, int) else 4,
                            nbformat_minor=minor if isinstance(minor, int) else 5, path=path)
