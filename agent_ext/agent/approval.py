"""The approval protocol: what an approver is asked, what it may answer, and the stock approvers.

An approver is any async callable taking an ``ApprovalRequest`` and returning a ``Decision`` or
one of the strings ``"approve"``, ``"reject"``, ``"always"``; one that also has ``ask_many`` is
asked the approvals of one step of the agent together. Headless runs use a
``PolicyApprover`` (default deny); Python code may pass a plain function (``CallbackApprover``);
the notebook's diff widget is another implementation.
"""

from __future__ import annotations

import fnmatch
import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent_ext.core import ConfirmationDetails

Outcome = Literal["approve", "reject", "always", "cancel"]
Persist = Literal["session", "project"]


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for consent."""

    call_id: str
    tool_name: str
    details: ConfirmationDetails
    #: Why the call was not allowed outright (the rule, mode or tier that asked).
    reason: str
    #: What "always allow" can cover for this call, narrowest first (e.g. file, tool).
    scopes: tuple[str, ...] = ("tool",)


@dataclass(frozen=True)
class Decision:
    """An approver's answer.

    ``modified`` replaces the proposal (edit-then-approve); ``feedback`` goes to the model with a
    rejection; ``scope`` and ``persist`` say what an "always" covers and where it is saved;
    ``cancel`` stops the whole run.
    """

    outcome: Outcome
    modified: str | None = None
    feedback: str | None = None
    scope: str | None = None
    persist: Persist = "session"
    extra: dict[str, object] = field(default_factory=dict)

    @classmethod
    def approve(cls, modified: str | None = None) -> Decision:
        return cls("approve", modified=modified)

    @classmethod
    def reject(cls, feedback: str | None = None) -> Decision:
        return cls("reject", feedback=feedback)

    @classmethod
    def always(cls, scope: str | None = None, persist: Persist = "session") -> Decision:
        return cls("always", scope=scope, persist=persist)

    @classmethod
    def cancel(cls) -> Decision:
        return cls("cancel")

    @property
    def approved(self) -> bool:
        return self.outcome in ("approve", "always")


Approver = Callable[[ApprovalRequest], Awaitable["Decision | str"]]
#: Asks several requests at once (one step's calls); one answer per request, in order.
ManyApprover = Callable[[Sequence[ApprovalRequest]], Awaitable[Sequence["Decision | str"]]]


def as_decision(answer: object) -> Decision:
    """Normalise an approver's answer; anything unrecognised is a rejection (fail closed)."""
    if isinstance(answer, Decision):
        return answer
    if isinstance(answer, str) and answer in ("approve", "reject", "always", "cancel"):
        return Decision(answer)  # type: ignore[arg-type]
    if answer is True:
        return Decision.approve()
    return Decision.reject(f"the approver answered {answer!r}, which is not a decision")


class PolicyApprover:
    """Answers without a human: approves tools whose names match ``allow``, rejects the rest.

    Used headless (nbclient, papermill, CI) and whenever no approver is given. Patterns are
    shell-style and case-insensitive (``mcp__github__*``).
    """

    def __init__(self, allow: Iterable[str] = (), *, reason: str = "") -> None:
        self.allow = tuple(p.lower() for p in allow)
        self.reason = reason or "no one can approve in this session"
        self.decisions: list[tuple[ApprovalRequest, Decision]] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        name = request.tool_name.lower()
        if any(fnmatch.fnmatchcase(name, p) for p in self.allow):
            decision = Decision.approve()
        else:
            decision = Decision("reject", feedback=f"it needs approval and {self.reason}",
                                extra={"by": "policy"})
        self.decisions.append((request, decision))
        return decision


class CallbackApprover:
    """Wraps a plain function (sync or async) as an approver.

    When the function has an ``ask_many`` (requests → decisions, as the notebook's approver
    does), the approvals one step of the agent needs are asked together through it.
    """

    def __init__(self, fn: Callable[[ApprovalRequest], object]) -> None:
        self.fn = fn
        self.ask_many: ManyApprover | None = getattr(fn, "ask_many", None)

    async def __call__(self, request: ApprovalRequest) -> Decision:
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        return as_decision(answer)
