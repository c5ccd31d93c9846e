"""One tool call end to end: lookup, build, permission, approval, execute, per-result budget.

The approvals one step of the agent needs can be asked together beforehand (``decide_ahead``);
each call then runs with the decision made for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_ext.core import (
    ErrorCode,
    ExecControl,
    Registry,
    TextPart,
    Tier,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
    UnknownToolError,
)
from agent_ext.core.budget import OutputBudget
from agent_ext.core.errors import ToolLoadError
from agent_ext.models import ToolCall
from agent_ext.permissions import PermissionPolicy, Verdict

from .approval import ApprovalRequest, Approver, Decision, as_decision
from .events import (
    ApprovalRequested,
    ApprovalResolved,
    CallAllowed,
    Event,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
)
from .secrets import SecretMasker, StreamMasker


@dataclass
class Prepared:
    """A call after lookup and build: an invocation to run, or the result it already has."""

    call: ToolCall
    invocation: ToolInvocation[Any] | None = None
    early: ToolResult | None = None

    @property
    def concurrency_safe(self) -> bool:
        return self.invocation is not None and self.invocation.tool.concurrency_safe


@dataclass
class Pipeline:
    """The session's services a call needs; one instance per agent."""

    registry: Registry
    context: ToolContext
    policy: PermissionPolicy
    approver: Approver
    budget: OutputBudget
    emit: Callable[[Event], None]
    secrets: SecretMasker = field(default_factory=SecretMasker)
    #: Set when the user cancels the run (from an approval, ``agent.cancel()`` or an interrupt).
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    controls: dict[str, ExecControl] = field(default_factory=dict)
    #: Called with ``decision.persist`` after an "always allow" was saved (project trust
    #: keeps rules the user saved in the project as the user's own).
    on_saved_rule: Callable[[str], None] | None = None
    _approval_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Decisions asked ahead with the other calls of their step (``decide_ahead``), by call id.
    _ahead: dict[str, Decision] = field(default_factory=dict)

    def prepare(self, call: ToolCall) -> Prepared:
        """Find the tool and validate the arguments; failures become the call's result."""
        try:
            tool: Tool[Any] = self.registry.get(call.name)
        except UnknownToolError as exc:
            close = ", ".join(map(repr, exc.suggestions))
            hint = f" Did you mean {close}?" if close else ""
            return Prepared(call, early=ToolResult.fail(
                ErrorCode.UNKNOWN_TOOL,
                f"No tool named {call.name!r}.{hint} Deferred tools are listed by name in the "
                "system prompt: load one with tool_search (select:<name>) before calling it."))
        except ToolLoadError as exc:
            return Prepared(call, early=ToolResult.fail(ErrorCode.TOOL_LOAD_FAILED, str(exc)))
        built = tool.build(call.arguments, self.context)
        if isinstance(built, ToolResult):
            return Prepared(call, early=built)
        return Prepared(call, invocation=built)

    async def run(self, prepared: Prepared) -> ToolResult:
        """Run a prepared call to its budgeted result; never raises except on cancellation."""
        call = prepared.call
        started = time.perf_counter()
        invocation = prepared.invocation
        description = invocation.description() if invocation is not None else call.name
        self.emit(ToolCallStarted(call, description))
        if prepared.early is not None:
            result = await self._masked(prepared.early)
        elif self.cancelled.is_set():
            result = cancelled_result(call)
        else:
            assert invocation is not None
            result = await self._run_invocation(call, invocation)
        self.emit(ToolCallFinished(call, result, time.perf_counter() - started))
        return result

    async def _run_invocation(self, call: ToolCall, invocation: ToolInvocation[Any]) -> ToolResult:
        tool = invocation.tool
        if self.registry.is_deferred(tool.name):
            self.registry.reveal([tool.name])  # called by its exact name: counts as revealed
        decision = self.policy.decide(invocation)
        ahead = self._ahead.pop(call.id, None)
        if decision.verdict is Verdict.DENY:
            return ToolResult.fail(ErrorCode.EXECUTION_DENIED,
                                   f"Permission denied for {invocation.description()}: "
                                   f"{decision.reason}.")
        early = await invocation.preflight()
        if early is not None:
            return self.budget.apply(await self._masked(early), tool_name=tool.name,
                                     max_output_chars=tool.max_output_chars,
                                     truncate_keep=tool.truncate_keep)
        if ahead is not None:
            # Decided with its step's other calls; a rule an earlier card saved never
            # overrides what the user chose for this one.
            invocation_or_refusal = self._apply_decision(call, invocation, ahead)
            if isinstance(invocation_or_refusal, ToolResult):
                return invocation_or_refusal
            invocation = invocation_or_refusal
        elif decision.verdict is Verdict.ASK:
            invocation_or_refusal = await self._ask(call, invocation, decision.reason)
            if isinstance(invocation_or_refusal, ToolResult):
                return invocation_or_refusal
            invocation = invocation_or_refusal
        elif invocation.tier() >= Tier.WRITE:
            # It changes something and nobody was asked: say what allowed it.
            self.emit(CallAllowed(call.id, tool.name, decision.reason))
        stream = StreamMasker(self.secrets)

        def on_output(text: str) -> None:
            shown = stream.feed(text)
            if shown:
                self.emit(ToolOutput(call.id, shown))

        control = ExecControl(on_output=on_output, call_id=call.id)
        self.controls[call.id] = control
        try:
            outcome: object = await invocation.execute(control)
            result = outcome if isinstance(outcome, ToolResult) else ToolResult.fail(
                ErrorCode.EXECUTION_FAILED,
                f"{tool.name} returned {type(outcome).__name__}, not a result")
        except asyncio.CancelledError:
            control.cancelled.set()
            raise
        except Exception as exc:  # noqa: BLE001  a tool's exception is the model's error result
            result = ToolResult.fail(ErrorCode.UNHANDLED_EXCEPTION,
                                     f"{tool.name} failed: {type(exc).__name__}: {exc}")
        finally:
            self.controls.pop(call.id, None)
            rest = stream.flush()
            if rest:
                self.emit(ToolOutput(call.id, rest))
        # Masked before budgets so that spill files never hold a secret either.
        return self.budget.apply(await self._masked(result), tool_name=tool.name,
                                 max_output_chars=tool.max_output_chars,
                                 truncate_keep=tool.truncate_keep)

    async def _masked(self, result: ToolResult) -> ToolResult:
        """``result`` with its secrets masked; a large one in a worker thread, so that the
        detectors' passes over megabytes of text leave the event loop free between them."""
        if _text_size(result) <= MASK_ON_LOOP_CHARS:
            return self.secrets.mask_result(result)
        return await asyncio.to_thread(self.secrets.mask_result, result)

    async def _ask(self, call: ToolCall, invocation: ToolInvocation[Any],
                   reason: str) -> ToolInvocation[Any] | ToolResult:
        async with self._approval_lock:  # one prompt at a time, even for parallel calls
            if self.cancelled.is_set():
                return cancelled_result(call)
            request = ApprovalRequest(call_id=call.id, tool_name=invocation.tool.name,
                                      details=await invocation.confirmation_details(),
                                      reason=reason, scopes=self.policy.scopes(invocation))
            self.emit(ApprovalRequested(request))
            try:
                decision = as_decision(await self.approver(request))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001  a broken approver must not run the call
                decision = Decision.reject(f"the approval could not be obtained ({exc})")
            self.emit(ApprovalResolved(request, decision))
        return self._apply_decision(call, invocation, decision)

    async def decide_ahead(self, prepared: Sequence[Prepared]) -> None:
        """Ask the approvals of one step's calls together, when the approver can
        (``ask_many``) and more than one call needs one.

        A later call that replaces the whole of the same cell or file as an earlier one takes
        its place: only the later proposal is shown, and the earlier call is answered that it
        was replaced. Calls whose check fails before asking (``preflight``) are left to fail
        when they run, unasked.
        """
        self._ahead.clear()
        ask_many = getattr(self.approver, "ask_many", None)
        if ask_many is None or self.cancelled.is_set():
            return
        asking: list[tuple[Prepared, str]] = []
        earlier: list[tuple[set[Place], bool]] = []
        for p in prepared:
            invocation = p.invocation
            if invocation is None:
                continue
            mine = _places(invocation)
            verdict = self.policy.decide(invocation)
            asks = verdict.verdict is Verdict.ASK
            clashes = [asked for places, asked in earlier if _overlap(places, mine)]
            earlier.append((mine, asks))
            # A call on what an earlier call of the step touches is checked (and asked) when
            # it runs, after that one, unless it replaces the whole of what earlier asks change.
            if not asks or (clashes and not (all(clashes) and _whole_call(invocation))):
                continue
            if await invocation.preflight() is None:
                asking.append((p, verdict.reason))
        if len(asking) < 2:
            return
        async with self._approval_lock:
            requests = []
            for p, reason in asking:
                invocation = p.invocation
                assert invocation is not None
                requests.append(ApprovalRequest(
                    call_id=p.call.id, tool_name=invocation.tool.name,
                    details=await invocation.confirmation_details(), reason=reason,
                    scopes=self.policy.scopes(invocation)))
            shown = _replacing(requests, self._ahead)
            if len(shown) < 2:
                return  # the one left is asked as usual when it runs
            for request in shown:
                self.emit(ApprovalRequested(request))
            try:
                answers = [as_decision(a) for a in await ask_many(shown)]
                if len(answers) != len(shown):
                    raise ValueError(f"{len(answers)} answers for {len(shown)} requests")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001  a broken approver must not run the calls
                answers = [Decision.reject(f"the approval could not be obtained ({exc})")
                           for _ in shown]
            for request, decision in zip(shown, answers, strict=True):
                self._ahead[request.call_id] = decision
                self.emit(ApprovalResolved(request, decision))
            if any(d.outcome == "cancel" for d in answers):
                self.cancelled.set()  # "Cancel run" on any card: nothing of the step runs

    def forget_ahead(self) -> None:
        """Drop the decisions of a step that is over (call ids may repeat in later steps)."""
        self._ahead.clear()

    def _apply_decision(self, call: ToolCall, invocation: ToolInvocation[Any],
                        decision: Decision) -> ToolInvocation[Any] | ToolResult:
        if decision.outcome == "cancel":
            self.cancelled.set()
            return cancelled_result(call)
        if not decision.approved and decision.extra.get("by") in ("policy", "replaced"):
            return ToolResult.fail(ErrorCode.EXECUTION_DENIED,
                                   f"{invocation.description()} was not run: {decision.feedback}.")
        if not decision.approved and decision.extra.get("by") in ("timeout", "unseen"):
            return ToolResult.fail(ErrorCode.EXECUTION_DENIED,
                                   f"{invocation.description()} was not run: "
                                   f"{decision.feedback}. Ask again later, or go on without it.")
        if not decision.approved:
            note = f" The user said: {decision.feedback}" if decision.feedback else ""
            return ToolResult.fail(ErrorCode.EXECUTION_DENIED,
                                   f"The user rejected {invocation.description()}; it was not "
                                   f"run.{note}")
        if decision.outcome == "always":
            self.policy.always_allow(invocation, decision.scope, decision.persist)
            if self.on_saved_rule is not None:
                self.on_saved_rule(decision.persist)
        if decision.modified is not None:
            modified = invocation.with_modification(decision.modified)
            if modified is None:
                return ToolResult.fail(ErrorCode.EXECUTION_DENIED,
                                       f"The user edited the proposal for {invocation.tool.name}, "
                                       "which cannot take edits; nothing was run.")
            return modified
        return invocation


