"""The running cell as the approver, the asker, the trust question and the transcript use it.

They show widgets and write lines into the cell's output, and they wait for a person there:
``Cell`` is that much of the session (the ``Session`` is one), and ``ask`` is the one way a
question widget is shown and waited for. The answer arrives through a future resolved with
``call_soon_threadsafe`` (widget callbacks may run on a kernel subshell thread), the wait is
sliced so Kernel → Interrupt gets through, and an interrupt withdraws the question.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from .waiting import Waited, first_of, ignoring_args, resolver, wait_answer

if TYPE_CHECKING:
    from .config import AgentExt
    from .frontend import Frontend

T = TypeVar("T")


class Cell(Protocol):
    """Where a run's widgets and audit lines go, and what waiting for a person there needs."""

    config: AgentExt
    frontend: Frontend

    def show(self, obj: Any) -> None:
        """Display ``obj`` in the running cell."""
        ...

    def record(self, line: str) -> None:
        """Write a line into the running cell's output, after the run's text so far."""
        ...

    def mode(self) -> str:
        """The permission mode in force (``dontAsk`` asks nobody)."""
        ...


class QuestionWidget(Protocol):
    """A widget that asks: it reports its rendering, can be withdrawn, and knows when a page
    last showed it."""

    last_seen: float

    def on_ready(self, callback: Callable[[], object]) -> None: ...

    def withdraw(self, note: str) -> None: ...


Asked = Literal[Waited, "unseen"]


async def ask(cell: Cell, widget: QuestionWidget, on_answer: Callable[[Callable[[T], None]], None],
              *, interrupted: str, page_gone: bool = True) -> tuple[Asked, T | None]:
    """Show ``widget`` in ``cell`` and wait for the answer ``on_answer`` registers for.

    Returns how the wait ended and the answer (None unless "answered"): "unseen" when no
    frontend rendered the widget within ``AgentExt.ready_timeout``, "timeout" after
    ``AgentExt.approval_timeout``, "gone" once no page has shown it for
    ``AgentExt.page_gone_timeout`` (only with ``page_gone``). On an interrupt the widget is
    withdrawn with the note ``interrupted`` and the cancellation goes on.
    """
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    answered: asyncio.Future[T] = loop.create_future()
    widget.on_ready(ignoring_args(resolver(loop, ready)))
    on_answer(resolver(loop, answered))
    cell.show(widget)
    config = cell.config
    try:
        if (not await cell.frontend.wait_ready(first_of(ready, answered), config.ready_timeout)
                and not answered.done()):
            return "unseen", None
        waited = await wait_answer(answered, widget, config.approval_timeout,
                                   config.page_gone_timeout if page_gone else 0.0)
    except asyncio.CancelledError:
        widget.withdraw(interrupted)
        raise
    finally:
        ready.cancel()
        answered.cancel()
    return waited, answered.result() if waited == "answered" else None
