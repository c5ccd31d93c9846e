"""Shell tool costs: per-call overhead of a trivial command, and 10 MB of output.

Prints the median wall time of ``true`` through the tool against a bare ``subprocess.run``,
and the time and peak traced memory of a 10 MB output (which must stay bounded).

Run: ``python tests/bench/bench_shell.py``
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

from agent_ext.core import ExecControl, ToolContext, ToolResult
from agent_ext.tools.shell import ShellTool
from agent_ext.tools.shell_jobs import ShellJobs


async def _run(ctx: ToolContext, command: str) -> ToolResult:
    built = ShellTool().build({"command": command}, ctx)
    assert not isinstance(built, ToolResult)
    return await built.execute(ExecControl())


def _bare() -> None:
    subprocess.run(["/bin/bash", "-c", "true"], check=False)


async def measure(rounds: int = 50) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ToolContext(cwd=Path(tmp))
        tool_times, bare_times = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            await _run(ctx, "true")
            tool_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            _bare()
            bare_times.append(time.perf_counter() - t0)
        tracemalloc.start()
        t0 = time.perf_counter()
        result = await _run(ctx, "head -c 10000000 /dev/zero | tr '\\0' x")
        big_s = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        jobs = ctx.service(ShellJobs)
        if jobs is not None:
            await jobs.kill_all()
    return {"tool_ms": statistics.median(tool_times) * 1000,
            "bare_ms": statistics.median(bare_times) * 1000,
            "big_s": big_s, "big_peak_mb": peak / 2**20, "big_result_chars": len(result.text)}


def report(f: dict[str, float]) -> str:
    return (f"shell `true`: {f['tool_ms']:.2f} ms median (bare subprocess {f['bare_ms']:.2f} ms)\n"
            f"10 MB output: {f['big_s']:.2f} s, peak traced memory {f['big_peak_mb']:.1f} MB, "
            f"result {f['big_result_chars']:.0f} chars")


if __name__ == "__main__":
    print(report(asyncio.run(measure())))