Place = tuple[str, str]


def _places(invocation: ToolInvocation[Any]) -> set[Place]:
    """What a call touches, before it is planned: (path, cell id) for a call on a cell, else
    (path, "") for the whole file. A new cell touches nothing another call could change."""
    params = getattr(invocation, "params", None)
    if getattr(params, "edit_mode", None) == "insert":
        return set()
    cell = getattr(params, "cell_id", None)
    return {(str(path), str(cell) if cell else "") for path in invocation.locations()}


def _overlap(a: set[Place], b: set[Place]) -> bool:
    return any(pa == pb and (not ca or not cb or ca == cb) for pa, ca in a for pb, cb in b)


def _whole_call(invocation: ToolInvocation[Any]) -> bool:
    """Whether a call replaces all of its cell or file (judged from its arguments)."""
    params = getattr(invocation, "params", None)
    if getattr(params, "cell_id", None) is not None:
        mode = getattr(params, "edit_mode", "replace")
        return mode == "delete" or (mode == "replace"
                                    and getattr(params, "new_source", None) is not None)
    return invocation.tool.name == "write_file"


def _place(request: ApprovalRequest) -> Place | None:
    """The cell or file a proposal changes (None for a new cell, or what is not an edit)."""
    details = request.details
    extra = details.extra
    if details.kind != "edit":
        return None
    cell = extra.get("cell_id")
    if cell is not None:
        if extra.get("action") == "insert":
            return None
        return str(extra.get("notebook") or details.file_path), str(cell)
    return (details.file_path, "") if details.file_path else None


