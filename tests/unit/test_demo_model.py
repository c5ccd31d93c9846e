"""DemoModel: labelled replay, session choice, templates, and life after the script ends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ext import Agent
from agent_ext.core import FunctionTool, Kind, TextPart
from agent_ext.models import Message, ModelRequest, ModelResponse, ScriptedModel, ToolReturn
from agent_ext.models.base import Model, TextDelta, ToolCallDelta
from agent_ext.models.demo import PREFIX, DemoModel, load_sessions, parse_session


def agent_for(demo: DemoModel, cwd: Path) -> Agent:
    return Agent(ScriptedModel(fn=demo.reply, label=demo.name), cwd=cwd, plugins=False)


def assistant_texts(agent: Agent) -> list[str]:
    return [p.text for m in agent.messages if m.role == "assistant"
            for p in m.parts if isinstance(p, TextPart)]


def request(*messages: Message, system: str = "") -> ModelRequest:
    return ModelRequest(messages=messages, tools=(), system=system)


def user(text: str) -> Message:
    return Message(role="user", parts=(TextPart(text),))


def assistant() -> Message:
    return Message(role="assistant", parts=(TextPart("x"),))


def tool_result(text: str, *, error: bool = False, name: str = "t") -> Message:
    return Message(role="tool", tool_returns=(ToolReturn("c", name, (TextPart(text),), error),))


def custom(steps: list[dict[str, Any]], **extra: Any) -> DemoModel:
    sessions = {"default": parse_session("default", {"steps": steps, **extra})}
    return DemoModel(sessions=sessions)


def test_shipped_sessions_load_and_are_labelled_as_replays() -> None:
    sessions = load_sessions()
    assert {"default", "tool_search", "read_file"} <= set(sessions)
    for session in sessions.values():
        assert session.description
        assert all(step.text.strip() for step in session.steps)
    demo = DemoModel()
    assert demo.name == "demo (replay)"
    assert isinstance(demo, Model)


@pytest.mark.parametrize(("prompt", "session"), [
    ("hello", "default"),
    ("", "default"),
    ("please read README.md", "read_file"),
    ("show me the contents of src/app.py", "read_file"),
    ("which tools can open a pull request?", "tool_search"),
    ("search for a tool to send email", "tool_search"),
])
def test_prompts_choose_the_best_matching_session(prompt: str, session: str) -> None:
    assert DemoModel().choose(prompt).name == session


def test_a_fixed_session_is_always_chosen_and_unknown_ones_are_refused() -> None:
    assert DemoModel("read_file").choose("which tools exist?").name == "read_file"
    with pytest.raises(ValueError, match=r"choose one of default, .*read_file, tool_search"):
        DemoModel("nope")
    with pytest.raises(ValueError, match="default"):
        DemoModel(sessions={})


async def test_a_whole_conversation_is_labelled_and_outlives_the_script(tmp_path: Path) -> None:
    agent = agent_for(DemoModel(), tmp_path)
    first = await agent.run("hello")
    assert first.tool_calls == []  # an unknown prompt: one honest sentence, no tool dump
    assert first.text.startswith(PREFIX + "No model is configured, so this is a replay")
    assert first.text.count(". ") == 0 and first.text.endswith(".")
    assert first.text.index("`%agent key openai`") < first.text.index("`%agent model openai:")
    second = await agent.run("please read notes.txt")
    assert [(c.name, json.loads(c.arguments)) for c, _ in second.tool_calls] == [
        ("read_file", {"file_path": "notes.txt"})]
    for later in ("hello again", "read it again", "and once more"):
        result = await agent.run(later)
        assert result.tool_calls == []
        assert result.text.startswith(PREFIX + "The replay has no more steps")
        assert "`%agent key openai`, then `%agent model openai:gpt-4o`" in result.text
    texts = assistant_texts(agent)
    assert len(texts) == 6
    assert all(t.startswith(PREFIX) and t.count(PREFIX) == 1 for t in texts)


async def test_read_file_reports_an_unknown_tool(tmp_path: Path) -> None:
    agent = agent_for(DemoModel(), tmp_path)
    result = await agent.run("open `docs/guide.md` please")
    ((call, outcome),) = result.tool_calls
    assert json.loads(call.arguments) == {"file_path": "docs/guide.md"}
    assert outcome.is_error
    assert result.text.startswith(PREFIX + "read_file could not be used here: ")


def test_read_file_defaults_to_the_readme_and_reports_success() -> None:
    demo = DemoModel("read_file")
    first = demo.reply(request(user("read something")))
    assert [json.loads(c.arguments) for c in first.tool_calls] == [{"file_path": "README.md"}]
    done = demo.reply(request(user("read something"), assistant(),
                              tool_result("# Project\nIt does things.", name="read_file")))
    assert done.text == (PREFIX + "read_file returned: # Project It does things. This was a "
                         "recorded replay; configure a model to have the file explained.")


def test_tool_search_session_searches_for_what_was_asked() -> None:
    reply = DemoModel().reply(request(user("search for a tool to create a pull request")))
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("tool_search", {"query": "create a pull request"})]
    assert reply.text == PREFIX + 'Searching the deferred tools for "create a pull request" with tool_search.'


def test_requests_past_the_end_of_a_turn_never_raise() -> None:
    demo = DemoModel()
    many = [assistant() for _ in range(10)]
    reply = demo.reply(request(user("hello"), *many))
    assert reply.tool_calls == ()
    assert reply.text.startswith(PREFIX + "The replay has no more steps")
    assert demo.reply(request()).text.startswith(PREFIX)


async def test_stream_yields_labelled_text_then_calls_then_the_response() -> None:
    items = [i async for i in DemoModel().stream(request(user("which tool can search?")))]
    final = items[-1]
    assert isinstance(final, ModelResponse)
    deltas = [i.text for i in items if isinstance(i, TextDelta)]
    assert "".join(deltas) == final.text
    assert deltas[0].startswith("[demo")
    calls = [i for i in items if isinstance(i, ToolCallDelta)]
    assert [(c.index, c.id, c.name, c.arguments) for c in calls] == [
        (0, final.tool_calls[0].id, "tool_search", final.tool_calls[0].arguments)]
    assert await DemoModel().respond(request(user("which tool can search?"))) == final


async def test_call_ids_are_unique_in_a_conversation(tmp_path: Path) -> None:
    agent = agent_for(DemoModel(), tmp_path)
    await agent.run("hello")
    await agent.run("read a.py")
    await agent.run("search for a tool to list branches")
    ids = [c.id for m in agent.messages for c in m.tool_calls]
    assert len(ids) == 2  # "hello" is answered in words, with no call
    assert len(set(ids)) == 2


async def test_placeholders_fill_from_the_request_and_the_last_result(tmp_path: Path) -> None:
    demo = custom([
        {"text": "In {cwd}: {prompt}", "tool_calls": [{"name": "peek", "arguments": {
            "dir": "{cwd}/sub", "n": 3, "items": ["{word}", {"keep": "{unknown} {}"}],
            "num": {"from_prompt": r"(\d+)"}}}]},
        {"text": "Got {code} from {last_tool}", "vars": {
            "code": {"from_last_result": r"code=(\w+)", "default": "none"}},
         "tool_calls": [{"name": "peek", "arguments": {"again": {"from_last_result": "code=\\w+"}}}]},
        {"text": "ok: {last_result}", "text_on_error": "failed: {last_result}"},
    ], vars={"word": {"from_prompt": r"\b(b\w+)"}})
    agent = agent_for(demo, tmp_path)

    def peek(**kwargs: Any) -> str:
        if "again" in kwargs:
            raise RuntimeError("broken")
        return "result code=Z42 and more"

    agent.registry.register(FunctionTool(peek, name="peek", description="Peek.",
                                         parameters={"type": "object"}, defer=False,
                                         kind=Kind.READ, read_only=True))
    result = await agent.run("take 12 blue apples")
    cwd = agent.cwd
    (first, _), (second, _) = result.tool_calls
    assert json.loads(first.arguments) == {
        "dir": f"{cwd}/sub", "n": 3,
        "items": ["blue", {"keep": "{unknown} {}"}], "num": "12"}
    assert json.loads(second.arguments) == {"again": "code=Z42"}
    texts = assistant_texts(agent)
    assert texts[0] == f"{PREFIX}In {cwd}: take 12 blue apples"
    assert texts[1] == PREFIX + "Got Z42 from peek"
    assert texts[2].startswith(PREFIX + "failed: peek failed: RuntimeError: broken")


def test_missing_matches_use_defaults_and_no_cwd_is_dot() -> None:
    demo = custom([{"text": "{cwd} {a} {b}", "vars": {
        "a": {"from_prompt": "zzz", "default": "A-{cwd}"},
        "b": {"from_last_result": "(x)?y", "default": "B"}}}])
    assert demo.reply(request(user("hi"))).text == PREFIX + ". A-. B"


def test_long_results_are_cut_for_text() -> None:
    demo = custom([{"text": "a", "tool_calls": [{"name": "t"}]}, {"text": "{last_result}"}])
    reply = demo.reply(request(user("hi"), assistant(), tool_result("word " * 200)))
    assert len(reply.text) == len(PREFIX) + 300
    assert reply.text.endswith("…")


@pytest.mark.parametrize(("data", "match"), [
    ({"steps": []}, "has no `steps`"),
    ({"steps": [{"text": " "}]}, "non-empty `text`"),
    ({"steps": [{"text": "a", "tool_calls": [{"name": "t", "arguments": []}]}]}, "non-object"),
    ({"steps": [{"text": "a"}], "match": "read"}, "list of keywords"),
    ({"steps": [{"text": "a"}], "vars": {"v": {"from_prompt": "("}}}, "bad regex"),
    ({"steps": [{"text": "a"}], "vars": {"v": 3}}, "must be a string or have one of"),
    ({"steps": [{"text": "a", "vars": []}]}, "`vars` must be an object"),
])
def test_malformed_sessions_are_refused(data: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_session("bad", data)
