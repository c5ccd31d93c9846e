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
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from agent_ext import Agent, FunctionTool, ToolResult
from agent_ext.models import ScriptedModel
from agent_ext.tools.shell_jobs import ShellJobs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_cases import CASES, MARKER, prepare
from loop_meter import idle_gap, measured


async def _within(call: Awaitable[ToolResult], seconds: float) -> ToolResult | None:
    """``call``'s result, or None when it did not finish in ``seconds``."""
    try:
        return await asyncio.wait_for(call, seconds)
    except asyncio.TimeoutError:
        return None


async def _measured(agent: Agent, tool: str, args: Any) -> dict[str, Any]:
    m = await measured(_within(agent.call_tool(tool, args), 120))
    result = m.value
    code = "hung" if result is None else result.error.code if result.error else None
    return {"seconds": round(m.seconds, 3), "max_gap": round(m.max_gap, 4),
            "peak_mb": round(m.peak_mb, 1), "code": code,
            "chars": len(result.text) if result is not None else 0}


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
    print(json.dumps({"case": "__idle__", "max_gap": round(await idle_gap(3.0), 4)}), flush=True)
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