def _whole(request: ApprovalRequest) -> bool:
    """Whether a proposal replaces all of its cell or file (not a part of it)."""
    extra = request.details.extra
    if extra.get("cell_id") is not None:
        return extra.get("action") in ("edit", "delete")
    return request.tool_name == "write_file"


def _replacing(requests: list[ApprovalRequest],
               ahead: dict[str, Decision]) -> list[ApprovalRequest]:
    """The requests to show: an earlier one whose cell or file a later one replaces whole
    gets its answer in ``ahead`` instead."""
    shown: list[ApprovalRequest] = []
    for i, request in enumerate(requests):
        place = _place(request)
        later = next((r for r in requests[i + 1:]
                      if place is not None and _place(r) == place and _whole(r)), None)
        if later is None or place is None:
            shown.append(request)
            continue
        where = f"cell {place[1]}" if place[1] else place[0]
        ahead[request.call_id] = Decision(
            "reject", feedback=f"call {later.call_id} of the same step proposes a new version "
            f"of {where}, which was shown for approval instead", extra={"by": "replaced"})
    return shown


#: Results with more text than this (content and display) are masked off the event loop.
MASK_ON_LOOP_CHARS = 64_000
_MAX_ITEMS = 10_000


def _text_size(result: ToolResult) -> int:
    content = result.llm_content
    size = len(content) if isinstance(content, str) else sum(
        len(p.text) for p in content if isinstance(p, TextPart))
    return size + _object_chars(result.display, MASK_ON_LOOP_CHARS - size)


def _object_chars(value: object, budget: int) -> int:
    """The characters of the strings in ``value`` (str, list, tuple, dict), counted until they
    pass ``budget``; a structure of more than _MAX_ITEMS items counts as over it."""
    stack = [value]
    total = seen = 0
    while stack and total <= budget:
        seen += 1
        if seen > _MAX_ITEMS:
            return budget + 1
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return total


def cancelled_result(call: ToolCall) -> ToolResult:
    return ToolResult.fail(ErrorCode.EXECUTION_CANCELLED,
                           f"{call.name} was not run: the user cancelled the run.")
