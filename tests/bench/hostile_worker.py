"""Runs the hostile-input cases in a fresh process and prints one JSON line per case.

For each case: how long the call took, the longest stall of the event loop while it ran (a
ticker every 5 ms), the peak resident memory of the process during it (Linux's VmHWM, reset
before each case), the result's error code and size, and how much the session's files on disk
grew (the working folder, spilled results, shell logs). A fresh process keeps the figures free of
what the test runner itself holds. Before the first case the agent builds a model request, as
a session's first turn does, so that loading the tools' modules is not counted in a case; and each case starts after a
full garbage collection, so that it is not charged for the previous one's garbage.

Usage: python hostile_worker.py WORKDIR
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from agent_ext import Agent, FunctionTool
from agent_ext.models import ScriptedModel
from agent_ext.tools.shell_jobs import ShellJobs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_cases import CASES, MARKER, prepare


def _reset_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _peak_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return -1.0


async def _measured(agent: Agent, tool: str, args: Any) -> dict[str, Any]:
    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last - 0.005)
            last = now

    _reset_peak()
    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0.02)
    started = time.perf_counter()
    try:
        result = await asyncio.wait_for(agent.call_tool(tool, args), 120)
        code = result.error.code if result.error else None
        size = len(result.text)
    except asyncio.TimeoutError:
        code, size = "hung", 0
    seconds = time.perf_counter() - started
    stop.set()
    await task
    return {"seconds": round(seconds, 3), "max_gap": round(max(gaps, default=0.0), 4),
            "peak_mb": round(_peak_mb(), 1), "code": code, "chars": size}


def _disk_bytes(agent: Agent, workdir: Path) -> int:
    """What the session has on disk: the working folder, spilled results and shell logs."""
    roots = [workdir, agent.store.session_dir]
    jobs = agent.context.service(ShellJobs)
    if jobs is not None:
        roots.append(jobs.log_dir())
    total = 0
    for root in roots:
        for folder, _, files in os.walk(root):
            for name in files:
                with contextlib.suppress(OSError):
                    total += (Path(folder) / name).stat().st_size
    return total


async def _idle_gap(seconds: float) -> float:
    """The longest gap of the same ticker while nothing runs: the machine's own noise."""
    gaps: list[float] = []
    last = time.perf_counter()
    end = last + seconds
    while last < end:
        await asyncio.sleep(0.005)
        now = time.perf_counter()
        gaps.append(now - last - 0.005)
        last = now
    return round(max(gaps, default=0.0), 4)


async def main(workdir: Path) -> None:
    prepare(workdir)
    agent = Agent(ScriptedModel([]), cwd=workdir, mode="bypassPermissions", plugins=False,
                  mcp=False, notebook=str(workdir / "big.ipynb"))
    for i in range(300):
        agent.registry.register_external("srv", FunctionTool(
            lambda **kw: "", name=f"tool_{i}", description=f"does thing {i} with email and files",
            parameters={"type": "object", "properties": {}}))
    agent.request()  # what a session's first model turn does: every tool's module is loaded
    # The suite's own data (a 200,000-item list, a 5,000-deep dict) is set aside from the
    # collector, and each case starts after a full collection: a case is not charged for
    # walking the harness's objects or the previous case's garbage.
    gc.collect()
    gc.freeze()
    print(json.dumps({"case": "__idle__", "max_gap": await _idle_gap(3.0)}), flush=True)
    try:
        for name, tool, args in CASES:
            gc.collect()
            before = _disk_bytes(agent, workdir)
            row = await _measured(agent, tool, args)
            row["disk_mb"] = round((_disk_bytes(agent, workdir) - before) / 2**20, 1)
            print(json.dumps({"case": name, **row}), flush=True)
    finally:
        await agent.aclose()
    print(json.dumps({"case": "__closed__", "marker": MARKER}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
