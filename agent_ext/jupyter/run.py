"""One ``%%agent`` cell: run the prompt on the session agent, awaited inside the cell.

The run is its own task, shielded from the cell's: Kernel → Interrupt cancels the cell, and the
cell then asks the agent to stop (``agent.cancel()``), so the run ends at a clean point with
every tool call answered, and the cell ends with a one-line ``KeyboardInterrupt`` (which also
stops Run All, as an interrupt should).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_ext.agent import Agent

    from .session import Session

#: Seconds a cancelled run may take to wind down before it is cancelled outright.
STOP_GRACE = 5.0


class RunInterrupted(KeyboardInterrupt):
    """The cell's run was interrupted; shown as one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"KeyboardInterrupt: {self}"]


class AgentRunError(RuntimeError):
    """The run stopped on an error (the model unreachable, a key refused): the cell fails, so
    Run All stops there. Shown as one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"AgentRunError: {self}"]


async def run_prompt(session: Session, prompt: str) -> None:
    """Run ``prompt`` to its end (or to an interrupt) with the output in the running cell."""
    __tracebackhide__ = True  # IPython leaves this frame out of tracebacks
    from .trust_prompt import settle_trust  # noqa: PLC0415
    from .where import place  # noqa: PLC0415

    here = place(session.shell)  # before any widget message changes the kernel's parent
    agent = session.agent()

    try:
        await settle_trust(session, agent)
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise RunInterrupted("interrupted at the project trust question: nothing was trusted "
                             "and the prompt was not sent; run the cell again to answer.") from None
    display = session.display
    display.begin_cell()
    task: asyncio.Task[Any] = asyncio.ensure_future(agent.run(prompt, place=here))
    interrupted = False
    try:
        try:
            await asyncio.shield(task)
        except (asyncio.CancelledError, KeyboardInterrupt):
            interrupted = True
            await _stop(agent, task)
        with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt):
            await display.settle()
    finally:
        display.settle_in_cell = False
    if interrupted:
        raise RunInterrupted("the agent run was interrupted; the conversation is kept (every "
                             "tool call answered), so the next %%agent cell goes on from here.")
    result = task.result()
    if getattr(result, "stop_reason", None) == "error":
        raise AgentRunError(getattr(result, "error", None) or "the run stopped on an error")


async def _stop(agent: Agent, task: asyncio.Task[Any]) -> None:
    """Cancel the run cleanly; cancel it outright if it does not end in ``STOP_GRACE`` s."""
    agent.cancel()
    with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt):
        await asyncio.wait({task}, timeout=STOP_GRACE)
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt):
            await asyncio.wait({task}, timeout=1.0)
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: the interrupt is what the user sees
