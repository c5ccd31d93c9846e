"""Before a ``%%agent`` run: ask about a project's files when they ask for more than narrowing.

The trust widget shows what the project asks for; the answer is awaited like an approval
(a future resolved with ``call_soon_threadsafe``, a sliced wait). Without a frontend, in
``dontAsk`` mode, or when no answer comes, nothing is trusted and one line says what was
withheld and what to type. An interrupt withdraws the question and trusts nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cell import Cell, ask

if TYPE_CHECKING:
    from agent_ext.agent import Agent

    from .widgets import ProjectTrustWidget

NO_FRONTEND = "no frontend can show the trust question, so nothing is trusted"
_SAID = {"trust": "trusted (kept; a change to the files asks again)",
         "once": "trusted for this session only",
         "distrust": "not trusted (kept until the files change); only the project's deny and "
                     "ask rules apply"}


async def settle_trust(cell: Cell, agent: Agent) -> None:
    """Ask about the project's files if they need an answer; apply the answer."""
    project = agent.refresh_project()
    if not project.needs_answer:
        return
    why = None
    if cell.mode() == "dontAsk":
        why = "dontAsk mode never asks, so nothing is trusted"
    elif cell.frontend.absent:
        why = NO_FRONTEND
    if why is not None and project.withheld() == agent.withheld_noted:
        return  # said once in this session: a headless notebook is not told in every cell
    answer: str | None = None
    if why is None:
        try:
            from .widgets import ProjectTrustWidget  # noqa: PLC0415  (anywidget is heavy)
        except ImportError as exc:
            why = f"the trust widget is unavailable ({exc}), so nothing is trusted"
        else:
            answer, why = await _ask(cell, ProjectTrustWidget(project))
    if answer is None:
        _withheld(cell, agent, why or NO_FRONTEND)
        return
    note = ""
    try:
        if answer == "distrust":
            done = agent.untrust(shown=project.ask)
        else:
            done = agent.trust(once=answer == "once", shown=project.ask)
    except OSError as exc:  # the store cannot be written: the answer holds for this session
        note = f" (it could not be kept: {exc}; it holds for this session only)"
        if answer == "distrust":
            done = project
        else:
            answer = "once"
            done = agent.trust(once=True, shown=project.ask)
    agent.withheld_noted = done.withheld()  # the line below says it
    cell.record(f"[agent_ext] project trust: {agent.cwd} {_SAID[answer]}{note}.")


async def _ask(cell: Cell, widget: ProjectTrustWidget) -> tuple[str | None, str | None]:
    """The user's answer from ``widget``, or None and why (no frontend, no answer in time)."""
    waited, answer = await ask(
        cell, widget, widget.on_answer, page_gone=False,
        interrupted="The run was interrupted before an answer; nothing was trusted.")
    if waited == "unseen":
        widget.withdraw("No frontend answered; nothing was trusted.")
        return None, NO_FRONTEND
    if answer is None:
        widget.withdraw("No answer came in time; nothing was trusted.")
        return None, (f"no answer came within {cell.config.approval_timeout:g} s "
                      "(AgentExt.approval_timeout), so nothing is trusted")
    widget.show_answer(answer)
    return answer, None


def _withheld(cell: Cell, agent: Agent, why: str) -> None:
    line = agent.project_trust.withheld()
    agent.withheld_noted = line
    cell.record(f"[agent_ext] project trust: {why}; {line}")
