"""``WidgetApprover``: each approval is a diff widget in the running cell, or the headless policy.

The cell awaits an asyncio future per confirmation; the widget's callbacks (possibly on a
kernel subshell thread) resolve it only through ``loop.call_soon_threadsafe``. The first
widget that gets no ``ready`` in time tells the session it has no frontend; from then on the
headless policy answers at once. Waits are sliced so Kernel → Interrupt gets through.

Several approvals of one step of the agent (``ask_many``) are one card group. A waiting widget
hears from its pages every few seconds; once none has for ``AgentExt.page_gone_timeout``
seconds (every tab showing it was closed) the request is withdrawn, a line in the cell says
so, and the agent is told that the user did not answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_ext.agent.approval import ApprovalRequest, Decision, as_decision

from .cell import Cell, ask
from .headless import DONT_ASK, NO_FRONTEND, audit_line, by, describe, headless_decision
from .waiting import beat_for

if TYPE_CHECKING:
    from .config import AgentExt

INTERRUPTED = "The run was interrupted before a decision; nothing ran."


class WidgetApprover:
    """The session agent's approver (see the module docstring)."""

    def __init__(self, cell: Cell) -> None:
        self.cell = cell

    async def __call__(self, request: ApprovalRequest) -> Decision:
        decision = await self._decide(request)
        self.cell.record(audit_line(request, decision))
        return decision

    async def ask_many(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        """Decisions for the approvals of one step, asked together as one card group."""
        decisions = await self._decide_group(list(requests))
        for request, decision in zip(requests, decisions, strict=True):
            self.cell.record(audit_line(request, decision))
        return decisions

    def _no_widget(self) -> str | None:
        """Why no widget can ask (dontAsk mode, no frontend, no widgets), or None when one can."""
        if self.cell.mode() == "dontAsk":
            return DONT_ASK
        if self.cell.frontend.absent:
            return NO_FRONTEND
        try:
            from . import widgets  # noqa: F401, PLC0415  (anywidget is heavy)
        except ImportError as exc:
            return f"the approval widget is unavailable ({exc})"
        return None

    async def _decide(self, request: ApprovalRequest) -> Decision:
        config = self.cell.config
        why = self._no_widget()
        if why is not None:
            return await headless_decision(request, config.headless_allow, why)
        from .widgets import ConfirmDiffWidget  # noqa: PLC0415

        widget = ConfirmDiffWidget(request, beat=beat_for(config.page_gone_timeout))
        waited, answer = await ask(self.cell, widget, widget.on_decision,
                                   interrupted=INTERRUPTED)
        if waited == "gone":
            widget.withdraw(gone_note(config))
            return unseen(config)
        if waited == "answered":
            decision = by(as_decision(answer), "user")
            widget.show_decided(decision)
            return decision
        decision = (await headless_decision(request, config.headless_allow, NO_FRONTEND)
                    if waited == "unseen" else timed_out(config))
        widget.show_decided(decision, describe(decision) + ".")
        return decision

    async def _decide_group(self, requests: list[ApprovalRequest]) -> list[Decision]:
        config = self.cell.config
        why = self._no_widget()
        if why is not None:
            return [await headless_decision(r, config.headless_allow, why) for r in requests]
        from .widgets import ConfirmGroupWidget  # noqa: PLC0415

        widget = ConfirmGroupWidget(requests, beat=beat_for(config.page_gone_timeout))
        waited, _ = await ask(self.cell, widget, widget.on_settled, interrupted=INTERRUPTED)
        answers: dict[str, Decision] = {}
        if waited == "unseen":
            decisions = {r.call_id: await headless_decision(r, config.headless_allow, NO_FRONTEND)
                         for r in requests}
        else:
            answers = {cid: by(d, "user") for cid, d in dict(widget.answers).items()}
            if waited == "gone":
                widget.withdraw(gone_note(config))
                return [answers.get(r.call_id) or unseen(config) for r in requests]
            cancelled = any(d.outcome == "cancel" for d in answers.values())
            rest = by(Decision.cancel(), "user") if cancelled else timed_out(config)
            decisions = {r.call_id: answers.get(r.call_id) or rest for r in requests}
        widget.show_decided(decisions, {cid: describe(d) + "." for cid, d in decisions.items()
                                        if cid not in answers})
        return [decisions[r.call_id] for r in requests]


def timed_out(config: AgentExt) -> Decision:
    timeout = config.approval_timeout
    return by(Decision.reject(f"no answer within {timeout:g} s (AgentExt.approval_timeout)"),
              "timeout")


def gone_note(config: AgentExt) -> str:
    return (f"Withdrawn: no page showed this request for {config.page_gone_timeout:g} s (the "
            "notebook tab was closed); the agent was told that you did not answer.")


def unseen(config: AgentExt) -> Decision:
    """The decision for a request no page showed for ``page_gone_timeout`` seconds."""
    return by(Decision.reject(
        f"the user did not answer: no page showed the request for "
        f"{config.page_gone_timeout:g} s (the notebook tab was closed; "
        "AgentExt.page_gone_timeout)"), "unseen")
