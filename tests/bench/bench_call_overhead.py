"""Framework overhead per tool call: build + permission + budgets + scheduling.

Prints medians for a trivial async tool called (a) directly, (b) through
``Agent.call_tool`` and (c) inside a scripted run with 50 calls in one turn, and the overhead
of (b) and (c) over (a). Target: median overhead ≤ 1 ms per call.

Run: ``python tests/bench/bench_call_overhead.py``
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from agent_ext import Agent, Kind, tool
from agent_ext.models import ModelResponse, ScriptedModel, ToolCall


@tool(kind=Kind.READ, read_only=True, defer=False)
async def trivial(n: int) -> str:
    """Return the number."""
    return str(n)


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def measure(rounds: int = 2000, batch: int = 50) -> dict[str, float]:
    direct = []
    for i in range(rounds):
        t0 = time.perf_counter()
        await trivial.handler(n=i)
        direct.append(time.perf_counter() - t0)

    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(ScriptedModel([]), cwd=Path(tmp), plugins=False)
        agent.registry.register(trivial)
        via_agent = []
        for i in range(rounds):
            t0 = time.perf_counter()
            await agent.call_tool("trivial", {"n": i})
            via_agent.append(time.perf_counter() - t0)

        per_call_in_run = []
        for r in range(20):
            calls = tuple(ToolCall.of(f"c{r}_{i}", "trivial", {"n": i}) for i in range(batch))
            agent.model = ScriptedModel([ModelResponse(tool_calls=calls), "done"])
            agent.reset()
            t0 = time.perf_counter()
            await agent.run("go")
            per_call_in_run.append((time.perf_counter() - t0) / batch)
        await agent.aclose()
    return {
        "direct_ms": _ms(direct),
        "call_tool_ms": _ms(via_agent),
        "in_run_per_call_ms": _ms(per_call_in_run),
        "overhead_call_tool_ms": _ms(via_agent) - _ms(direct),
        "overhead_in_run_ms": _ms(per_call_in_run) - _ms(direct),
    }


def report(figures: dict[str, float]) -> str:
    return "\n".join([
        "tool-call overhead (median, trivial async tool, scripted model)",
        f"  direct handler call       {figures['direct_ms']:.4f} ms",
        (f"  Agent.call_tool           {figures['call_tool_ms']:.4f} ms "
        f"(overhead {figures['overhead_call_tool_ms']:.4f} ms)"),
        (f"  in a run, 50 calls/turn   {figures['in_run_per_call_ms']:.4f} ms per call "
        f"(overhead {figures['overhead_in_run_ms']:.4f} ms; includes the model step and "
        "transcript)"),
        "  target: overhead <= 1 ms",
    ])


if __name__ == "__main__":
    print(report(asyncio.run(measure())))
