"""The approval widget: a proposed change or command, and your decision on it.

The view sends ``{"type": "ready"}`` when it renders, ``{"type": "alive"}`` every ``beat``
seconds while it waits, and one ``{"type": "decision", ...}`` when you decide; ``on_decision``
callbacks then get an ``agent_ext.agent.approval.Decision``. The approver shows the final
outcome with ``show_decided`` (also for decisions made elsewhere: a timeout, a policy) or
withdraws the request with ``withdraw``. ``ConfirmGroupWidget`` shows the approvals of one
step of the agent together.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import fields
from typing import Any, TypeVar, cast

import traitlets

from agent_ext.agent.approval import ApprovalRequest, Decision, Outcome, Persist

from ._assets import asset
from ._base import Asking, log
from ._static import cut, cut_lines, esc, jsonable, wrap

#: Texts above this size are not sent to the browser whole; the diff is sent instead.
MAX_TEXT_CHARS = 1_000_000
MAX_FEEDBACK_CHARS = 10_000
_OUTCOMES = ("approve", "reject", "always", "cancel")
_PERSIST = ("session", "project")
T = TypeVar("T")


def unified(before: str, after: str, path: str | None) -> str:
    """A unified diff of two texts, three lines of context."""
    return "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=f"a/{path}" if path else "before", tofile=f"b/{path}" if path else "after", n=3))


def request_json(request: ApprovalRequest) -> dict[str, Any]:
    """The request as the widget's ``request`` trait: plain JSON, huge texts left out."""
    details = {f.name: getattr(request.details, f.name) for f in fields(request.details)
               if f.name != "extra"}
    details["extra"] = jsonable(request.details.extra) or {}
    original, proposed = details.get("original"), details.get("proposed")
    too_big = sum(len(t) for t in (original, proposed) if isinstance(t, str)) > MAX_TEXT_CHARS
    if too_big:
        if not details.get("diff") and isinstance(original, str) and isinstance(proposed, str):
            details["diff"] = unified(original, proposed, request.details.file_path)
        details["original"] = details["proposed"] = None
        details["extra"]["too_large_to_edit"] = True
    return {
        "call_id": request.call_id,
        "tool_name": request.tool_name,
        "reason": request.reason,
        "scopes": list(request.scopes),
        "details": details,
    }


def decision_json(decision: Decision, note: str | None = None) -> dict[str, Any]:
    """A decision as the widget's ``decision`` trait (the edited text itself stays in Python)."""
    out: dict[str, Any] = {
        "outcome": decision.outcome,
        "edited": decision.modified is not None,
        "feedback": decision.feedback,
        "scope": decision.scope,
        "persist": decision.persist,
    }
    by = decision.extra.get("by")
    if isinstance(by, str):
        out["by"] = by
    if note:
        out["note"] = note
    return out


def parse_decision(content: dict[str, Any], request: ApprovalRequest) -> Decision:
    """The ``Decision`` a decision message stands for; ValueError when it is malformed."""
    outcome = content.get("outcome")
    if outcome not in _OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}")
    modified = content.get("modified")
    feedback = content.get("feedback")
    scope = content.get("scope")
    persist = content.get("persist") or "session"
    if modified is not None and not isinstance(modified, str):
        raise ValueError("modified must be text or null")
    if feedback is not None and not isinstance(feedback, str):
        raise ValueError("feedback must be text or null")
    if persist not in _PERSIST:
        raise ValueError(f"unknown persist {persist!r}")
    if outcome == "approve" and modified is not None:
        if request.details.proposed is None:
            raise ValueError("an edit came for a proposal that cannot be edited")
        if modified == request.details.proposed:
            modified = None
    if outcome == "always":
        scopes = list(request.scopes) or ["tool"]
        scope = scopes[0] if scope is None else scope
        if scope not in scopes:
            raise ValueError(f"scope {scope!r} is not one of {scopes}")
    feedback = (feedback or "").strip()[:MAX_FEEDBACK_CHARS] or None
    return Decision(
        outcome=cast("Outcome", outcome),
        modified=modified if outcome == "approve" else None,
        feedback=feedback if outcome == "reject" else None,
        scope=cast("str | None", scope) if outcome == "always" else None,
        persist=cast("Persist", persist),
        extra={"by": "user"},
    )


