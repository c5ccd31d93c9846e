"""Runs one turn's tool calls: consecutive concurrency-safe calls in parallel, others in order.

Results land in ``results`` in the model's order as they finish, so that a cancelled turn still
leaves every finished call's result for the transcript; the caller answers the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agent_ext.core import ToolResult

from .pipeline import Pipeline, Prepared

MAX_PARALLEL = 8


def groups(prepared: Sequence[Prepared]) -> list[list[int]]:
    """Indexes of calls to run together: runs of concurrency-safe calls, or single calls."""
    out: list[list[int]] = []
    for i, p in enumerate(prepared):
        if p.concurrency_safe and out and prepared[out[-1][-1]].concurrency_safe:
            out[-1].append(i)
        else:
            out.append([i])
    return out


async def run_batch(pipeline: Pipeline, prepared: Sequence[Prepared],
                    results: list[ToolResult | None], *, max_parallel: int = MAX_PARALLEL) -> None:
    """Fill ``results[i]`` for every call; cancellation leaves unfinished slots as None."""
    limit = asyncio.Semaphore(max_parallel)

    async def one(i: int) -> None:
        async with limit:
            results[i] = await pipeline.run(prepared[i])

    for group in groups(prepared):
        if len(group) == 1:
            await one(group[0])
            continue
        tasks = [asyncio.ensure_future(one(i)) for i in group]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
