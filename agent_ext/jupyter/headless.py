"""The headless policy: who answers an approval when no one can click, and the audit line.

Under nbclient, papermill or ``jupyter execute`` no frontend renders the approval widget, so
a policy decides: tool names matching ``AgentExt.headless_allow`` are approved, anything else
that needs approval is rejected (and not run). Every decision, by a person or by the policy,
is written into the cell's output, so a headless notebook shows what was allowed and why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from agent_ext.agent.approval import ApprovalRequest, Decision, PolicyApprover

NO_FRONTEND = ("no frontend answered, so no one can approve in this run; allow it with "
               "c.AgentExt.headless_allow or an allow rule")
DONT_ASK = "dontAsk mode never asks; allow it with an allow rule or c.AgentExt.headless_allow"


async def headless_decision(request: ApprovalRequest, allow: Iterable[str],
                            why: str = NO_FRONTEND) -> Decision:
    """The policy's answer to ``request``, marked as the policy's (``extra["by"]``)."""
    decision = await PolicyApprover(allow, reason=why)(request)
    return by(decision, "policy")


def by(decision: Decision, who: str) -> Decision:
    """``decision`` marked with who made it (``user``, ``policy`` or ``timeout``)."""
    return dataclasses.replace(decision, extra={**decision.extra, "by": who})


_WHO = {"user": "the user", "policy": "the headless policy", "timeout": "the timeout"}


def describe(decision: Decision) -> str:
    """What was decided and by whom, as a sentence (``Rejected by the headless policy: ...``)."""
    if decision.extra.get("by") == "unseen":
        return f"Withdrawn: {decision.feedback}" if decision.feedback else "Withdrawn"
    who = _WHO.get(str(decision.extra.get("by", "user")), str(decision.extra.get("by")))
    what = {"approve": "Approved", "always": "Always allowed", "reject": "Rejected",
            "cancel": "Run cancelled"}[decision.outcome]
    text = f"{what} by {who}"
    if decision.outcome == "always" and decision.scope:
        text += f" (scope: {decision.scope})"
    if decision.modified is not None:
        text += " (with the user's changes)"
    if decision.outcome == "reject" and decision.feedback:
        text += f": {decision.feedback}"
    return text


def audit_line(request: ApprovalRequest, decision: Decision) -> str:
    """One line for the cell's output: what was asked, what was decided, by whom."""
    sentence = describe(decision)
    return f"[approval] {request.details.summary}: {sentence[0].lower()}{sentence[1:]}"
