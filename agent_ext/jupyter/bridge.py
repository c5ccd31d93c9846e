"""The kernel end of the notebook bridge: a comm to the agent-ext extension, and the provider.

``bridge_provider(shell)`` gives the session's ``NotebookProvider``. Its documents edit the live
notebook in the tab that ran the agent's cell while the extension answers; without it (VS Code,
classic Notebook, nbclient, an old extension) they edit the .ipynb file, and say so once. The
comm opens when a tool first needs a notebook, not with every session: a run that never touches
a notebook sends the frontend nothing (and headless clients print no warning about an unknown
comm target). Asking where the notebook is opens nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from agent_ext._version import __version__
from agent_ext.notebook.document import NotebookDocument, NotebookError
from agent_ext.notebook.file import FileNotebook
from agent_ext.notebook.live import (
    TARGET,
    BridgeChannel,
    BridgeUnavailableError,
    LiveNotebook,
    Message,
)
from agent_ext.notebook.provider import FileNotebookProvider

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
        self._started = False
        self._docs: dict[tuple[str | None, str | None], LiveNotebook] = {}

    @property
    def started(self) -> bool:
        """Whether the comm was opened (a tool asked for a notebook)."""
        return self._started

    def current(self) -> NotebookDocument | None:
        self._start()
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
        self._start()
        wanted = os.path.realpath(path)
        file = self.files.current()
        if file is not None and file.path is not None and os.path.realpath(file.path) == wanted:
            return self._doc(file.path, client_id(self.shell))
        for tab in self.channel.tabs().values():
            if os.path.realpath(tab.absolute_path) == wanted:
                return self._doc(tab.absolute_path, tab.client)
        return self.files.open(path)

    def close(self) -> None:
        """Close the comm; a later use opens it again."""
        self._started = False
        self.channel.close()

    def _start(self) -> None:
        """Open the comm and send the handshake, once (the tabs answer in the background)."""
        if not self._started:
            self._started = True
            self.channel.start()

    def _doc(self, path: str | None, client: str | None) -> LiveNotebook:
        key = (path, client)
        doc = self._docs.get(key)
        if doc is None:
            doc = self._docs[key] = LiveNotebook(self.channel, path, client, self._file_instead)
        return doc

    def _file_instead(self, why: BridgeUnavailableError, path: str | None) -> FileNotebook:
        """The file that serves while the bridge is unavailable; said once, with why."""
        if not self._noticed:
            self._noticed = True
            where = f"go to {path} on disk" if path else "cannot reach the notebook"
            self._notify(f"[agent_ext] Notebook edits {where}: {why} Where the notebook is open "
                         "in a browser, File > Reload Notebook from Disk shows the agent's edits.")
        if path is None:
            raise NotebookError(why.code, f"{why} No notebook path is known either, so the "
                                "agent cannot edit the notebook from this kernel.") from None
        return self.files.open(path)


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


def bridge_provider(shell: Any, *,
                    notify: Notify | None = None) -> BridgeProvider | FileNotebookProvider:
    """The notebook provider of ``shell``'s kernel (one per shell; its comm opens on first use).

    Outside a kernel (terminal IPython) there is no browser: the provider is files only.
    """
    if getattr(shell, "kernel", None) is None:
        return FileNotebookProvider(user_ns=lambda: getattr(shell, "user_ns", {}))
    found = _installed.get(id(shell))
    if found is None:
        channel = BridgeChannel(CommTransport(), version=__version__)
        found = _installed[id(shell)] = BridgeProvider(shell, channel, notify)
    return found


def uninstall_bridge(shell: Any = None) -> None:
    """Close the bridge comm of ``shell`` (all shells when None)."""
    keys = list(_installed) if shell is None else [id(shell)]
    for key in keys:
        provider = _installed.pop(key, None)
        if provider is not None:
            provider.close()
