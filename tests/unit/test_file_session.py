"""A scripted session with the real file tools: read, edit, approve; the transcript is pinned."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_ext.agent import Agent, ApprovalRequest, Decision
from agent_ext.agent.transcript import dump_messages
from agent_ext.core import ErrorCode
from agent_ext.fs import EditHistory
from agent_ext.models import ScriptedModel, call
from agent_ext.tools.edit import EditTool
from agent_ext.tools.read_file import ReadFileTool
from agent_ext.tools.write_file import WriteFileTool

SNAPSHOTS = Path(__file__).parent / "snapshots"
SOURCE = 'def greet(name):\n    print("Hello, " + name)\n\n\ngreet("world")\n'


def snapshot(name: str, value: Any) -> None:
    path = SNAPSHOTS / name
    text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
    if os.environ.get("AGENT_EXT_UPDATE_SNAPSHOTS"):
        path.write_text(text)
    assert json.loads(path.read_text()) == value, (
        f"{name} changed; review and rerun with AGENT_EXT_UPDATE_SNAPSHOTS=1 to accept")


def script() -> ScriptedModel:
    return ScriptedModel([
        call("read_file", {"file_path": "greet.py"}, id="r1", text="Let me read it first."),
        call("edit", {"file_path": "greet.py", "old_string": 'print("Hello, " + name)',
                      "new_string": 'print(f"Hi, {name}!")'}, id="e1"),
        "Done: greet() now says Hi.",
    ])


def session(tmp_path: Path, decide: Callable[[ApprovalRequest], Decision]
            ) -> tuple[Agent, list[ApprovalRequest]]:
    (tmp_path / "greet.py").write_text(SOURCE)
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return decide(request)

    agent = Agent(script(), cwd=tmp_path, approver=approver, plugins=False)
    for tool in (ReadFileTool, EditTool, WriteFileTool):  # the built-ins, as registered
        assert isinstance(agent.registry.get(tool.name), tool)
    return agent, asked


def without_cwd(agent: Agent, value: Any) -> Any:
    """``value`` with the session's temporary folder written as ``<cwd>``."""
    text = json.dumps(value, ensure_ascii=False)
    return json.loads(text.replace(str(agent.cwd), "<cwd>"))


async def test_read_edit_approve_session_is_pinned(tmp_path: Path) -> None:
    agent, asked = session(tmp_path, lambda request: Decision.approve())
    run = await agent.run("Make greet say Hi.")
    assert run.text == "Done: greet() now says Hi." and run.stop_reason == "end"
    assert (tmp_path / "greet.py").read_text() == SOURCE.replace(
        'print("Hello, " + name)', 'print(f"Hi, {name}!")')
    assert [r.tool_name for r in asked] == ["edit"]
    details = asked[0].details
    assert details.kind == "edit" and details.original == SOURCE
    assert details.proposed == (tmp_path / "greet.py").read_text()
    assert [result.is_error for _, result in run.tool_calls] == [False, False]
    snapshot("file_session.json", without_cwd(agent, {
        "approval": {"title": details.title, "summary": details.summary, "diff": details.diff},
        "transcript": dump_messages(agent.messages),
    }))


async def test_edit_then_approve_lands_the_users_text(tmp_path: Path) -> None:
    mine = 'def greet(name):\n    print("Howdy, " + name)\n'
    agent, _ = session(tmp_path, lambda request: Decision.approve(modified=mine))
    run = await agent.run("Make greet say Hi.")
    assert (tmp_path / "greet.py").read_text() == mine
    result = run.tool_calls[1][1]
    assert not result.is_error and "The user edited your proposed change" in result.text
    assert "Howdy" in result.text
    history = agent.context.service(EditHistory)
    assert history is not None and len(history.entries()) == 1


async def test_a_rejection_writes_nothing(tmp_path: Path) -> None:
    agent, _ = session(tmp_path, lambda request: Decision.reject("not now"))
    run = await agent.run("Make greet say Hi.")
    assert (tmp_path / "greet.py").read_text() == SOURCE
    result = run.tool_calls[1][1]
    assert result.error is not None and result.error.code == ErrorCode.EXECUTION_DENIED
    assert "not now" in result.text
    history = agent.context.service(EditHistory)
    assert history is None or history.entries() == []


async def test_a_file_changed_while_the_user_decides_is_not_overwritten(tmp_path: Path) -> None:
    theirs = 'def greet(name):\n    print("Hello there, " + name)\n'

    def user_saves_then_approves(request: ApprovalRequest) -> Decision:
        (tmp_path / "greet.py").write_text(theirs)
        return Decision.approve()

    agent, _ = session(tmp_path, user_saves_then_approves)
    run = await agent.run("Make greet say Hi.")
    assert (tmp_path / "greet.py").read_text() == theirs
    result = run.tool_calls[1][1]
    assert result.error is not None and result.error.code == ErrorCode.FILE_CHANGED_SINCE_READ
