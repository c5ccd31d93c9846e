"""Edits that run unasked (a mode or a saved rule allowed them) say what allowed them, and the
transcript keeps their diff in the collapsed tool card, so nothing changes unseen."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agent_ext.agent import Agent
from agent_ext.agent import events as ev
from agent_ext.jupyter.widgets import TranscriptWidget
from agent_ext.models import ScriptedModel, call


def edit_call() -> object:
    return call("edit", {"file_path": "src/calc.py", "old_string": "a - b",
                         "new_string": "a + b"}, id="e1")


def read_call() -> object:
    return call("read_file", {"file_path": "src/calc.py"}, id="r1")


def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/calc.py").write_text("def add(a, b):\n    return a - b\n")
    return tmp_path


async def run(tmp_path: Path, **kw: object) -> tuple[list[ev.Event], TranscriptWidget]:
    events: list[ev.Event] = []
    widget = TranscriptWidget()
    agent = Agent(ScriptedModel([read_call(), edit_call(), "Fixed."]), cwd=project(tmp_path),
                  plugins=False, mcp=False, on_event=events.append, **kw)  # type: ignore[arg-type]
    agent.sinks.append(widget.add_event)
    result = await agent.run("fix add")
    assert result.stop_reason == "end", result.error
    await agent.aclose()
    return events, widget


@pytest.mark.parametrize(("kw", "line"), [
    ({"mode": "acceptEdits"}, "allowed by mode acceptEdits (edits inside the working roots run)"),
    ({"rules": {"allow": ["Edit(./src/**)"]}}, ("allowed by rule Edit(./src/**) in the rules "
                                               "passed to the agent")),
])
async def test_an_allowed_edit_says_why_and_keeps_its_diff(tmp_path: Path, kw: dict[str, object],
                                                           line: str) -> None:
    events, widget = await run(tmp_path, **kw)
    allowed = [e for e in events if isinstance(e, ev.CallAllowed)]
    assert [(e.call_id, e.tool_name, e.reason) for e in allowed] == [("e1", "edit", line)]
    assert not any(isinstance(e, ev.ApprovalRequested) for e in events)
    assert (tmp_path / "src/calc.py").read_text().endswith("return a + b\n")
    card = next(i for i in widget.items if i.get("call_id") == "e1")
    assert card["allowed"] == line and card["status"] == "done"
    assert card["diff"].startswith("--- ") and "-    return a - b" in card["diff"]
    assert "+    return a + b" in card["diff"]
    read = next(i for i in widget.items if i.get("call_id") == "r1")
    assert "allowed" not in read and "diff" not in read  # reads run unasked without a line
    assert line in widget._static_item(card)


async def test_plain_text_says_what_allowed_the_edit(tmp_path: Path) -> None:
    events, _ = await run(tmp_path, mode="acceptEdits")
    out = io.StringIO()
    render = ev.PlainTextRenderer(out)
    for event in events:
        render(event)
    lines = out.getvalue().splitlines()
    at = lines.index("  allowed by mode acceptEdits (edits inside the working roots run)")
    assert lines[at - 1].startswith("→ edit") and lines[at + 1].startswith("  edit: done")
