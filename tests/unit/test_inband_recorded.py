"""Real answers of Qwen2.5-Coder (1.5B and 0.5B, llama-server --jinja, temperature 0) to
agent_ext's real first request, recorded by scripts/record_inband.py: each is read as the calls
it holds, or stays text.

What the real models wrote: to a first request, every answer that meant a call was a ```json
fence holding ``{"name", "arguments"}``; llama-server turned none into a structured call. A JSON
answer to a plain question came as a fence (1.5B) and as a bare object (0.5B). The
``*_raw_05b`` answers were completed from the server's own rendering of the request (compact
profile), parsed by no server: Qwen's template asks for ``<tool_call>`` tags, and still the
model wrote fences. After a tool result the 0.5B wrote bare objects, one a line: a call to a
function of the user's code with an invented result after it (stays text), and, after an
``edit`` refused for an old_string not in the file, calls to one tool after another, again and
again, until the output cap cut it off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ext.agent import Agent, RunResult
from agent_ext.agent import events as ev
from agent_ext.agent.honest import resolver
from agent_ext.core import Registry
from agent_ext.models import inband as ib
from agent_ext.models import window as win
from agent_ext.models.openai_chat import OpenAIChatModel
from agent_ext.tools import register_builtins
from tests.fakes import FakeOpenAI
from tests.fakes import openai_server as oai

FIXTURES = Path(__file__).parent / "fixtures" / "inband"

#: fixture -> the calls it holds as (tool, arguments that must be there), or None: stays text.
EXPECTED: dict[str, list[tuple[str, dict[str, Any]]] | None] = {
    "read_and_fix": [("read_file", {"file_path": "app.py"})],
    "list_files": [("ls", {"path": "."})],
    "grep_todo": None,  # a call to todo_search, which is no tool
    "run_tests": [("run_cell", {"cell_id": "cell-1"})],
    "read_csv_head": [("read_file", {"file_path": "data.csv", "offset": 1, "limit": 5})],
    "write_hello": [("write_file", {"file_path": "hello.py", "content": "print('hello')"})],
    "fix_off_by_one": [("run_cell", {"cell_id": "cell-1"})],
    "glob_python": [("glob", {"pattern": "*.py"})],
    "plain_json": None,
    "plain_question": [("run_cell", {"code": "7 // 2"})],  # the model chose a tool
    "edit_after_read": [("edit", {"file_path": "app.py", "replace_all": False})],
    "edit_after_read_cut": None,  # cut by the output cap in the middle of the call
    "read_and_fix_05b": [("read_file", {"offset": 0, "limit": 2000})],
    "list_files_05b": [("glob", {"pattern": "src/**/*.ts"})],
    "write_hello_05b": [("write_file", {"content": "print('hello')"})],  # create_file: an alias
    "plain_json_05b": None,
    "read_and_fix_raw_05b": [("read_file", {"offset": 0, "limit": 100})],
    "list_files_raw_05b": [("read_file", {})],  # the folder given as a file
    "read_two_raw_05b": [("edit", {})],  # an edit of code the model imagined
    "plain_json_raw_05b": None,
    "edit_after_read_05b": None,  # `mean`, a function of app.py, and its "output" invented
    "edit_after_miss_05b": [("grep", {"path": "app.py"}), ("notebook_edit", {}),
                            ("read_file", {"file_path": "app.py"}), ("shell", {}),
                            ("tool_search", {}), ("write_file", {})],  # then it repeats
    "edit_after_miss_default_05b": [("edit", {"file_path": "app.py"})] + [
        ("notebook_edit", {"cell_id": str(n)}) for n in range(2, 7)],  # no exact repeat
}
#: The fixtures that are no ```json fence, and how many calls a loop left out of each.
FORMATS: dict[str, tuple[ib.Format, int]] = {
    "edit_after_miss_05b": ("bare JSON", 3), "edit_after_miss_default_05b": ("bare JSON", 0)}


def load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return doc


@pytest.fixture(scope="module")
def resolve() -> Any:
    registry = Registry()
    register_builtins(registry)
    return resolver(registry)


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(p.stem for p in FIXTURES.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_answer(name: str, resolve: Any) -> None:
    doc = load(name)
    message = doc["response"]["message"]
    assert not message.get("tool_calls")  # the server made no structured call
    assert doc["request"]["tool_choice"] == "auto" and "read_file" in doc["request"]["tools"]
    found = ib.parse(message["content"], resolve)
    expected = EXPECTED[name]
    if expected is None:
        assert found is None
        return
    fmt, left_out = FORMATS.get(name, ("json fence", 0))
    assert found is not None and found.format == fmt and found.left_out == left_out
    if doc["response"]["finish_reason"] == "stop":
        assert found.prose == ""
    assert [c.name for c in found.calls] == [n for n, _ in expected]
    for call, (_, args) in zip(found.calls, expected, strict=True):
        assert args.items() <= call.arguments.items()


def test_the_cut_answer_is_seen_as_a_cut_call(resolve: Any) -> None:
    doc = load("edit_after_read_cut")
    assert doc["response"]["finish_reason"] == "length"
    assert ib.looks_like_cut_call(doc["response"]["message"]["content"], resolve)
    whole = load("edit_after_read")["response"]["message"]["content"]
    assert not ib.looks_like_cut_call(whole, resolve)


def test_the_plain_json_answers_are_json_but_no_call(resolve: Any) -> None:
    for name in ("plain_json", "plain_json_05b", "plain_json_raw_05b"):
        text = load(name)["response"]["message"]["content"]
        body = text.strip().removeprefix("```json").removesuffix("```")
        assert json.loads(body) == {"name": "Ada", "age": 36}
        assert ib.parse(text, resolve) is None


async def replay(cwd: Path, replies: list[Any], prompt: str
                 ) -> tuple[RunResult, list[ev.Event], FakeOpenAI]:
    """A run of ``prompt`` against a local server that answers with ``replies``."""
    events: list[ev.Event] = []
    with FakeOpenAI(replies) as srv:
        model = OpenAIChatModel("qwen", base_url=srv.base_url, provider="llamacpp")
        agent = Agent(model, cwd=cwd, plugins=False, mcp=False, mode="acceptEdits",
                      on_event=events.append)
        try:
            run = await agent.run(prompt)
        finally:
            await agent.aclose()
    return run, events, srv


async def test_the_recorded_session_runs_through_the_loop(tmp_path: Path) -> None:
    """The recorded read, then the recorded (no-op) edit, then a final answer: the read runs on
    the real file and the edit is refused without touching it."""
    win.clear_cache()
    source = "def mean(values):\n    return sum(values) / len(values) + 1\n\nprint(mean([1, 2, 3]))\n"
    (tmp_path / "app.py").write_text(source)
    read = load("read_and_fix")["response"]["message"]["content"]
    edit = load("edit_after_read")["response"]["message"]["content"]
    run, events, _ = await replay(tmp_path, [oai.text_reply(read, pieces=7),
                                             oai.text_reply(edit, pieces=9),
                                             oai.text_reply("I could not find the bug.")],
                                  "read the file app.py and fix the bug")
    assert [c.name for c, _ in run.tool_calls] == ["read_file", "edit"]
    read_result, edit_result = (r for _, r in run.tool_calls)
    assert "return sum(values)" in read_result.text and not read_result.is_error
    assert edit_result.is_error  # old_string == new_string
    assert (tmp_path / "app.py").read_text() == source
    assert run.stop_reason == "end" and run.text == "I could not find the bug."
    shown = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
    assert '"arguments"' not in shown
    said = [e.text for e in events if isinstance(e, ev.Notice) and "as text" in e.text]
    assert len(said) == 1 and "llamacpp:qwen" in said[0] and "json fence" in said[0]


@pytest.mark.parametrize(("name", "ran"), [("edit_after_miss_05b", "grep"),
                                           ("edit_after_miss_default_05b", "edit")])
async def test_a_run_on_answer_cut_by_the_cap_runs_its_first_call_only(
        name: str, ran: str, tmp_path: Path) -> None:
    """Calls written one after another until the output cap cut the answer off: the first is
    run, the rest are left out with a notice, and the answer is not asked again."""
    win.clear_cache()
    (tmp_path / "app.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    doc = load(name)
    assert doc["response"]["finish_reason"] == "length"
    run, events, srv = await replay(
        tmp_path, [oai.text_reply(doc["response"]["message"]["content"], pieces=11,
                                  finish_reason="length"), oai.text_reply("Done.")],
        "mean() in app.py returns the wrong value; fix it.")
    assert [c.name for c, _ in run.tool_calls] == [ran] and len(srv.bodies) == 2
    said = [e.text for e in events if isinstance(e, ev.Notice) and "leaves the other" in e.text]
    assert len(said) == 1 and "takes the first call" in said[0]
    assert (tmp_path / "app.py").read_text().endswith("len(values)\n")
