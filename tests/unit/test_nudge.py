"""A fix written as text by a small model: nothing is applied from the text; the model is told
once, with the exact call that would make the change, and makes it (or not) as a tool call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from agent_ext.agent import Agent
from agent_ext.agent import events as ev
from agent_ext.agent.nudge import Target, fences, propose, read_targets
from agent_ext.models import ScriptedModel, call

CALC = 'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n'
FILE = [Target("calc.py", CALC)]


def arguments(text: str, targets: list[Target]) -> dict[str, Any] | None:
    found = propose(text, targets)
    return None if found is None else {"tool": found.tool, **found.arguments}


@pytest.mark.parametrize("answer", [
    "The bug is the minus. Change it to:\n```python\nreturn a + b\n```",
    "```python\ndef add(a, b):\n    return a + b\n```",  # the docstring left out
    "```\ndef add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a + b\n```",
])
def test_a_changed_line_of_a_read_file_is_proposed_as_an_edit(answer: str) -> None:
    assert arguments(answer, FILE) == {"tool": "edit", "file_path": "calc.py",
                                       "old_string": "    return a - b",
                                       "new_string": "    return a + b"}


@pytest.mark.parametrize("answer", [
    "Done.",  # no code
    "```python\nprint(add(2, 3))\n```",  # new code, not a changed line
    "```python\ndef add(a, b):\n    return a - b\n```",  # the text unchanged
    "```python\nreturn a + b\nprint(add(2, 3))\n```",  # a fix plus new code: not clear
])
def test_nothing_is_proposed_without_a_clear_change(answer: str) -> None:
    assert propose(answer, FILE) is None


def test_an_ambiguous_target_is_not_proposed() -> None:
    twice = [Target("a.py", "x = 1\ny = 2\n"), Target("b.py", "x = 1\nz = 3\n")]
    assert propose("```\nx = 10\n```", twice) is None
    same_line = [Target("c.py", "total = a\ntotal = b\n")]
    assert propose("```\ntotal = c\n```", same_line) is None


def test_a_cell_gets_its_whole_new_source() -> None:
    cells = [Target("nb.ipynb", "nums = [3, 5, 7]", "data", "nb.ipynb"),
             Target("nb.ipynb", "avg = sum(nums) / len(num)\nprint(avg)", "average", "nb.ipynb")]
    found = propose("Use nums:\n```python\navg = sum(nums) / len(nums)\n```", cells)
    assert found is not None and found.tool == "notebook_edit"
    assert found.arguments == {"notebook_path": "nb.ipynb", "cell_id": "average",
                               "new_source": "avg = sum(nums) / len(nums)\nprint(avg)"}
    note = found.note()
    assert "Nothing was changed" in note and "cell 'average' of nb.ipynb" in note
    call = json.loads(fences(note)[0])  # written as the model writes calls: read as a call
    assert call == {"name": "notebook_edit", "arguments": found.arguments}
    assert "reply with only this tool call" in note


def test_a_fence_showing_the_cells_before_the_changed_one_is_still_clear() -> None:
    cells = [Target("nb.ipynb", "nums = [3, 5, 7]", "data", "nb.ipynb"),
             Target("nb.ipynb", "avg = sum(nums) / len(num)\nprint(avg)", "average", "nb.ipynb")]
    found = propose("Here:\n```python\nnums = [3, 5, 7]\navg = sum(nums) / len(nums)\n"
                    "print(avg)\n```", cells)
    assert found is not None and found.arguments["cell_id"] == "average"
    assert found.arguments["new_source"] == "avg = sum(nums) / len(nums)\nprint(avg)"
    assert propose("```\nnums = [3, 5, 7]\navg = sum(nums) / len(nums)\n```",
                   [Target("a.py", "x = 1"), cells[1]]) is None  # context is the same notebook


def test_fences_and_targets_are_read_as_they_are_now(tmp_path: Path) -> None:
    assert fences("a\n```py\nx\n```\nb ```\ny\n```") == ["x\n", "y\n"]
    (tmp_path / "calc.py").write_text(CALC)
    nbformat.write(new_notebook(cells=[new_code_cell("a = 1", id="one")]), tmp_path / "n.ipynb")
    (tmp_path / "bad.ipynb").write_text("{not json")
    got = read_targets(["calc.py", "calc.py:2-3", "n.ipynb", "bad.ipynb", "missing.py",
                        "cell://one"], tmp_path)
    assert got == [Target("calc.py", CALC), Target("calc.py:2-3", CALC),
                   Target("n.ipynb", "a = 1", "one", "n.ipynb")]


def agent_for(steps: list[Any], tmp_path: Path, **kw: Any) -> tuple[Agent, list[ev.Event]]:
    events: list[ev.Event] = []
    agent = Agent(ScriptedModel(steps), cwd=tmp_path, plugins=False, mcp=False,
                  mode="acceptEdits", on_event=events.append, **kw)
    return agent, events


FIX_AS_TEXT = "The fix is:\n```python\nreturn a + b\n```"


async def test_the_model_is_told_once_and_its_own_call_makes_the_change(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    agent, events = agent_for([
        call("read_file", {"file_path": "calc.py"}), FIX_AS_TEXT,
        call("edit", {"file_path": "calc.py", "old_string": "    return a - b",
                      "new_string": "    return a + b"}), "Fixed."], tmp_path, in_band_tools="always")
    run = await agent.run("fix add in calc.py")
    assert run.text == "Fixed." and run.stop_reason == "end"
    assert (tmp_path / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    told = [m for m in agent.messages if m.role == "user"][1].parts[0].text  # type: ignore[union-attr]
    assert '"old_string": "    return a - b"' in told
    assert any("as text without calling a tool" in e.text for e in events
               if isinstance(e, ev.Notice))


async def test_nothing_is_applied_from_text_and_the_note_comes_once(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    agent, _ = agent_for([call("read_file", {"file_path": "calc.py"}), FIX_AS_TEXT, FIX_AS_TEXT],
                         tmp_path, in_band_tools="always")
    run = await agent.run("fix add in calc.py")
    assert run.text == FIX_AS_TEXT and run.turns == 3
    assert (tmp_path / "calc.py").read_text() == CALC


@pytest.mark.parametrize(("mode", "steps"), [
    ("never", [call("read_file", {"file_path": "calc.py"}), FIX_AS_TEXT]),  # not a small model
    ("always", [FIX_AS_TEXT]),  # nothing read: no target
    ("always", [call("read_file", {"file_path": "calc.py"}),
                call("edit", {"file_path": "calc.py", "old_string": "a - b",
                              "new_string": "a - b + 0"}),
                FIX_AS_TEXT]),  # a change was made this run
])
async def test_no_note_when_it_does_not_apply(tmp_path: Path, mode: str,
                                              steps: list[Any]) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    agent, _ = agent_for(steps, tmp_path, in_band_tools=mode)
    run = await agent.run("fix add in calc.py")
    assert run.text == FIX_AS_TEXT and run.turns == len(steps)


@pytest.mark.parametrize(("profile", "content", "written"), [
    ("compact", "    return a + b\n", False),  # the fixed line alone: the rest would be lost
    ("compact", CALC.replace("a - b", "a + b"), True),  # the whole file, fixed
    ("default", "    return a + b\n", True),  # a large model's overwrite is its own choice
])
async def test_a_fragment_sent_as_a_whole_file_is_refused_for_a_small_model(
        tmp_path: Path, profile: str, content: str, written: bool) -> None:
    (tmp_path / "calc.py").write_text(CALC)
    agent, _ = agent_for([], tmp_path, tool_profile=profile)
    await agent.call_tool("read_file", {"file_path": "calc.py"})
    result = await agent.call_tool("write_file", {"file_path": "calc.py", "content": content})
    await agent.aclose()
    assert (tmp_path / "calc.py").read_text() == (content if written else CALC)
    assert result.is_error is not written
    if not written:
        assert "keeps 0 of the 3 lines" in result.text and "call edit" in result.text


def test_empty_optional_cell_parameters_count_as_left_out() -> None:
    from agent_ext.tools.notebook_edit import NotebookEditParams
    params = NotebookEditParams.model_validate({
        "notebook_path": "", "cell_id": "a", "new_source": "", "cell_type": " ",
        "after_cell_id": ""})
    assert (params.notebook_path, params.cell_type, params.after_cell_id) == (None, None, None)
    assert params.new_source == ""  # an empty source is a real value: the cell emptied


async def test_a_folder_as_notebook_path_is_told_to_leave_it_out(tmp_path: Path) -> None:
    """Small models pass the working directory as notebook_path."""
    agent, _ = agent_for([], tmp_path)
    result = await agent.call_tool("notebook_edit", {"notebook_path": str(tmp_path),
                                                     "cell_id": "a", "new_source": "x"})
    await agent.aclose()
    assert result.is_error and "is a folder, not a notebook" in result.text
    assert "leave notebook_path out" in result.text
