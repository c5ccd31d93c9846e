"""Each run of the session agent shown in the cell that started it: a widget, or plain text.

A ``TranscriptWidget`` shows the run when a frontend renders widgets. Until that is known the
same events are also written as plain text into a buffer; when no ``ready`` comes (nbclient,
``jupyter execute``) the buffer goes to stdout and the rest of the run follows it there, so a
headless notebook's output still says what happened.
"""

from __future__ import annotations

import asyncio
import io
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_ext.agent import PlainTextRenderer
from agent_ext.agent import events as ev

from .waiting import ignoring_args, resolver

if TYPE_CHECKING:
    from agent_ext.agent import Agent

    from .cell import Cell
    from .waiting import Ticker

log = logging.getLogger("agent_ext.jupyter")


class CellTranscript:
    """One run's display (see the module docstring)."""

    def __init__(self, cell: Cell, agent: Agent) -> None:
        self.cell = cell
        self.agent = agent
        self.widget: Any = None
        self._buffer: io.StringIO | None = None
        self._text: PlainTextRenderer | None = None
        self._probe: asyncio.Task[None] | None = None
        self._asked: set[str] = set()
        if cell.frontend.absent or not self._show_widget():
            self._text = PlainTextRenderer(sys.stdout)

    def _show_widget(self) -> bool:
        """Display the widget; False (plain text instead) when it cannot be shown."""
        try:
            return self._try_widget()
        except Exception:
            # A sink must never break the run it shows: fall back to text, say why in the log.
            log.warning("agent_ext could not show the transcript widget", exc_info=True)
            self.widget = None
            self._buffer = None
            return False

    def _try_widget(self) -> bool:
        try:
            from .widgets import TranscriptWidget  # noqa: PLC0415  (anywidget is heavy)
        except ImportError:
            return False
        self.widget = TranscriptWidget(registry=self.agent.registry,
                                       price_per_mtok=self.agent.price_per_mtok)
        if self.cell.frontend.present:
            self.cell.show(self.widget)
            return True
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Any] = loop.create_future()
        self.widget.on_ready(ignoring_args(resolver(loop, ready)))
        self._buffer = io.StringIO()
        self._text = PlainTextRenderer(self._buffer)
        self.cell.show(self.widget)
        self._probe = asyncio.ensure_future(self._wait_for(ready))
        return True

    async def _wait_for(self, ready: asyncio.Future[Any]) -> None:
        try:
            if await self.cell.frontend.wait_ready(ready, self.cell.config.ready_timeout):
                self._buffer = None
                self._text = None
            else:
                self.flush()
        finally:
            ready.cancel()

    def flush(self) -> None:
        """Write what the buffer holds to stdout and keep writing there (no frontend)."""
        if self._buffer is None:
            return
        sys.stdout.write(self._buffer.getvalue())
        sys.stdout.flush()
        self._buffer = None
        self._text = PlainTextRenderer(sys.stdout)
        # No frontend renders the widget: its saved text fallback would repeat the plain text.
        self.widget = None

    def __call__(self, event: ev.Event) -> None:
        if self.widget is not None:
            self.widget.add_event(event)
        if isinstance(event, ev.ApprovalRequested):
            self._asked.add(event.request.call_id)
        if self._text is not None and not isinstance(event, ev.ApprovalResolved):
            # Decisions get their own audit line from the approver.
            self._text(event)
            if isinstance(event, ev.ToolCallFinished):
                self._permission_line(event)
        if isinstance(event, ev.RunFinished) and self.widget is not None:
            self.widget.finish(event.result)

    def _permission_line(self, event: ev.ToolCallFinished) -> None:
        """Say why a call the policy refused (no approval asked) did not run."""
        error = event.result.error
        if (self._text is not None and error is not None and error.code == "execution_denied"
                and event.call.id not in self._asked):
            self._text.out.write(f"  [permission] {error.message}\n")

    async def settle(self) -> None:
        """Wait until it is known whether the widget rendered (at most ``ready_timeout``)."""
        if self._probe is not None:
            await asyncio.shield(self._probe)


class RunDisplay:
    """The session agent's event sink: a ``CellTranscript`` per run, in the running cell.

    Also starts the ticker for the run, so ``await get_agent().run(...)`` typed as Python is
    as interruptible as a ``%%agent`` cell. A ``%%agent`` cell waits for the frontend probe
    itself (``settle``); a Python-form run ends at once, so its buffered text is written out
    when it finishes rather than lost after the cell ends.
    """

    def __init__(self, cell: Cell, ticker: Ticker, agent: Callable[[], Agent]) -> None:
        self.cell = cell
        self.ticker = ticker
        self.agent = agent
        self.current: CellTranscript | None = None
        self.last: CellTranscript | None = None
        self.settle_in_cell = False

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.RunStarted):
            self.current = CellTranscript(self.cell, self.agent())
            self.ticker.watch(_current_task())
        if self.current is None:
            return
        self.current(event)
        if isinstance(event, ev.RunFinished):
            self.last, self.current = self.current, None
            if not self.settle_in_cell and not self.cell.frontend.present:
                self.last.flush()

    def begin_cell(self) -> None:
        """A ``%%agent`` cell starts a run and will ``settle`` it itself."""
        self.settle_in_cell = True
        self.last = None

    async def settle(self) -> None:
        """Wait until the last run's frontend probe is decided (at most ``ready_timeout``)."""
        if self.last is not None:
            await self.last.settle()

    def flush(self) -> None:
        """Bring the running transcript's text up to date before an audit line (no frontend)."""
        if self.current is not None and self.cell.frontend.absent:
            self.current.flush()


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None