def scope_label(scope: str, tool: str, path: str | None) -> str:
    """What an "always allow" scope covers, in words (as the widget says it)."""
    labels = {
        "file": f"{tool} on {path}" if path else f"{tool} on this file",
        "directory": f"{tool} in this folder",
        "folder": f"{tool} in this folder",
        "tool": f"every {tool} call",
        "command": "this exact command",
        "prefix": "commands that start like this one",
        "server": "every tool of this server",
    }
    return labels.get(scope, scope)


def describe(info: dict[str, Any], tool: str, path: str | None) -> str:
    """The sentence for a decided request (the same words as the widget)."""
    if info.get("note"):
        return str(info["note"])
    by = info.get("by")
    you = not by or by == "user"
    suffix = "" if you else f" ({by})"
    outcome = info.get("outcome")
    if outcome == "approve":
        if not you:
            return f"Approved{suffix}."
        return "You approved your edited version." if info.get("edited") else "You approved this."
    if outcome == "reject":
        feedback = info.get("feedback")
        said = f" Your feedback goes to the agent: “{feedback}”" if feedback else ""
        return ("You rejected this." if you else f"Rejected{suffix}.") + said
    if outcome == "always":
        where = "in this project" if info.get("persist") == "project" else "for this session"
        what = scope_label(str(info.get("scope") or "tool"), tool, path)
        if you:
            return f"You always allow {what} {where}. This call runs now."
        return f"Always allowed{suffix}: {what} {where}."
    if outcome == "cancel":
        return "You cancelled the run." if you else f"The run was cancelled{suffix}."
    return f"Decided: {outcome}{suffix}."


WAITING = "Waiting for your decision (it can be made only while the kernel runs)."


class _Approval(Asking[T]):
    """What a card and a card group share: the messages, the waiting and withdrawn texts."""

    _esm = asset("confirm_diff.js")
    _css = asset("confirm_diff.css")
    _message = "decision"
    _withdrawn = "This request is no longer waiting for you."
    _waiting = WAITING

    decision = traitlets.Dict().tag(sync=True)


class ConfirmDiffWidget(_Approval[Decision]):
    """Shows one ``ApprovalRequest`` and reports your ``Decision`` to the ``on_decision``
    callbacks (see ``Asking``). Only the first decision counts."""

    request = traitlets.Dict().tag(sync=True)

    def __init__(self, request: ApprovalRequest, **kwargs: Any) -> None:
        super().__init__(request=request_json(request), **kwargs)
        self.approval = request

    #: The decision that counts, once there is one (yours, or one given to show_decided).
    decided = Asking.answered
    on_decision = Asking.on_answer

    def show_decided(self, decision: Decision, note: str | None = None) -> None:
        """Show the final decision and lock the view; ``note`` replaces the generated sentence."""
        self._show(decision, "decided", decision=decision_json(decision, note))

    def _take(self, content: dict[str, Any]) -> Decision:
        return parse_decision(content, self.approval)

    def _label(self) -> str:
        return f"ConfirmDiffWidget for {self.approval.call_id}"

    # -- static fallback ------------------------------------------------------------------------

    def _outcome(self) -> str:
        tool, path = self.approval.tool_name, self.approval.details.file_path
        if self.status == "decided" and self.decision.get("outcome"):
            return describe(self.decision, tool, path)
        return self._said(lambda decision: describe(decision_json(decision), tool, path))

    def static_html(self) -> str:
        return wrap("confirm", card_html(self.approval, self._outcome()))

    def static_text(self) -> str:
        return card_text(self.approval, self._outcome())


def diff_text(request: ApprovalRequest) -> str:
    """The unified diff a request shows ("" when it changes no text)."""
    details = request.details
    if details.diff:
        return details.diff
    if details.kind == "edit" and (details.original, details.proposed) != (None, None):
        return unified(details.original or "", details.proposed or "", details.file_path)
    return ""


def card_html(request: ApprovalRequest, outcome: str) -> str:
    """One request and its outcome as plain HTML (the static fallback of a card)."""
    details = request.details
    extra = details.extra
    target = extra.get("cell_label") or details.file_path or extra.get("cell_id") or ""
    parts = [
        f"<p><strong>{esc(details.title or f'Allow {request.tool_name}?')}</strong> "
        f"<code>{esc(request.tool_name)}</code>"
        + (f" <code>{esc(target)}</code>" if target else "") + "</p>",
    ]
    if request.reason:
        parts.append(f"<p>Why you were asked: {esc(request.reason)}</p>")
    if details.summary and details.summary != details.title:
        parts.append(f"<p>{esc(details.summary)}</p>")
    if details.command:
        parts.append(f"<pre><code>{esc(cut(details.command, 4000))}</code></pre>")
    diff = diff_text(request)
    if diff:
        parts.append(f"<pre><code>{esc(cut_lines(diff, 400))}</code></pre>")
    parts.append(f"<p><strong>Decision:</strong> {esc(outcome)}</p>")
    return "\n".join(parts)


