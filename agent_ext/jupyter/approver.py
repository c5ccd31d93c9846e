"""``WidgetApprover``: each approval is a diff widget in the running cell, or the headless policy.

The cell awaits an asyncio future per confirmation; the widget's callbacks (possibly on a
kernel subshell thread) resolve it only through ``loop.call_soon_threadsafe``. The first
widget that gets no ``ready`` in time tells the session it has no frontend; from then on the
headless policy answers at once. Waits are sliced so Kernel → Interrupt gets through.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agent_ext.agent.approval import ApprovalRequest, Decision, as_decision

from .headless import DONT_ASK, NO_FRONTEND, audit_line, by, describe, headless_decision
from .waiting import first_of, ignoring_args, resolver, wait_sliced

if TYPE_CHECKING:
    from .session import Session


class WidgetApprover:
    """The session agent's approver (see the module docstring)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    async def __call__(self, request: ApprovalRequest) -> Decision:
        decision = await self._decide(request)
        self.session.record(audit_line(request, decision))
        return decision

    async def _decide(self, request: ApprovalRequest) -> Decision:
        config = self.session.config
        if self.session.mode() == "dontAsk":
            return await headless_decision(request, config.headless_allow, DONT_ASK)
        if self.session.frontend.absent:
            return await headless_decision(request, config.headless_allow, NO_FRONTEND)
        try:
            from .widgets import ConfirmDiffWidget  # noqa: PLC0415  (anywidget is heavy)
        except ImportError as exc:
            return await headless_decision(
                request, config.headless_allow, f"the approval widget is unavailable ({exc})")
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Any] = loop.create_future()
        decided: asyncio.Future[Any] = loop.create_future()
        widget = ConfirmDiffWidget(request)
        widget.on_ready(ignoring_args(resolver(loop, ready)))
        widget.on_decision(resolver(loop, decided))
        self.session.show(widget)
        try:
            seen = await self.session.frontend.wait_ready(first_of(ready, decided),
                                                          config.ready_timeout)
            if not seen and not decided.done():
                decision = await headless_decision(request, config.headless_allow, NO_FRONTEND)
            else:
                decision = await _answer(decided, config.approval_timeout)
        except asyncio.CancelledError:
            widget.withdraw("The run was interrupted before a decision; nothing ran.")
            raise
        finally:
            for future in (ready, decided):
                future.cancel()
        user = decision.extra.get("by") == "user"
        widget.show_decided(decision, None if user else describe(decision) + ".")
        return decision



async def _answer(decided: asyncio.Future[Any], timeout: float) -> Decision:
    """The user's decision, or a rejection once ``timeout`` seconds pass (0: no limit)."""
    if await wait_sliced(decided, timeout or None):
        return by(as_decision(decided.result()), "user")
    return by(Decision.reject(f"no answer within {timeout:g} s (AgentExt.approval_timeout)"),
              "timeout")
