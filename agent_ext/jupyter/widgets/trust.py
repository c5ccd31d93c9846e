"""The project trust widget: what a project's own files ask for, with Trust / Trust once /
Don't trust.

The view sends ``{"type": "answer", "answer": "trust" | "once" | "distrust"}`` once;
``on_answer`` callbacks get the answer. The caller shows the outcome with ``show_answer`` or
``withdraw``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import traitlets

from ._assets import asset
from ._base import OneAnswer, Widget
from ._static import esc, wrap

if TYPE_CHECKING:
    from agent_ext.trust import ProjectTrust

TrustAnswer = Literal["trust", "once", "distrust"]
ANSWERS: tuple[TrustAnswer, ...] = ("trust", "once", "distrust")
_SAID = {"trust": "Trusted: these servers and settings apply until the files change.",
         "once": "Trusted for this session only.",
         "distrust": "Not trusted: only the project's deny and ask rules apply; "
                     "`%agent trust` trusts it later."}


def request_json(project: ProjectTrust) -> dict[str, Any]:
    """The ``request`` trait: the project root, each item, the narrowing rules in force."""
    ask = project.ask
    return {"root": str(project.root), "changed": project.changed,
            "items": [{**i.to_dict(), "text": i.render()} for i in ask.items],
            "narrowing": list(ask.narrowing)}


class ProjectTrustWidget(Widget):
    """Asks whether to trust a project's files; ``on_answer`` callbacks get the answer.

    Callbacks run on the thread the message arrived on: keep them to
    ``loop.call_soon_threadsafe(...)``. Only the first answer counts.
    """

    _esm = asset("project_trust.js")
    _css = asset("project_trust.css")

    request = traitlets.Dict().tag(sync=True)
    decision = traitlets.Dict().tag(sync=True)
    status = traitlets.Unicode("pending").tag(sync=True)

    def __init__(self, project: ProjectTrust, **kwargs: Any) -> None:
        super().__init__(request=request_json(project), **kwargs)
        self._lines = [i.render() for i in project.ask.items]
        self._answer_of: OneAnswer[TrustAnswer] = OneAnswer(self._lock)

    @property
    def answered(self) -> TrustAnswer | None:
        return self._answer_of.value

    def on_answer(self, callback: Callable[[TrustAnswer], object]) -> None:
        """Call ``callback(answer)`` when the user answers (now, if they already have)."""
        self._answer_of.on(callback)

    def show_answer(self, answer: TrustAnswer, note: str | None = None) -> None:
        """Show the outcome and lock the view."""
        self._answer_of.keep(answer)
        with self.hold_sync():
            self.decision = {"answer": answer, **({"note": note} if note else {})}
            self.status = "decided"
        self.refresh_display()

    def withdraw(self, note: str) -> None:
        """Show that the question went away unanswered (nothing was trusted)."""
        with self.hold_sync():
            self.decision = {"note": note}
            self.status = "cancelled"
        self.refresh_display()

    def _handle(self, kind: str, content: dict[str, Any]) -> None:
        if kind != "answer":
            super()._handle(kind, content)
            return
        answer = content.get("answer")
        if answer not in ANSWERS:
            raise ValueError(f"unknown trust answer {answer!r}")
        self._answer_of.settle(answer, "ProjectTrustWidget")

    # -- static fallback ------------------------------------------------------------------------

    def _outcome(self) -> str:
        if self.status == "cancelled":
            return str(self.decision.get("note") or "Nothing was trusted.")
        answer = self._answer_of.value
        if answer is None:
            return "Waiting for your answer (it can be given only while the kernel runs)."
        return str(self.decision.get("note") or _SAID[answer])

    def static_html(self) -> str:
        items = "".join(f"<li><code>{esc(line)}</code></li>" for line in self._lines)
        body = (f"<p><strong>Project {esc(self.request.get('root', ''))} asks for:</strong></p>"
                f"<ul>{items}</ul><p>{esc(self._outcome())}</p>")
        return wrap("trust", body)

    def static_text(self) -> str:
        return "\n".join([f"Project {self.request.get('root', '')} asks for:",
                          *(f"- {line}" for line in self._lines), self._outcome()])
