"""What a call costs the process it runs in: the event loop's longest stall, and peak memory.

A ticker wakes every 5 ms while the call runs; the longest gap past those 5 ms is how long the
loop could not answer anything else (a widget click, an interrupt). Peak memory is Linux's
VmHWM, reset before the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
TICK = 0.005


def reset_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def peak_mb() -> float:
    """The peak resident memory since the last ``reset_peak`` (-1 where it cannot be read)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return -1.0


@dataclass
class Measured(Generic[T]):
    value: T
    seconds: float
    max_gap: float
    peak_mb: float


async def measured(call: Awaitable[T]) -> Measured[T]:
    """Await ``call`` with the ticker running; its exception, if any, propagates."""
    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(TICK)
            now = time.perf_counter()
            gaps.append(now - last - TICK)
            last = now

    reset_peak()
    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0.02)
    started = time.perf_counter()
    try:
        value = await call
    finally:
        seconds = time.perf_counter() - started
        stop.set()
        await task
    return Measured(value, seconds, max(gaps, default=0.0), peak_mb())


async def idle_gap(seconds: float) -> float:
    """The longest gap of the same ticker while nothing runs: the machine's own noise."""
    return (await measured(asyncio.sleep(seconds))).max_gap
