"""The agent session, its loop, the approval protocol and the event stream."""

from .agent import Agent, RunResult
from .approval import ApprovalRequest, Approver, CallbackApprover, Decision, PolicyApprover
from .context import ContextLimits
from .events import PlainTextRenderer

__all__ = [
    "Agent",
    "ApprovalRequest",
    "Approver",
    "CallbackApprover",
    "ContextLimits",
    "Decision",
    "PlainTextRenderer",
    "PolicyApprover",
    "RunResult",
]
