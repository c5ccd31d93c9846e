"""Waiting for a tool's work while the user may cancel the run."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

from agent_ext.core import ExecControl

T = TypeVar("T")
C = TypeVar("C")


async def until_cancelled(waiting: Awaitable[T], control: ExecControl, *, cancelled: C) -> T | C:
    """What ``waiting`` gives, or ``cancelled`` once ``control.cancelled`` is set (the wait is
    then abandoned: cancelled and awaited)."""
    task = asyncio.ensure_future(waiting)
    try:
        while not control.cancelled.is_set():
            done, _ = await asyncio.wait({task}, timeout=0.1)
            if done:
                return task.result()
        return cancelled
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
