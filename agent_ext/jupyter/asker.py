"""``WidgetAsker``: the ``ask_user`` tool's questions as a widget in the running cell.

Like approvals, the answer arrives through a future resolved with ``call_soon_threadsafe``, the
wait is sliced, and a question no page has shown for ``AgentExt.page_gone_timeout`` seconds is
withdrawn. With no frontend (or no widgets) it answers None: the tool then tells the
model nobody can be asked and to proceed on its own judgement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_ext.core.interaction import Answer

from .cell import Cell, ask
from .waiting import beat_for

if TYPE_CHECKING:
    from agent_ext.core.interaction import Question

NO_ANSWER = "No answer came; the agent goes on without one."


class WidgetAsker:
    """The session agent's ``Asker`` service (see the module docstring)."""

    def __init__(self, cell: Cell) -> None:
        self.cell = cell

    async def __call__(self, question: Question) -> Answer | None:
        if self.cell.frontend.absent:
            return None
        try:
            from .widgets import AskUserWidget  # noqa: PLC0415  (anywidget is heavy)
        except ImportError:
            return None
        config = self.cell.config
        widget = AskUserWidget({
            "question": question.text, "multi_select": question.multi_select,
            "allow_text": question.allow_text,
            "options": [{"label": o.label, "description": o.description}
                        for o in question.options]},
            beat=beat_for(config.page_gone_timeout))
        waited, given = await ask(self.cell, widget, widget.on_answer,
                                  interrupted="The run was interrupted before an answer.")
        if given is None:
            if waited != "gone":
                widget.withdraw(NO_ANSWER)
                return None
            widget.withdraw(f"Withdrawn: no page showed this question for "
                            f"{config.page_gone_timeout:g} s (the notebook tab was closed); "
                            "the agent goes on without an answer.")
            self.cell.record(f"[question] {question.text[:80]}: withdrawn, no page showed it "
                             f"for {config.page_gone_timeout:g} s")
            return Answer((), None)  # the model reads: the user did not answer
        widget.show_answer(given)
        return Answer(tuple(given.choices), given.text or None)
