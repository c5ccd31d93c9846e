"""The kernel side of the bridge against a scripted frontend (no browser, no kernel).

The fake frontend answers from another thread, as kernel subshells deliver comm messages. Each
test runs its coroutine on a loop in a thread of its own: Playwright's sync API holds the main
thread's loop while the browser tests of this session run.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest

from agent_ext.jupyter.bridge import BridgeProvider
from agent_ext.notebook.document import NotebookError
from agent_ext.notebook.live import (
    PROTOCOL,
    BridgeChannel,
    BridgeUnavailableError,
    LiveNotebook,
    Message,
)

Msg = dict[str, Any]


class FakeTabs:
    """A Transport whose tabs answer like the extension (only the addressed tab replies)."""

    def __init__(self, clients: list[str], *, protocol: int = PROTOCOL, silent: bool = False):
        self.clients, self.protocol, self.silent = clients, protocol, silent
        self.cells = [{"id": "a", "cell_type": "code", "source": "x = 1", "metadata": {},
                       "outputs": [], "execution_count": None}]
        self.revs = {"a": 1}
        self.sent: dict[str, int] = {}
        self.requests: list[Msg] = []
        self.receive: Callable[[Message], None] = lambda m: None
        self.epoch: object = None

    def open(self, hello: Msg, receive: Callable[[Message], None], closed: Callable[[], None]):
        self.receive = receive
        for client in self.clients:
            self._reply({"rid": hello["rid"], "ok": True, "protocol": self.protocol,
                         "version": "9.9", "client": client, "path": "nb.ipynb", "root": "/r"})

    def send(self, message: Msg) -> None:
        self.requests.append(message)
        if message["to"] not in self.clients:
            return
        op = message["op"]
        if op == "read":
            if message["cache"] != self.epoch:
                self.sent.clear()
                self.epoch = message["cache"]
            entries: list[list[Any]] = []
            for cell in self.cells:
                rev = self.revs[cell["id"]]
                if self.sent.get(cell["id"]) == rev and message["cache"] is not None:
                    entries.append([cell["id"], rev])
                else:
                    entries.append([cell["id"], rev, cell])
                    self.sent[cell["id"]] = rev
            self._reply({"rid": message["rid"], "ok": True, "cells": entries, "metadata": {},
                         "nbformat": 4, "nbformat_minor": 5})
        elif op == "replace_source" and message["cell_id"] != "a":
            self._reply({"rid": message["rid"], "ok": False, "code": "notebook_cell_not_found",
                         "message": "No cell with id 'zz'."})
        else:
            self._reply({"rid": message["rid"], "ok": True})

    def close(self) -> None:
        pass

    def _reply(self, data: Msg) -> None:
        if not self.silent:
            threading.Thread(target=self.receive, args=(data,)).start()


def in_thread(coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` to its end on a new loop in another thread, re-raising its error."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(coro)
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(30)
    if failure:
        raise failure[0]


async def _test_reads_are_incremental_and_edits_are_addressed_to_the_running_tab() -> None:
    tabs = FakeTabs(["other", "mine"])
    channel = BridgeChannel(tabs, hello_timeout=2)
    channel.start()
    doc = LiveNotebook(channel, None, "mine")
    first = await doc.read()
    assert [c.source for c in first.cells] == ["x = 1"]
    assert first.path == "/r/nb.ipynb"
    again = await doc.read()
    assert again.cells[0] is first.cells[0]
    assert len(tabs.requests[-1]) == 4 and len(tabs.sent) == 1
    await doc.replace_source("a", "x = 2", clear_outputs=True)
    assert tabs.requests[-1]["to"] == "mine"
    with pytest.raises(NotebookError) as err:
        await doc.replace_source("zz", "y", clear_outputs=False)
    assert err.value.code == "notebook_cell_not_found"


async def _test_a_cache_miss_reads_everything_again() -> None:
    tabs = FakeTabs(["mine"])
    channel = BridgeChannel(tabs)
    channel.start()
    doc = LiveNotebook(channel, "/x.ipynb", "mine")
    await doc.read()
    tabs.sent["a"] = tabs.revs["a"]
    doc._cache.clear()
    snap = await doc.read()
    assert snap.cells[0].source == "x = 1"


async def _test_no_extension_means_the_file_and_one_notice(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
    nbformat.write(nb, path)
    channel = BridgeChannel(FakeTabs(["mine"], silent=True), hello_timeout=0.2)
    notices: list[str] = []
    running = {"header": {"session": "mine"}}
    shell = SimpleNamespace(user_ns={"__session__": str(path)},
                            kernel=SimpleNamespace(get_parent=lambda: running))
    provider = BridgeProvider(shell, channel, notices.append)
    assert provider.current_path() == str(path) and not provider.started
    doc = provider.current()
    assert doc is not None and provider.started and doc.live
    snap = await doc.read()
    assert doc.live is False and channel.absent
    await doc.replace_source(snap.cells[0].id or "", "x = 2", clear_outputs=False)
    assert nbformat.read(path, as_version=4).cells[0].source == "x = 2"
    assert len(notices) == 1 and "no JupyterLab or Notebook 7 page with the agent-ext extension answered" in notices[0]


async def _test_no_extension_and_no_path_says_what_to_do() -> None:
    channel = BridgeChannel(FakeTabs(["mine"], silent=True), hello_timeout=0.2)
    notices: list[str] = []
    running = {"header": {"session": "mine"}}
    shell = SimpleNamespace(user_ns={}, kernel=SimpleNamespace(get_parent=lambda: running))
    provider = BridgeProvider(shell, channel, notices.append)
    doc = provider.current()
    assert doc is not None and doc.path is None
    with pytest.raises(NotebookError, match="No notebook path is known either") as err:
        await doc.read()
    assert err.value.code == "notebook_not_open" and doc.live is False
    assert err.value.__suppress_context__
    assert len(notices) == 1 and "cannot reach the notebook" in notices[0]
    assert provider.current() is None  # the handshake was waited for in vain


async def _test_a_timed_out_request_is_not_sent_to_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), path)
    tabs = FakeTabs(["mine"])
    channel = BridgeChannel(tabs, request_timeout=0.2)
    notices: list[str] = []
    running = {"header": {"session": "mine"}}
    shell = SimpleNamespace(user_ns={"__session__": str(path)},
                            kernel=SimpleNamespace(get_parent=lambda: running))
    doc = BridgeProvider(shell, channel, notices.append).current()
    assert doc is not None
    await doc.read()
    tabs.clients = []
    with pytest.raises(NotebookError, match="may or may not have landed"):
        await doc.delete("a")
    assert doc.live and notices == []


async def _test_another_protocol_is_refused_with_what_to_do() -> None:
    channel = BridgeChannel(FakeTabs(["mine"], protocol=PROTOCOL + 1))
    channel.start()
    with pytest.raises(BridgeUnavailableError, match="Install the same agent-ext version"):
        await LiveNotebook(channel, None, "mine").read()


async def _test_a_tab_that_stops_answering_times_out_clearly() -> None:
    tabs = FakeTabs(["mine"])
    channel = BridgeChannel(tabs, request_timeout=0.2)
    channel.start()
    doc = LiveNotebook(channel, None, "mine")
    await doc.read()
    tabs.clients = []
    with pytest.raises(NotebookError, match="did not answer 'delete'") as err:
        await doc.delete("a")
    assert err.value.code == "notebook_not_open"


def test_reads_are_incremental_and_edits_are_addressed_to_the_running_tab() -> None:
    in_thread(_test_reads_are_incremental_and_edits_are_addressed_to_the_running_tab())


def test_a_cache_miss_reads_everything_again() -> None:
    in_thread(_test_a_cache_miss_reads_everything_again())


def test_no_extension_means_the_file_and_one_notice(tmp_path: Path) -> None:
    in_thread(_test_no_extension_means_the_file_and_one_notice(tmp_path))


def test_no_extension_and_no_path_says_what_to_do() -> None:
    in_thread(_test_no_extension_and_no_path_says_what_to_do())


def test_a_timed_out_request_is_not_sent_to_the_file(tmp_path: Path) -> None:
    in_thread(_test_a_timed_out_request_is_not_sent_to_the_file(tmp_path))


def test_another_protocol_is_refused_with_what_to_do() -> None:
    in_thread(_test_another_protocol_is_refused_with_what_to_do())


def test_a_tab_that_stops_answering_times_out_clearly() -> None:
    in_thread(_test_a_tab_that_stops_answering_times_out_clearly())
