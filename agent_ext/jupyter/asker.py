"""``WidgetAsker``: the ``ask_user`` tool's questions as a widget in the running cell.

Like approvals, the answer arrives through a future resolved with ``call_soon_threadsafe``, the
wait is sliced, and a question no page has shown for ``AgentExt.page_gone_timeout`` seconds is
withdrawn. With no frontend (or no widgets) it answers None: the tool then tells the
model nobody can be asked and to proceed on its own judgement.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agent_ext.core.interaction import Answer

from .waiting import beat_for, first_of, ignoring_args, resolver, wait_answer

if TYPE_CHECKING:
    from agent_ext.core.interaction import Question

    from .session import Session


class WidgetAsker:
    """The session agent's ``Asker`` service (see the module docstring)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    async def __call__(self, question: Question) -> Answer | None:
        if self.session.frontend.absent:
            return None
        try:
            from .widgets import AskUserWidget  # noqa: PLC0415  (anywidget is heavy)
        except ImportError:
            return None
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Any] = loop.create_future()
        answered: asyncio.Future[Any] = loop.create_future()
        widget = AskUserWidget({
            "question": question.text, "multi_select": question.multi_select,
            "allow_text": question.allow_text,
            "options": [{"label": o.label, "description": o.description}
                        for o in question.options]},
            beat=beat_for(self.session.config.page_gone_timeout))
        widget.on_ready(ignoring_args(resolver(loop, ready)))
        widget.on_answer(resolver(loop, answered))
        self.session.show(widget)
        config = self.session.config
        try:
            seen = await self.session.frontend.wait_ready(first_of(ready, answered),
                                                          config.ready_timeout)
            if not seen and not answered.done():
                widget.withdraw("No answer came; the agent goes on without one.")
                return None
            waited = await wait_answer(answered, widget, config.approval_timeout,
                                       config.page_gone_timeout)
            if waited != "answered":
                widget.withdraw("No answer came; the agent goes on without one." if
                                waited == "timeout" else
                                f"Withdrawn: no page showed this question for "
                                f"{config.page_gone_timeout:g} s (the notebook tab was "
                                "closed); the agent goes on without an answer.")
                if waited == "gone":
                    self.session.record(f"[question] {question.text[:80]}: withdrawn, no page "
                                        f"showed it for {config.page_gone_timeout:g} s")
                    return Answer((), None)  # the model reads: the user did not answer
                return None
        except asyncio.CancelledError:
            widget.withdraw("The run was interrupted before an answer.")
            raise
        finally:
            for future in (ready, answered):
                if not future.done():
                    future.cancel()
        given = answered.result()
        widget.show_answer(given)
        return Answer(tuple(given.choices), given.text or None)
