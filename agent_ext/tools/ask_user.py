"""ask_user: put a question to the user mid-run, with options, and return the answer.

Asking beats guessing when a choice is the user's to make. The front end answers through the
``Asker`` in ``ctx.services``; a headless session has none, and the model is told to proceed on
its own judgement instead of failing.
"""

from __future__ import annotations

import asyncio
from typing import cast

from pydantic import BaseModel, ConfigDict, Field

from agent_ext.core import (
    ExecControl,
    Kind,
    Params,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.core.interaction import Answer, Asker, Option, Question

from ._waiting import until_cancelled

MAX_OPTIONS = 8
PROCEED = "Proceed with your best judgement and say what you assumed."
HEADLESS = ("No answer: the user could not be asked in this session (headless); proceed with "
            "your best judgement and say what you assumed.")


class OptionInput(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None)


class AskUserParams(Params):
    question: str = Field(min_length=1)
    options: list[OptionInput] = Field(
        default_factory=list, max_length=MAX_OPTIONS,
        description="Choices to pick from; empty for a free-text answer.")
    multi_select: bool = Field(default=False)
    allow_text: bool = Field(default=True)


class AskUserTool(Tool[AskUserParams]):
    name = "ask_user"
    description = (
        "Ask the user a question and wait for the answer. Use it for a choice only the user "
        "can make, not for what you can find out yourself.")
    kind = Kind.OTHER
    params_model = AskUserParams
    read_only = True
    search_hint = "question clarify choice user input preference"

    def check(self, params: AskUserParams, ctx: ToolContext) -> str | None:
        if not params.question.strip():
            return "`question` is blank; write the question"
        labels = [o.label.strip() for o in params.options]
        if len(set(labels)) != len(labels):
            return "option labels must be distinct"
        if not labels and not params.allow_text:
            return "with no options the user can only type an answer; set allow_text=true"
        if params.multi_select and not labels:
            return "multi_select needs options"
        return None

    def invocation(self, params: AskUserParams, ctx: ToolContext) -> ToolInvocation[AskUserParams]:
        return _AskUserInvocation(self, params, ctx)


class _AskUserInvocation(ToolInvocation[AskUserParams]):
    def description(self) -> str:
        return f"ask_user: {self.params.question}"

    def question(self) -> Question:
        p = self.params
        return Question(p.question.strip(),
                        tuple(Option(o.label.strip(), (o.description or "").strip())
                              for o in p.options),
                        multi_select=p.multi_select, allow_text=p.allow_text)

    async def execute(self, control: ExecControl) -> ToolResult:
        found = self.ctx.services.get(Asker)
        if found is None or not callable(found):
            return ToolResult(llm_content=HEADLESS, display=HEADLESS)
        asker = cast("Asker", found)
        try:
            answer = await until_cancelled(asker(self.question()), control, cancelled=False)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001  a broken front end is reported, not raised
            text = f"No answer: the question could not be shown ({exc}). {PROCEED}"
            return ToolResult(llm_content=text, display=text)
        return answer_result(answer)


def answer_result(answer: Answer | bool | None) -> ToolResult:
    """What the model reads for an answer, a dismissal, a cancel or no asker."""
    if answer is False:
        text = "The question was withdrawn: the user cancelled the run."
    elif answer is None or answer is True:
        text = HEADLESS
    elif answer.empty:
        text = f"The user closed the question without answering. {PROCEED} Do not ask it again."
    else:
        parts = []
        if answer.choices:
            parts.append("The user chose: " + ", ".join(f'"{c}"' for c in answer.choices))
        if answer.text and answer.text.strip():
            parts.append(f"The user wrote: {answer.text.strip()}")
        text = "\n".join(parts)
    return ToolResult(llm_content=text, display=text)