def card_text(request: ApprovalRequest, outcome: str) -> str:
    """One request and its outcome as plain text."""
    details = request.details
    lines = [details.title or f"Allow {request.tool_name}?"]
    if request.reason:
        lines.append(f"Why you were asked: {request.reason}")
    if details.command:
        lines.append(f"$ {cut(details.command, 4000)}")
    diff = diff_text(request)
    if diff:
        lines.append(cut_lines(diff, 200))
    lines.append(f"Decision: {outcome}")
    return "\n".join(lines)


class ConfirmGroupWidget(_Approval[dict[str, Decision]]):
    """The approvals one step of the agent needs, as one card group with Approve all and
    Reject all besides each card's own buttons.

    Each decision message carries its request's ``call_id``. ``on_settled`` callbacks get the
    decisions by call id once every request has one, or as soon as one cancels the run (see
    ``Asking``).
    """

    requests: traitlets.List[dict[str, Any]] = traitlets.List().tag(sync=True)
    decisions = traitlets.Dict().tag(sync=True)
    # ``decision`` holds the note of a withdrawal (``withdraw``), shown on the cards still pending.

    def __init__(self, requests: Sequence[ApprovalRequest], **kwargs: Any) -> None:
        if len({r.call_id for r in requests}) != len(requests):
            raise ValueError("the requests of a group need distinct call ids")
        super().__init__(requests=[request_json(r) for r in requests], **kwargs)
        self.approvals = {r.call_id: r for r in requests}
        #: The user's decisions so far, by call id.
        self.answers: dict[str, Decision] = {}

    on_settled = Asking.on_answer

    def show_decided(self, decisions: dict[str, Decision],
                     notes: dict[str, str] | None = None) -> None:
        """Show the final decisions and lock the cards; ``notes`` replace generated sentences."""
        notes = notes or {}
        with self._lock:
            self.answers = {**decisions, **self.answers}
        self._publish("decided", decisions={cid: decision_json(d, notes.get(cid))
                                            for cid, d in decisions.items()})

    def withdraw(self, note: str | None = None) -> None:
        """Show that the requests not decided yet went away undecided."""
        with self._lock:
            answered = dict(self.answers)
        self._publish("cancelled", decisions={cid: decision_json(d) for cid, d in answered.items()},
                      decision={"note": note or self._withdrawn})

    def _take(self, content: dict[str, Any]) -> dict[str, Decision] | None:
        call_id = content.get("call_id")
        if not isinstance(call_id, str) or call_id not in self.approvals:
            raise ValueError(f"a decision for unknown call {call_id!r}")
        decision = parse_decision(content, self.approvals[call_id])
        with self._lock:
            if call_id in self.answers or self._answer_of.value is not None:
                log.info("ConfirmGroupWidget ignored a second decision for %s", call_id)
                return None
            self.answers[call_id] = decision
            done = (len(self.answers) == len(self.approvals) or decision.outcome == "cancel")
            return dict(self.answers) if done else None

    # -- static fallback ------------------------------------------------------------------------

    def _outcome(self, call_id: str) -> str:
        request = self.approvals[call_id]
        shown = self.decisions.get(call_id)
        if isinstance(shown, dict) and shown.get("outcome"):
            return describe(shown, request.tool_name, request.details.file_path)
        answer = self.answers.get(call_id)
        if answer is not None:
            return describe(decision_json(answer), request.tool_name, request.details.file_path)
        if self.status == "cancelled":
            return str(self.decision.get("note") or self._withdrawn)
        return WAITING

    def static_html(self) -> str:
        head = f"<p><strong>The agent proposes {len(self.approvals)} changes</strong></p>"
        return wrap("confirm", head + "\n".join(
            card_html(r, self._outcome(cid)) for cid, r in self.approvals.items()))

    def static_text(self) -> str:
        head = f"The agent proposes {len(self.approvals)} changes"
        return "\n\n".join([head, *(card_text(r, self._outcome(cid))
                                     for cid, r in self.approvals.items())])
