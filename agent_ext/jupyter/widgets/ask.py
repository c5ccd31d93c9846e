"""The ask-user widget: a question from the agent, with options and free text.

The view sends ``{"type": "answer", "choices": [...], "text": ...}`` once; ``on_answer``
callbacks get an ``Answer``. The caller shows the final state with ``show_answer`` or
``withdraw``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import traitlets

from ._assets import asset
from ._base import Asking
from ._static import cut, esc, wrap

MAX_TEXT_CHARS = 10_000
MAX_OPTIONS = 20


@dataclass(frozen=True)
class Answer:
    """What you answered: the chosen option labels and any text."""

    choices: tuple[str, ...] = ()
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"choices": list(self.choices), "text": self.text}


def normalise_question(question: Mapping[str, Any] | str) -> dict[str, Any]:
    """The ``question`` trait: text, options (label, description), multi_select, allow_text."""
    raw: Mapping[str, Any] = {"question": question} if isinstance(question, str) else question
    options = []
    for entry in list(raw.get("options") or [])[:MAX_OPTIONS]:
        option = {"label": entry} if isinstance(entry, str) else entry
        if isinstance(option, Mapping) and str(option.get("label", "")).strip():
            options.append({"label": str(option["label"]),
                            "description": str(option.get("description") or "")})
    return {
        "question": str(raw.get("question") or "The agent has a question."),
        "options": options,
        "multi_select": bool(raw.get("multi_select", False)),
        "allow_text": bool(raw.get("allow_text", True)) or not options,
    }


def parse_answer(content: dict[str, Any], question: dict[str, Any]) -> Answer:
    """The ``Answer`` an answer message stands for; ValueError when it is malformed."""
    choices = content.get("choices") or []
    text = content.get("text") or ""
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise TypeError("choices must be a list of option labels")
    if not isinstance(text, str):
        raise TypeError("text must be text")
    labels = [o["label"] for o in question["options"]]
    unknown = [c for c in choices if c not in labels]
    if unknown:
        raise ValueError(f"unknown choices {unknown}")
    chosen = tuple(dict.fromkeys(choices))
    if len(chosen) > 1 and not question["multi_select"]:
        raise ValueError("several choices for a single-choice question")
    text = text.strip()[:MAX_TEXT_CHARS]
    if text and not question["allow_text"]:
        raise ValueError("text for a question that takes none")
    if not chosen and not text:
        raise ValueError("an empty answer")
    return Answer(chosen, text)


def _you_answered(answer: Answer) -> str:
    parts = [", ".join(answer.choices), f"“{answer.text}”" if answer.text else ""]
    return "You answered: " + " — ".join(p for p in parts if p)


class AskUserWidget(Asking[Answer]):
    """Asks one question; ``on_answer`` callbacks get your ``Answer`` (see ``Asking``)."""

    _esm = asset("ask_user.js")
    _css = asset("ask_user.css")
    _outcome_trait = "answer"

    question = traitlets.Dict().tag(sync=True)
    answer = traitlets.Dict().tag(sync=True)

    def __init__(self, question: Mapping[str, Any] | str, **kwargs: Any) -> None:
        super().__init__(question=normalise_question(question), **kwargs)

    def show_answer(self, answer: Answer, note: str | None = None) -> None:
        """Show the answer and lock the view."""
        self._show(answer, "answered",
                   answer={**answer.to_dict(), **({"note": note} if note else {})})

    def _take(self, content: dict[str, Any]) -> Answer:
        return parse_answer(content, self.question)

    # -- static fallback ------------------------------------------------------------------------

    def _outcome(self) -> str:
        return self._said(_you_answered)

    def static_html(self) -> str:
        options = "".join(
            f"<li><strong>{esc(o['label'])}</strong>"
            + (f" — {esc(o['description'])}" if o["description"] else "") + "</li>"
            for o in self.question["options"])
        body = f"<p><strong>{esc(self.question['question'])}</strong></p>"
        if options:
            body += f"<ul>{options}</ul>"
        body += f"<p>{esc(cut(self._outcome(), 2000))}</p>"
        return wrap("ask", body)

    def static_text(self) -> str:
        lines = [str(self.question["question"])]
        lines += [f"- {o['label']}" for o in self.question["options"]]
        lines.append(self._outcome())
        return "\n".join(lines)
