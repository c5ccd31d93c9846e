"""Starting the test servers, attaching an McpManager to an Agent, and checking for leftovers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from agent_ext.agent import Agent
from agent_ext.agent.events import Notice
from agent_ext.mcp import McpManager, ServerConfig
from agent_ext.mcp.procs import alive
from agent_ext.urls import URLRouter

HERE = Path(__file__).resolve().parent
STDIO = HERE / "stdio_server.py"
HTTP = HERE / "http_server.py"
CATALOGUE = HERE / "catalogue_server.py"


def stdio_config(name: str = "demo", *flags: str, timeout: float | None = None) -> ServerConfig:
    """The stdio demo server (``--spawn-child``, ``--hang``) as a config."""
    return ServerConfig.stdio(name, sys.executable, [str(STDIO), *flags], timeout=timeout)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def http_server(token: str, *, sse: bool = False) -> Iterator[str]:
    """Run the HTTP test server on 127.0.0.1; yields its URL; stops it after."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(HTTP), str(port), token,
                             *(["sse"] if sse else [])],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"the HTTP test server did not start: {err}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/{'sse' if sse else 'mcp'}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if proc.stderr is not None:
            proc.stderr.close()


async def attach_mcp(agent: Agent, configs: Iterable[ServerConfig], **options: Any) -> McpManager:
    """What Agent will do on its first run: start the servers, register tools and mcp://."""
    manager = McpManager(list(configs), agent.registry,
                         on_event=lambda n: agent._emit(Notice(n.text, n.level)), **options)
    router = agent.context.service(URLRouter)
    assert router is not None
    router.register(manager.scheme, replace=True)
    await manager.start()
    return manager


async def until(done: Callable[[], object], seconds: float = 10.0) -> None:
    """Wait until ``done()`` is true or ``seconds`` pass (the test's assert says which)."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:  # noqa: ASYNC110  polling a predicate
        await asyncio.sleep(0.05)


async def wait_gone(pids: Iterable[int], seconds: float = 10.0) -> list[int]:
    """The pids still alive after waiting up to ``seconds`` (empty when all are gone)."""
    left = [p for p in pids if p]
    deadline = time.monotonic() + seconds
    while left and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        left = [p for p in left if alive(p)]
    return left


def kill_leftovers(pids: Iterable[int]) -> None:
    """Clean-up after a failed test: no process outlives the test session."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
