"""Questions the agent asks the user mid-run, and the answers the front end sends back.

The ask_user tool knows nothing of widgets or terminals: the session puts an ``Asker`` in
``ToolContext.services`` (keyed by ``Asker``), and a headless session simply has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Option:
    """One choice offered to the user."""

    label: str
    description: str = ""


@dataclass(frozen=True)
class Question:
    """A question with 0-8 options; ``allow_text`` lets the user type their own answer."""

    text: str
    options: tuple[Option, ...] = ()
    multi_select: bool = False
    allow_text: bool = True


@dataclass(frozen=True)
class Answer:
    """The labels the user chose (in option order) and any text they typed."""

    choices: tuple[str, ...] = ()
    text: str | None = None

    @property
    def empty(self) -> bool:
        return not self.choices and not (self.text or "").strip()


class Asker(Protocol):
    """Shows a question and waits for the answer; None when nobody can answer (headless)."""

    async def __call__(self, question: Question) -> Answer | None: ...
