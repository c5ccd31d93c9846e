"""The project trust widget: what a project's own files ask for, with Trust / Trust once /
Don't trust.

The view sends ``{"type": "answer", "answer": "trust" | "once" | "distrust"}`` once;
``on_answer`` callbacks get the answer. The caller shows the outcome with ``show_answer`` or
``withdraw``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

import traitlets

from ._assets import asset
from ._base import Asking
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


class ProjectTrustWidget(Asking[TrustAnswer]):
    """Asks whether to trust a project's files; ``on_answer`` callbacks get the answer (see
    ``Asking``)."""

    _esm = asset("project_trust.js")
    _css = asset("project_trust.css")
    _withdrawn = "Nothing was trusted."

    request = traitlets.Dict().tag(sync=True)
    decision = traitlets.Dict().tag(sync=True)

    def __init__(self, project: ProjectTrust, **kwargs: Any) -> None:
        super().__init__(request=request_json(project), **kwargs)
        self._lines = [i.render() for i in project.ask.items]

    def show_answer(self, answer: TrustAnswer, note: str | None = None) -> None:
        """Show the outcome and lock the view."""
        self._show(answer, "decided",
                   decision={"answer": answer, **({"note": note} if note else {})})

    def _take(self, content: dict[str, Any]) -> TrustAnswer:
        answer = content.get("answer")
        if answer not in ANSWERS:
            raise ValueError(f"unknown trust answer {answer!r}")
        return cast("TrustAnswer", answer)

    # -- static fallback ------------------------------------------------------------------------

    def _outcome(self) -> str:
        return self._said(lambda answer: str(self.decision.get("note") or _SAID[answer]))

    def static_html(self) -> str:
        items = "".join(f"<li><code>{esc(line)}</code></li>" for line in self._lines)
        body = (f"<p><strong>Project {esc(self.request.get('root', ''))} asks for:</strong></p>"
                f"<ul>{items}</ul><p>{esc(self._outcome())}</p>")
        return wrap("trust", body)

    def static_text(self) -> str:
        return "\n".join([f"Project {self.request.get('root', '')} asks for:",
                          *(f"- {line}" for line in self._lines), self._outcome()])
