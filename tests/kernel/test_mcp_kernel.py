"""MCP servers in a real kernel: reset, unload and shutdown leave no process, checked by pid.

The kernel runs in a folder whose ``.mcp.json`` configures the stdio test server with
``--spawn-child``, so every check covers a process tree: the server and the child it started.
Every wait is bounded, and each test kills whatever it saw, so a failure leaks nothing.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from agent_ext.mcp.procs import alive
from tests.kernel.harness import KernelSession
from tests.mcp_servers.harness import STDIO, kill_leftovers

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SETUP = """
import json, os, agent_ext
from agent_ext.models import ScriptedModel, call

def build():
    steps = []
    for n in range(3):
        steps += [call("mcp__demo__child_pid", {}, id=f"c{n}"), "done"]
    return agent_ext.get_agent(model=ScriptedModel(steps), rules={"allow": ["mcp__demo"]},
                               trust_project=True)

def pids():
    agent = agent_ext.get_agent()
    last = [r for m in agent.messages if m.role == "tool" for r in m.tool_returns][-1]
    print(json.dumps({"server": [s.pid for s in agent.mcp.status() if s.pid],
                      "child": int(last.content[0].text), "kernel": os.getpid(),
                      "reaper": agent.mcp.reaper_pid}))
"""


def gone_within(pids: Iterable[int], seconds: float) -> list[int]:
    """The pids still alive after up to ``seconds`` (empty when all are gone; 0: look once)."""
    deadline = time.monotonic() + seconds
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if alive(p)]
    return left


@pytest.fixture
def mcp_json(workdir: Path) -> Path:
    """The kernel's folder, configuring the demo server that starts a child of its own."""
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": {
        "command": sys.executable, "args": [str(STDIO), "--spawn-child"]}}}))
    return workdir


@pytest.fixture
def seen() -> Iterator[list[int]]:
    """Every MCP pid a test saw; whatever still runs is killed after the test."""
    pids: list[int] = []
    yield pids
    kill_leftovers(p for p in pids if alive(p))


def run_and_collect(kernel: KernelSession, seen: list[int], prompt: str) -> tuple[list[int], int]:
    """Run a prompt that calls ``child_pid``; the server pids, the child pid and the kernel's."""
    run = kernel.ok(f"%%agent\n{prompt}", timeout=60)
    assert "done" in run.stdout, run.text
    found = json.loads(kernel.ok("pids()").stdout)
    tree = [*found["server"], found["child"]]
    seen.extend(tree)
    assert len(found["server"]) == 1 and found["child"] > 0, found
    assert all(alive(p) for p in tree), found
    return tree, int(found["kernel"])


def test_reset_unload_and_shutdown_leave_no_mcp_process(
        kernel: KernelSession, mcp_json: Path, seen: list[int]) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok(SETUP + "\nbuild()")
    first, _ = run_and_collect(kernel, seen, "which child?")

    reset = kernel.ok("%agent reset")
    assert "MCP servers stopped (demo)" in reset.stdout, reset.text
    assert gone_within(first, 0) == []  # gone when the cell returns, not a moment later
    tools = kernel.ok("print([n for n in agent_ext.get_agent().registry.names() if 'demo' in n])")
    assert tools.stdout.strip() == "[]"

    second, _ = run_and_collect(kernel, seen, "and now?")
    assert set(second).isdisjoint(first)

    kernel.ok("%unload_ext agent_ext")
    assert gone_within(second, 0) == []

    kernel.ok("%load_ext agent_ext")
    kernel.ok("build()")
    third, _ = run_and_collect(kernel, seen, "once more")
    assert set(third).isdisjoint(second)

    kernel.kc.stop_channels()
    start = time.monotonic()
    kernel.km.shutdown_kernel(now=False)
    took = time.monotonic() - start
    assert gone_within(third, 5.0) == []
    # Below jupyter_client's SIGTERM fallback (half of shutdown_wait_time): atexit did it.
    assert took < kernel.km.shutdown_wait_time / 2, took


def test_agent_reset_from_python_stops_the_servers(
        kernel: KernelSession, mcp_json: Path, seen: list[int]) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok(SETUP + "\nbuild()")
    first, _ = run_and_collect(kernel, seen, "which child?")
    kernel.ok("agent_ext.get_agent().reset()")
    assert gone_within(first, 0) == []
    assert kernel.ok("print([s.pid for s in agent_ext.get_agent().mcp.status()])"
                     ).stdout.strip() == "[None]"
    second, _ = run_and_collect(kernel, seen, "and now?")
    assert set(second).isdisjoint(first)


def test_sigterm_to_the_kernel_leaves_no_mcp_process(
        kernel: KernelSession, mcp_json: Path, seen: list[int]) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok(SETUP + "\nbuild()")
    tree, kernel_pid = run_and_collect(kernel, seen, "which child?")
    kernel.kc.stop_channels()
    os.kill(kernel_pid, signal.SIGTERM)
    assert gone_within([kernel_pid], 10.0) == []
    assert gone_within(tree, 5.0) == []


def test_sigkill_to_the_kernel_leaves_no_mcp_process(
        kernel: KernelSession, mcp_json: Path, seen: list[int]) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok(SETUP + "\nbuild()")
    tree, kernel_pid = run_and_collect(kernel, seen, "which child?")
    reaper = json.loads(kernel.ok("pids()").stdout)["reaper"]
    assert reaper and alive(reaper)
    seen.append(reaper)
    kernel.kc.stop_channels()
    os.kill(kernel_pid, signal.SIGKILL)
    assert gone_within([kernel_pid], 10.0) == []
    # No code of the kernel ran: the watcher it left behind killed the server and its child.
    assert gone_within(tree, 5.0) == []
    assert gone_within([reaper], 5.0) == []
