"""The kernel end of the notebook bridge: a comm to the agent-ext extension, and the provider.

``install_bridge(shell)`` opens the comm (the extension's tabs answer the handshake in the
background) and returns the session's ``NotebookProvider``. Its documents edit the live
notebook in the tab that ran the agent's cell while the extension answers; without it (VS Code,
classic Notebook, nbclient, an old extension) they edit the .ipynb file, and say so once.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from agent_ext._version import __version__
from agent_ext.notebook.document import NotebookDocument, NotebookError, NotebookSnapshot
from agent_ext.notebook.file import FileNotebook
from agent_ext.notebook.live import (
    TARGET,
    BridgeChannel,
    BridgeUnavailableError,
    LiveNotebook,
    Message,
)
from agent_ext.notebook.provider import FileNotebookProvider

T = TypeVar("T")
Notify = Callable[[str], None]


class CommTransport:
    """The bridge ``Transport`` over an ipykernel comm opened from the kernel."""

    def __init__(self, target: str = TARGET) -> None:
        self.target = target
        self._comm: Any = None

    def open(self, hello: Message, receive: Callable[[Message], None],
             closed: Callable[[], None]) -> None:
        from comm import create_comm  # noqa: PLC0415  (ipykernel replaces it in a kernel)

        self.close()
        opened: Any = create_comm(target_name=self.target, data=hello)
        opened.on_msg(lambda msg: receive(msg["content"]["data"]))
        opened.on_close(lambda _msg: closed() if self._comm is opened else None)
        self._comm = opened

    def send(self, message: Message) -> None:
        if self._comm is not None:
            self._comm.send(data=message)

    def close(self) -> None:
        opened, self._comm = self._comm, None
        if opened is not None:
            opened.close()


class BridgeProvider:
    """A NotebookProvider preferring the live notebook (see the module docstring)."""

    def __init__(self, shell: Any, channel: BridgeChannel, notify: Notify | None = None) -> None:
        self.shell = shell
        self.channel = channel
        self.files = FileNotebookProvider(user_ns=lambda: getattr(shell, "user_ns", {}))
        self._notify = notify or print
        self._noticed = False
        self._docs: dict[tuple[str | None, str | None], PreferLive] = {}

    def current(self) -> NotebookDocument | None:
        file = self.files.current()
        path = file.path if file is not None else None
        if path is None and self.channel.absent:
            return None
        return self._doc(path, client_id(self.shell))

    def current_path(self) -> str | None:
        found = self.files.current_path()
        if found is not None:
            return found
        client = client_id(self.shell)
        tabs = self.channel.tabs()
        tab = tabs.get(client) if client else next(iter(tabs.values()), None)
        return tab.absolute_path if tab is not None else None

    def open(self, path: str) -> NotebookDocument:
        wanted = os.path.realpath(path)
        file = self.files.current()
        if file is not None and file.path is not None and os.path.realpath(file.path) == wanted:
            return self._doc(file.path, client_id(self.shell))
        for tab in self.channel.tabs().values():
            if os.path.realpath(tab.absolute_path) == wanted:
                return self._doc(tab.absolute_path, tab.client)
        return self.files.open(path)

    def _doc(self, path: str | None, client: str | None) -> PreferLive:
        key = (path, client)
        doc = self._docs.get(key)
        if doc is None:
            doc = self._docs[key] = PreferLive(self, LiveNotebook(self.channel, path, client))
        return doc

    def fell_back(self, why: BridgeUnavailableError, path: str | None) -> None:
        """Say once that edits go to the file, and why."""
        if self._noticed:
            return
        self._noticed = True
        where = f"go to {path} on disk" if path else "cannot reach the notebook"
        self._notify(f"[agent_ext] Notebook edits {where}: {why} Where the notebook is open "
                     "in a browser, File > Reload Notebook from Disk shows the agent's edits.")


class PreferLive:
    """The live notebook while the bridge answers; the .ipynb file once it does not."""

    def __init__(self, provider: BridgeProvider, live_doc: LiveNotebook) -> None:
        self._provider = provider
        self._live = live_doc
        #: False once the bridge did not answer and the file serves instead.
        self.live = True

    @property
    def path(self) -> str | None:
        return self._live.path

    @path.setter
    def path(self, value: str | None) -> None:
        self._live.path = value

    async def read(self) -> NotebookSnapshot:
        return await self._run(lambda doc: doc.read())

    async def replace_source(self, cell_id: str, source: str, *, clear_outputs: bool) -> None:
        await self._run(lambda doc: doc.replace_source(cell_id, source,
                                                       clear_outputs=clear_outputs))

    async def insert(self, after_cell_id: str | None, cell_type: str, source: str,
                     cell_id: str) -> None:
        await self._run(lambda doc: doc.insert(after_cell_id, cell_type, source, cell_id))

    async def delete(self, cell_id: str) -> None:
        await self._run(lambda doc: doc.delete(cell_id))

    async def move(self, cell_id: str, after_cell_id: str | None) -> None:
        await self._run(lambda doc: doc.move(cell_id, after_cell_id))

    async def set_type(self, cell_id: str, cell_type: str) -> None:
        await self._run(lambda doc: doc.set_type(cell_id, cell_type))

    async def set_outputs(self, cell_id: str, outputs: list[dict[str, Any]],
                          execution_count: int | None) -> None:
        await self._run(lambda doc: doc.set_outputs(cell_id, outputs, execution_count))

    async def save(self) -> None:
        await self._run(lambda doc: doc.save())

    async def ensure_persistent_ids(self) -> bool:
        return await self._run(lambda doc: doc.ensure_persistent_ids())

    async def selection(self) -> str | None:
        return await self._run(lambda doc: doc.selection())

    async def _run(self, op: Callable[[NotebookDocument], Awaitable[T]]) -> T:
        """``op`` on the live notebook; on the file when the bridge is unavailable.

        Only a failed handshake falls back (nothing was sent then); a request that timed out
        may have landed, so its error goes to the caller.
        """
        try:
            done = await op(self._live)
        except BridgeUnavailableError as why:
            self.live = False
            path = self._live.path
            self._provider.fell_back(why, path)
            if path is None:
                raise NotebookError(why.code, f"{why} No notebook path is known either, so the "
                                    "agent cannot edit the notebook from this kernel.") from None
        else:
            self.live = True
            return done
        return await op(self._file(path))

    def _file(self, path: str) -> FileNotebook:
        return self._provider.files.open(path)


def client_id(shell: Any) -> str | None:
    """The kernel client (browser tab) that sent the running cell, when there is one."""
    kernel = getattr(shell, "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if get_parent is None:
        return None
    parent = get_parent()
    header = parent.get("header") if isinstance(parent, Mapping) else None
    session = header.get("session") if isinstance(header, Mapping) else None
    return session if isinstance(session, str) and session else None


_installed: dict[int, BridgeProvider] = {}


def install_bridge(shell: Any, *, notify: Notify | None = None,
                   hello_timeout: float | None = None) -> BridgeProvider | FileNotebookProvider:
    """Open the bridge comm for ``shell``'s kernel and return the notebook provider.

    Idempotent per shell. Outside a kernel (terminal IPython) there is no browser: the provider
    is files only.
    """
    if getattr(shell, "kernel", None) is None:
        return FileNotebookProvider(user_ns=lambda: getattr(shell, "user_ns", {}))
    found = _installed.get(id(shell))
    if found is not None:
        return found
    channel = BridgeChannel(CommTransport(), version=__version__)
    if hello_timeout is not None:
        channel.hello_timeout = hello_timeout
    channel.start()
    provider = _installed[id(shell)] = BridgeProvider(shell, channel, notify)
    return provider


def uninstall_bridge(shell: Any = None) -> None:
    """Close the bridge comm of ``shell`` (all shells when None)."""
    keys = list(_installed) if shell is None else [id(shell)]
    for key in keys:
        provider = _installed.pop(key, None)
        if provider is not None:
            provider.channel.close()
