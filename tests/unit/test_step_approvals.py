"""The approvals of one step of the agent, asked together through an approver's ``ask_many``.

Real files and a real notebook file: the grouped calls land (or not) as each decision says; a
later call that replaces the whole of the same cell or file takes the earlier one's place; a
call on what an earlier call of the step touches is asked when it runs, so a read followed by
an edit, or two edits of one file, in one step still work.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import nbformat

from agent_ext.agent import Agent, ApprovalRequest, Decision
from agent_ext.models import ModelResponse, ScriptedModel, ToolCall, call


class Approver:
    """Answers each request from ``answers`` (by call id; approve otherwise), recording how."""

    def __init__(self, answers: dict[str, Decision] | None = None) -> None:
        self.answers = answers or {}
        self.groups: list[list[str]] = []
        self.single: list[str] = []

    async def __call__(self, request: ApprovalRequest) -> Decision:
        self.single.append(request.call_id)
        return self.answers.get(request.call_id, Decision.approve())

    async def ask_many(self, requests: Sequence[ApprovalRequest]) -> list[Decision]:
        self.groups.append([r.call_id for r in requests])
        return [self.answers.get(r.call_id, Decision.approve()) for r in requests]


def step(*calls: tuple[str, str, dict[str, object]]) -> ModelResponse:
    return ModelResponse(text="", tool_calls=tuple(ToolCall.of(i, n, a) for i, n, a in calls))


def notebook(path: Path, cells: dict[str, str]) -> None:
    nb = nbformat.v4.new_notebook()
    for cell_id, source in cells.items():
        cell = nbformat.v4.new_code_cell(source)
        cell["id"] = cell_id
        nb.cells.append(cell)
    nbformat.write(nb, path)


def agent(tmp_path: Path, approver: Approver, *steps: object) -> Agent:
    return Agent(ScriptedModel([*steps, "Done."]), cwd=tmp_path, approver=approver,  # type: ignore[list-item]
                 plugins=False, mcp=False)


def edit(call_id: str, cell: str, source: str) -> tuple[str, str, dict[str, object]]:
    return (call_id, "notebook_edit", {"notebook_path": "t.ipynb", "cell_id": cell,
                                       "new_source": source})


def sources(tmp_path: Path) -> list[str]:
    return [c.source for c in nbformat.read(tmp_path / "t.ipynb", as_version=4).cells]


async def test_one_steps_edits_are_asked_together_and_each_decision_holds(
        tmp_path: Path) -> None:
    notebook(tmp_path / "t.ipynb", {"a": "a = 1", "b": "b = 2", "c": "c = 3"})
    approver = Approver({"eb": Decision.reject("keep b")})
    a = agent(tmp_path, approver, call("read_file", {"file_path": "t.ipynb"}),
              step(edit("ea", "a", "a = 42"), edit("eb", "b", "b = 42"), edit("ec", "c", "c = 42")))
    run = await a.run("set them to 42")

    assert approver.groups == [["ea", "eb", "ec"]]
    assert approver.single == []
    assert sources(tmp_path) == ["a = 42", "b = 2", "c = 42"]
    results = {c.id: r for c, r in run.tool_calls}
    assert results["eb"].is_error and "keep b" in results["eb"].parts[0].text


async def test_a_later_proposal_for_the_same_cell_replaces_the_pending_one(
        tmp_path: Path) -> None:
    notebook(tmp_path / "t.ipynb", {"a": "a = 1", "b": "b = 2"})
    approver = Approver()
    a = agent(tmp_path, approver, call("read_file", {"file_path": "t.ipynb"}),
              step(edit("first", "a", "a = 41"), edit("other", "b", "b = 42"),
                   edit("second", "a", "a = 42")))
    run = await a.run("fix a")

    assert approver.groups == [["other", "second"]], "one card per cell: the later one"
    assert sources(tmp_path) == ["a = 42", "b = 42"]
    results = {c.id: r for c, r in run.tool_calls}
    assert results["first"].is_error
    assert "call second of the same step proposes a new version of cell a" in \
        results["first"].parts[0].text


async def test_a_cancel_in_the_group_runs_nothing(tmp_path: Path) -> None:
    notebook(tmp_path / "t.ipynb", {"a": "a = 1", "b": "b = 2"})
    approver = Approver({"eb": Decision.cancel()})
    a = agent(tmp_path, approver, call("read_file", {"file_path": "t.ipynb"}),
              step(edit("ea", "a", "a = 42"), edit("eb", "b", "b = 42")))
    run = await a.run("go")

    assert run.stop_reason == "cancelled"
    assert sources(tmp_path) == ["a = 1", "b = 2"], "the approved one does not run either"
    assert all("the user cancelled the run" in r.parts[0].text for c, r in run.tool_calls
               if c.name == "notebook_edit")


async def test_read_then_edit_and_two_edits_of_one_file_in_one_step_still_land(
        tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    (tmp_path / "g.txt").write_text("x\n")
    approver = Approver()
    a = agent(tmp_path, approver, call("read_file", {"file_path": "g.txt"}), step(
        ("r", "read_file", {"file_path": "f.txt"}),
        ("e1", "edit", {"file_path": "f.txt", "old_string": "one", "new_string": "ONE"}),
        ("e2", "edit", {"file_path": "f.txt", "old_string": "two", "new_string": "TWO"}),
        ("e3", "edit", {"file_path": "g.txt", "old_string": "x", "new_string": "y"})))
    run = await a.run("shout")

    assert [r.is_error for _, r in run.tool_calls] == [False] * 5, [
        r.parts[0].text for _, r in run.tool_calls]
    assert (tmp_path / "f.txt").read_text() == "ONE\nTWO\n"
    assert (tmp_path / "g.txt").read_text() == "y\n"
    # Only e3 was free of earlier calls on its file; alone, it is asked as usual.
    assert approver.groups == []
    assert approver.single == ["e1", "e2", "e3"]


async def test_an_approver_without_ask_many_asks_one_by_one(tmp_path: Path) -> None:
    notebook(tmp_path / "t.ipynb", {"a": "a = 1", "b": "b = 2"})
    asked: list[str] = []

    async def one(request: ApprovalRequest) -> Decision:
        asked.append(request.call_id)
        return Decision.approve()

    a = Agent(ScriptedModel([call("read_file", {"file_path": "t.ipynb"}),
                             step(edit("ea", "a", "a = 42"), edit("eb", "b", "b = 42")), "Done."]),
              cwd=tmp_path, approver=one, plugins=False, mcp=False)
    await a.run("go")
    assert asked == ["ea", "eb"]
    assert sources(tmp_path) == ["a = 42", "b = 42"]
