"""Waiting in short slices, and the ticker that keeps the event loop awake during a run.

Kernel → Interrupt sends SIGINT, which may land on any thread; Python runs the handler only
when the main thread next executes bytecode. While the kernel's loop sleeps in ``select`` that
can take as long as the next incoming message (seconds, minutes). Waking the loop every
``SLICE`` seconds bounds the delay, so an interrupt cancels a run within about a second.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Literal, Protocol, TypeVar

T = TypeVar("T")
SLICE = 0.25


async def wait_sliced(future: asyncio.Future[T], timeout: float | None = None) -> bool:
    """Wait until ``future`` is done or ``timeout`` seconds pass (None: no limit).

    Returns whether it is done; the future itself is never cancelled here.
    """
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    while not future.done():
        step = SLICE if deadline is None else min(SLICE, deadline - loop.time())
        if step <= 0:
            return False
        await asyncio.wait({future}, timeout=step)
    return True


class Seen(Protocol):
    """A widget that knows when a page last showed it (``time.monotonic()``)."""

    last_seen: float


Waited = Literal["answered", "timeout", "gone"]


def beat_for(gone_after: float) -> float:
    """Seconds between a waiting widget's "alive" messages, for a ``gone_after`` bound: a few
    beats fit in the bound, and a background tab's throttled timers still keep up."""
    return 0.0 if gone_after <= 0 else min(10.0, max(0.25, gone_after / 4))


async def wait_answer(future: asyncio.Future[Any], widget: Seen, timeout: float,
                      gone_after: float) -> Waited:
    """Wait in slices for ``future`` (a widget's answer): "answered"; "timeout" once
    ``timeout`` seconds pass (0: no limit); "gone" once no page has shown ``widget`` for
    ``gone_after`` seconds (0: never)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout if timeout > 0 else None
    while not future.done():
        if deadline is not None and loop.time() >= deadline:
            return "timeout"
        if gone_after > 0 and time.monotonic() - widget.last_seen >= gone_after:
            return "gone"
        step = SLICE if deadline is None else max(0.0, min(SLICE, deadline - loop.time()))
        await asyncio.wait({future}, timeout=step)
    return "answered"


def resolver(loop: asyncio.AbstractEventLoop,
             future: asyncio.Future[T]) -> Callable[[T], None]:
    """A callback, safe to call from any thread, that resolves ``future`` with its argument.

    Widget handlers may run on a kernel subshell thread; setting a future's result there
    directly would not wake the loop, so the result is handed over with
    ``call_soon_threadsafe``. Later calls are ignored.
    """
    def settle(value: T) -> None:
        if not future.done():
            future.set_result(value)

    def resolve(value: T) -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, value)

    return resolve


def ignoring_args(resolve: Callable[[None], None]) -> Callable[..., None]:
    """``resolve(None)``, whatever a widget passes to its ``ready`` callback."""
    def call(*_args: object) -> None:
        resolve(None)

    return call


def first_of(*futures: asyncio.Future[Any]) -> asyncio.Future[None]:
    """A future done as soon as any of ``futures`` is (e.g. a decision also proves a ready)."""
    either: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def done(_future: asyncio.Future[Any]) -> None:
        if not either.done():
            either.set_result(None)

    for future in futures:
        future.add_done_callback(done)
    return either


class Ticker:
    """Wakes the loop every ``SLICE`` seconds while the tasks it watches are running."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def watch(self, task: asyncio.Future[Any] | None) -> None:
        """Tick until ``task`` is done (or until ``stop``)."""
        if task is None or task.done():
            return
        ticking = asyncio.ensure_future(self._tick(task))
        self._tasks.add(ticking)
        ticking.add_done_callback(self._tasks.discard)

    @property
    def active(self) -> int:
        return len(self._tasks)

    def stop(self) -> None:
        """Stop every ticker (the extension is being unloaded)."""
        for ticking in list(self._tasks):
            ticking.cancel()
        self._tasks.clear()

    @staticmethod
    async def _tick(task: asyncio.Future[Any]) -> None:
        while not task.done():  # noqa: ASYNC110  (waking the loop is the point)
            await asyncio.sleep(SLICE)
