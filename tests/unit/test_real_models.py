"""What the loop does for real (small, local) models: calls written as text, the window asked of
the server, cut answers, repeated failing calls. Servers are fakes on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ext.agent import Agent, ContextLimits
from agent_ext.agent import events as ev
from agent_ext.agent.transcript import unanswered_calls
from agent_ext.core import Kind, TextPart, tool
from agent_ext.models import ModelResponse, ScriptedModel, ToolCall, Usage, call
from agent_ext.models import window as win
from agent_ext.models.openai_chat import LOCAL_MAX_OUTPUT_TOKENS, OpenAIChatModel
from tests.fakes import SSE, FakeOpenAI, Status
from tests.fakes import openai_server as oai


@tool(kind=Kind.READ, read_only=True, defer=False)
def lookup(key: str) -> str:
    """Look a key up."""
    return f"{key}: found"


@pytest.fixture(autouse=True)
def _fresh_window_cache() -> Any:
    win.clear_cache()
    yield
    win.clear_cache()


def scripted_agent(steps: list[Any], tmp_path: Path, **kw: Any) -> tuple[Agent, ScriptedModel,
                                                                        list[ev.Event]]:
    model = ScriptedModel(steps)
    events: list[ev.Event] = []
    agent = Agent(model, cwd=tmp_path, plugins=False, mcp=False, on_event=events.append, **kw)
    agent.registry.register(lookup)
    return agent, model, events


def local_agent(srv: FakeOpenAI, tmp_path: Path, provider: str = "llamacpp",
                **kw: Any) -> tuple[Agent, list[ev.Event]]:
    model = OpenAIChatModel("qwen", base_url=srv.base_url, provider=provider,
                            retry_base_delay=0.01, **kw)
    events: list[ev.Event] = []
    agent = Agent(model, cwd=tmp_path, plugins=False, mcp=False, on_event=events.append)
    agent.registry.register(lookup)
    return agent, events


def notices(events: list[ev.Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, ev.Notice)]


def shown(events: list[ev.Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, ev.TextDelta))


LOOKUP = '{"name": "lookup", "arguments": {"key": "alpha"}}'


# -- in-band calls ----------------------------------------------------------------------------

async def test_a_call_written_as_text_runs_and_becomes_a_proper_call(tmp_path: Path) -> None:
    agent, model, events = scripted_agent(
        [f"Let me look.\n```json\n{LOOKUP}\n```", "alpha was found."], tmp_path,
        in_band_tools="always")
    run = await agent.run("look up alpha")
    assert run.stop_reason == "end" and run.text == "alpha was found."
    assert [(c.name, json.loads(c.arguments)) for c, _ in run.tool_calls] == [
        ("lookup", {"key": "alpha"})]
    assert run.tool_calls[0][1].text == "alpha: found"
    assistant = agent.messages[1]
    assert assistant.role == "assistant" and len(assistant.tool_calls) == 1
    assert assistant.tool_calls[0].id and assistant.parts == (TextPart("Let me look."),)
    assert agent.messages[2].tool_returns[0].call_id == assistant.tool_calls[0].id
    # The second request carries the call and its answer, not the call's text.
    sent = model.requests[1].messages
    assert sent[1].tool_calls == assistant.tool_calls and "```" not in str(sent[1].parts)
    # The user saw the prose, not the JSON, and was told once what happened.
    assert '"arguments"' not in shown(events) and "Let me look." in shown(events)
    said = [n for n in notices(events) if "as text" in n]
    assert len(said) == 1 and "scripted" in said[0] and "lookup(key)" in said[0]
    assert unanswered_calls(agent.messages) == []


async def test_the_notice_comes_once_a_session(tmp_path: Path) -> None:
    agent, _, events = scripted_agent(
        [f"<tool_call>{LOOKUP}</tool_call>", "one", f"<tool_call>{LOOKUP}</tool_call>", "two"],
        tmp_path, in_band_tools="always")
    await agent.run("first")
    run = await agent.run("second")
    assert run.text == "two" and len(run.tool_calls) == 1
    assert len([n for n in notices(events) if "as text" in n]) == 1


@pytest.mark.parametrize("mode", ["never", None])
async def test_off_for_never_and_for_a_cloud_model_on_auto(tmp_path: Path,
                                                           mode: str | None) -> None:
    agent, _, events = scripted_agent([LOOKUP], tmp_path, in_band_tools=mode)
    run = await agent.run("look up alpha")
    assert run.text == LOOKUP and run.tool_calls == []
    assert not [n for n in notices(events) if "as text" in n]


async def test_a_text_call_to_an_unknown_tool_stays_text_and_says_why(tmp_path: Path) -> None:
    answer = '```json\n{"name": "todo_search", "arguments": {"query": "TODO"}}\n```'
    agent, _, events = scripted_agent([answer], tmp_path, in_band_tools="always")
    run = await agent.run("find TODOs")
    assert run.text == answer and run.tool_calls == []
    assert any("todo_search" in n and "not one of its tools" in n for n in notices(events))


async def test_a_json_answer_to_a_plain_question_stays_text(tmp_path: Path) -> None:
    answer = '```json\n{"name": "Ada", "age": 36}\n```'
    agent, _, events = scripted_agent([answer], tmp_path, in_band_tools="always")
    run = await agent.run("describe Ada as JSON")
    assert run.text == answer and run.tool_calls == [] and shown(events) == answer
    assert not any("tool call" in n for n in notices(events))


async def test_local_server_text_calls_are_read_on_auto_and_sent_back_as_tool_calls(
        tmp_path: Path) -> None:
    with FakeOpenAI([oai.text_reply(f"<tool_call>\n{LOOKUP}\n</tool_call>"),
                     oai.text_reply("Found it.")]) as srv:
        agent, events = local_agent(srv, tmp_path)
        run = await agent.run("look up alpha")
    assert run.text == "Found it." and [c.name for c, _ in run.tool_calls] == ["lookup"]
    first, second = srv.bodies
    assert first["tool_choice"] == "auto" and first["max_tokens"] == LOCAL_MAX_OUTPUT_TOKENS
    assistant, tool_msg = second["messages"][2], second["messages"][3]
    assert assistant["content"] is None and assistant["tool_calls"][0]["function"] == {
        "name": "lookup", "arguments": json.dumps({"key": "alpha"})}
    assert tool_msg == {"role": "tool", "tool_call_id": assistant["tool_calls"][0]["id"],
                        "content": "alpha: found"}
    assert "qwen" in " ".join(notices(events))


async def test_no_tool_choice_or_cap_for_a_cloud_request_without_tools(tmp_path: Path) -> None:
    with FakeOpenAI([oai.text_reply("hi")]) as srv:
        model = OpenAIChatModel("m", base_url=srv.base_url, api_key="k", provider="openai")
        model.base_url = srv.base_url.replace("127.0.0.1", "localhost")
        from agent_ext.models import ModelRequest
        from agent_ext.models.base import complete
        await complete(model, ModelRequest(messages=(), tools=(), system="s"))
    assert "tool_choice" not in srv.bodies[0] and "tools" not in srv.bodies[0]
    # localhost counts as local: the default cap goes out.
    assert srv.bodies[0]["max_tokens"] == LOCAL_MAX_OUTPUT_TOKENS


@pytest.mark.parametrize(("kw", "sent"), [
    ({}, {"temperature": 0, "seed": 1}),  # greedy and seeded by default
    ({"extra_body": {"temperature": 0.5}}, {"seed": 1}),  # extra_body's own wins (sent there)
    ({"temperature": 0.7}, {"temperature": 0.7, "seed": 1}),
])
async def test_a_local_server_gets_greedy_seeded_sampling_unless_told(
        kw: dict[str, Any], sent: dict[str, Any]) -> None:
    from agent_ext.models import ModelRequest
    from agent_ext.models.base import complete
    with FakeOpenAI([oai.text_reply("hi")]) as srv:
        model = OpenAIChatModel("m", base_url=srv.base_url, provider="llamacpp", **kw)
        await complete(model, ModelRequest(messages=(), tools=(), system="s"))
    body = srv.bodies[0]
    assert {k: body[k] for k in ("temperature", "seed") if k in body} == {
        **sent, **kw.get("extra_body", {})}
    assert not OpenAIChatModel("m", base_url="https://api.example.com/v1").local  # cloud: none


def test_the_temperature_setting_is_checked_and_reaches_the_model(tmp_path: Path) -> None:
    from agent_ext.models.config import model_from_spec
    from agent_ext.settings import load_settings, model_options
    folder = tmp_path / "project"
    (folder / ".agent_ext").mkdir(parents=True)
    settings_file = folder / ".agent_ext" / "settings.json"
    settings_file.write_text(json.dumps({"modelOptions": {"llamacpp:qwen": {"temperature": 0.3},
                                                          "llamacpp:bad": {"temperature": 9}}}))
    settings = load_settings(folder)
    assert model_options(settings, "llamacpp:qwen") == {"temperature": 0.3}
    assert model_options(settings, "llamacpp:bad") == {}
    assert any('"modelOptions.llamacpp:bad.temperature" must be a number from 0 to 2' in p
               for p in settings.problems)
    model = model_from_spec("llamacpp:qwen", options=model_options(settings, "llamacpp:qwen"))
    assert isinstance(model, OpenAIChatModel) and model.temperature == 0.3


# -- honest ends ------------------------------------------------------------------------------

def cut(response: ModelResponse) -> ModelResponse:
    return ModelResponse(text=response.text, tool_calls=response.tool_calls,
                         usage=Usage(100, 50), provider_data={"finish_reason": "length"})


async def test_a_cut_tool_call_is_asked_again_once_with_the_cap_raised(tmp_path: Path) -> None:
    broken = cut(ModelResponse(tool_calls=(ToolCall("c1", "lookup", '{"key": "al'),)))
    agent, model, events = scripted_agent([broken, call("lookup", {"key": "alpha"}), "done"],
                                          tmp_path)
    run = await agent.run("look up alpha")
    assert run.stop_reason == "end" and [r.text for _, r in run.tool_calls] == ["alpha: found"]
    assert model.requests[0].max_output_tokens is None
    assert model.requests[1].max_output_tokens == 1024  # twice the 50 it was cut at, at least 1024
    assert model.requests[2].max_output_tokens is None  # raised for that step only
    assert any("cut off" in n and "tool call" in n for n in notices(events))
    # The cut call never entered the conversation.
    assert all(c.arguments != '{"key": "al' for m in agent.messages for c in m.tool_calls)


async def test_a_cut_call_over_http_raises_max_tokens(tmp_path: Path) -> None:
    whole = oai.tool_reply(("c1", "lookup", '{"key": "alpha"'), pieces=2)
    cut_events = [*whole.events[:-2], oai.chunk(finish_reason="length"), whole.events[-1]]
    with FakeOpenAI([SSE(cut_events), oai.tool_reply(("c2", "lookup", {"key": "alpha"})),
                     oai.text_reply("ok")]) as srv:
        agent, _ = local_agent(srv, tmp_path, max_output_tokens=300)
        run = await agent.run("look up alpha")
    assert run.stop_reason == "end"
    assert [b["max_tokens"] for b in srv.bodies] == [300, 1024, 300]


async def test_a_cut_in_band_call_is_asked_again(tmp_path: Path) -> None:
    agent, model, events = scripted_agent(
        [cut(ModelResponse(text='<tool_call>\n{"name": "lookup", "arguments": {"ke')),
         f"<tool_call>{LOOKUP}</tool_call>", "done"], tmp_path, in_band_tools="always")
    run = await agent.run("look up alpha")
    assert run.stop_reason == "end" and len(run.tool_calls) == 1
    assert model.requests[1].max_output_tokens == 1024
    assert '{"ke' not in shown(events)


async def test_a_cut_answer_is_not_final_without_saying_so(tmp_path: Path) -> None:
    agent, model, events = scripted_agent([cut(ModelResponse(text="The answer is that"))],
                                          tmp_path)
    run = await agent.run("explain")
    assert run.stop_reason == "length" and len(model.requests) == 1  # text cut: no retry
    assert any("cut off" in n and "maxOutputTokens" in n for n in notices(events))


async def test_the_same_failing_call_is_named_then_stops_the_run(tmp_path: Path) -> None:
    bad = {"nam": "alpha"}  # a hallucinated parameter
    agent, model, events = scripted_agent(
        [call("lookup", bad, id="1"), call("lookup", bad, id="2"), call("lookup", bad, id="3"),
         "never reached"], tmp_path)
    run = await agent.run("look up alpha")
    first, second, third = (r for _, r in run.tool_calls)
    assert third.is_error
    assert first.is_error and "exact call already" not in first.text
    assert second.text.startswith("You made this exact call already, and it failed the same "
                                  "way then")
    assert second.text.endswith(first.text)  # the error, once: it says what to change
    assert run.stop_reason == "repeated_call" and model.remaining == 1
    assert any("same failing call" in n for n in notices(events))
    assert unanswered_calls(agent.messages) == []


async def test_changed_arguments_or_a_success_do_not_count_as_repeats(tmp_path: Path) -> None:
    steps: list[Any] = [call("lookup", {"nam": "a"}, id="1"), call("lookup", {"na": "a"}, id="2"),
                        call("lookup", {"nam": "a"}, id="3"), call("lookup", {"key": "a"}, id="4"),
                        call("lookup", {"key": "a"}, id="5"), "done"]
    agent, _, _ = scripted_agent(steps, tmp_path)
    run = await agent.run("go")
    texts = [r.text for _, r in run.tool_calls]
    assert run.stop_reason == "end" and len(texts) == 5
    assert "exact call already" in texts[2] and "exact call already" not in texts[1]
    assert texts[3] == texts[4] == "a: found"


async def test_a_greedy_local_model_is_sampled_once_after_repeating_a_failing_call(
        tmp_path: Path) -> None:
    bad = {"nam": "alpha"}
    script = [oai.tool_reply(("c1", "lookup", bad)), oai.tool_reply(("c2", "lookup", bad)),
              oai.tool_reply(("c3", "lookup", {"key": "alpha"})), oai.text_reply("found")]
    with FakeOpenAI(script) as srv:
        agent, events = local_agent(srv, tmp_path)
        run = await agent.run("look up alpha")
        await agent.aclose()
    assert run.stop_reason == "end" and run.tool_calls[-1][1].text == "alpha: found"
    sent = [body["temperature"] for body in srv.bodies]
    # Greedy until the same failing call came twice; sampled for one answer; greedy again.
    assert sent == [0, 0, 0.7, 0]
    assert sum("sampled at temperature 0.7" in n for n in notices(events)) == 1


@pytest.mark.parametrize("kw", [{"temperature": 0.2}, {"extra_body": {"temperature": 0.2}}])
async def test_resampling_leaves_a_chosen_temperature_alone(
        kw: dict[str, Any], tmp_path: Path) -> None:
    bad = {"nam": "alpha"}
    script = [oai.tool_reply(("c1", "lookup", bad)), oai.tool_reply(("c2", "lookup", bad)),
              oai.text_reply("giving up")]
    with FakeOpenAI(script) as srv:
        model = OpenAIChatModel("qwen", base_url=srv.base_url, provider="llamacpp",
                                retry_base_delay=0.01, **kw)
        events: list[ev.Event] = []
        agent = Agent(model, cwd=tmp_path, plugins=False, mcp=False, on_event=events.append)
        agent.registry.register(lookup)
        await agent.run("look up alpha")
        await agent.aclose()
    assert len({json.dumps(body.get("temperature")) for body in srv.bodies}) == 1
    assert not any("sampled at temperature" in n for n in notices(events))
    # A cloud model samples by its own default: nothing to change there either.
    assert not OpenAIChatModel("m", base_url="https://api.example.com/v1").greedy


async def test_an_edit_of_a_file_never_read_is_remembered_as_its_read(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    blind = {"file_path": "calc.py", "old_string": "add(2, 3) gives -1", "new_string": "5"}
    fix = {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
    agent, model, events = scripted_agent(
        [call("edit", blind, id="1"), call("edit", blind, id="2"), call("edit", fix, id="3"),
         "fixed"], tmp_path, mode="acceptEdits")
    run = await agent.run("fix add")
    assert run.stop_reason == "end" and (tmp_path / "calc.py").read_text().endswith("a + b\n")
    # The user sees the edit as made, and why it did not land.
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert finished[0].call.name == "edit" and finished[0].result.error is not None
    assert finished[0].result.error.code == "edit_requires_prior_read"
    # The model's history holds the read that was made for it, not its failed edit.
    second = model.requests[1].messages
    assert [(c.name, json.loads(c.arguments)) for c in second[-2].tool_calls] == [
        ("read_file", {"file_path": "calc.py"})]
    answer = second[-1].tool_returns[0]
    assert not answer.is_error and answer.name == "read_file"
    assert answer.content[0].text == "     1\tdef add(a, b):\n     2\t    return a - b"
    # The same edit again is an ordinary miss: the model never saw itself make it before.
    again = run.tool_calls[1][1]
    assert again.is_error and "exact call already" not in again.text
    await agent.aclose()


async def test_a_remembered_call_leaves_signed_reasoning_alone(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("x = 1\n")
    blind = call("edit", {"file_path": "calc.py", "old_string": "y", "new_string": "z"}, id="1")
    signed = ModelResponse(tool_calls=blind.tool_calls,
                           provider_data={"thinking_blocks": [{"type": "thinking",
                                                               "signature": "s"}]})
    agent, model, _ = scripted_agent([signed, "done"], tmp_path, mode="acceptEdits")
    await agent.run("change it")
    sent = model.requests[1].messages
    assert [c.name for c in sent[-2].tool_calls] == ["edit"] and sent[-1].tool_returns[0].is_error
    await agent.aclose()


async def test_a_repeat_that_fails_differently_quotes_the_first_error(tmp_path: Path) -> None:
    failures = iter(["first reason", "second reason"])

    @tool(kind=Kind.READ, read_only=True, defer=False)
    def flaky(key: str) -> str:
        """Fail with a new reason each time."""
        raise ValueError(next(failures))

    agent, _, _ = scripted_agent([call("flaky", {"key": "a"}, id="1"),
                                  call("flaky", {"key": "a"}, id="2"), "done"], tmp_path)
    agent.registry.register(flaky)
    run = await agent.run("go")
    second = run.tool_calls[1][1].text
    assert second.startswith("You made this exact call already, and it failed then with:")
    assert "first reason" in second and second.rstrip().endswith("second reason")


# -- the window -------------------------------------------------------------------------------

PROPS = {"/props": Status(200, {"default_generation_settings": {"n_ctx": 16384}})}


@pytest.mark.parametrize(("provider", "info", "window"), [
    ("llamacpp", PROPS, 16384),
    ("llamacpp", {"/v1/models": Status(200, {"data": [
        {"id": "qwen", "meta": {"n_ctx": 12288, "n_ctx_train": 32768}}]})}, 12288),
    ("ollama", {"/api/show": Status(200, {"parameters": "stop <|im_end|>\nnum_ctx 6144",
                                          "model_info": {"qwen2.context_length": 32768}})}, 6144),
    ("ollama", {"/api/show": Status(200, {"model_info": {"qwen2.context_length": 32768}}),
                "/api/ps": Status(200, {"models": [{"name": "qwen", "context_length": 8192}]})},
     8192),
    ("ollama", {"/api/show": Status(200, {"model_info": {"qwen2.context_length": 32768}})},
     win.OLLAMA_DEFAULT_CTX),
    ("lmstudio", {"/api/v0/models": Status(200, {"data": [
        {"id": "other", "max_context_length": 4096},
        {"id": "qwen", "max_context_length": 32768, "loaded_context_length": 10240}]})}, 10240),
    ("vllm", {"/v1/models": Status(200, {"data": [{"id": "qwen", "max_model_len": 20480}]})},
     20480),
    # An OpenAI-compatible server on loopback of an unknown kind: every probe is tried.
    ("openai", PROPS, 16384),
])
async def test_the_window_is_asked_and_used(tmp_path: Path, provider: str,
                                            info: dict[str, Status], window: int) -> None:
    with FakeOpenAI([oai.text_reply("hi"), oai.text_reply("again")], info=info) as srv:
        agent, events = local_agent(srv, tmp_path, provider)
        await agent.run("hello")
        asked = len(srv.info_requests)
        await agent.run("hello again")
        assert len(srv.info_requests) == asked  # asked once
        assert agent.limits.window_tokens == window
        assert any(f"{window:,} tokens" in n for n in notices(events))
        # Cached per (base URL, model): a second session does not ask again.
        again, _ = local_agent(srv, tmp_path, provider)
        assert again.model.probe_context_window() == window  # type: ignore[attr-defined]
        assert len(srv.info_requests) == asked


async def test_a_server_that_says_nothing_leaves_the_default(tmp_path: Path) -> None:
    with FakeOpenAI([oai.text_reply("hi")]) as srv:
        agent, _ = local_agent(srv, tmp_path, "llamacpp")
        await agent.run("hello")
    assert agent.limits.window_tokens == ContextLimits.window_tokens


def test_a_slow_server_is_not_waited_for() -> None:
    import time

    with FakeOpenAI(info={"/props": Status(200, {"n_ctx": 1}, delay=3)}) as srv:
        t0 = time.monotonic()
        assert win.context_window(srv.url, "qwen", "llamacpp", timeout=0.3) is None
        assert time.monotonic() - t0 < 2


async def test_a_configured_window_wins_and_nothing_is_asked(tmp_path: Path) -> None:
    with FakeOpenAI([oai.text_reply("hi")], info=PROPS) as srv:
        agent, _ = local_agent(srv, tmp_path, context_window=9000)
        await agent.run("hello")
    assert srv.info_requests == [] and agent.limits.window_tokens == 9000


async def test_cloud_models_are_not_asked(tmp_path: Path) -> None:
    model = OpenAIChatModel("gpt", base_url="https://api.example.invalid/v1", api_key="k")
    assert not model.local and model.probe_context_window() is None
    assert model.max_output_tokens is None


@pytest.mark.parametrize(("provider", "advice"), [
    ("llamacpp", "-c 4096"), ("ollama", "num_ctx to 4096"),
    ("lmstudio", "context length of 4096"), ("vllm", "--max-model-len 4096")])
async def test_a_window_too_small_for_the_first_request_says_what_to_raise(
        tmp_path: Path, provider: str, advice: str) -> None:
    # 1,024 tokens: too small even for the compact profile a small window gets.
    info = {"/props": Status(200, {"default_generation_settings": {"n_ctx": 1024}}),
            "/api/show": Status(200, {"parameters": "num_ctx 1024"}),
            "/api/v0/models": Status(200, {"data": [{"id": "qwen",
                                                      "loaded_context_length": 1024}]}),
            "/v1/models": Status(200, {"data": [{"id": "qwen", "max_model_len": 1024}]})}
    with FakeOpenAI([], info=info) as srv:
        agent, _ = local_agent(srv, tmp_path, provider)
        run = await agent.run("read the file app.py and fix the bug")
        assert srv.requests == []  # nothing was sent that could not fit
    assert run.stop_reason == "error" and run.error is not None
    assert advice in run.error and "1,024" in run.error and "tool declarations" in run.error
    assert "compact" not in run.error


async def test_a_server_refusing_the_first_prompt_gets_the_raise_advice(tmp_path: Path) -> None:
    refusal = oai.error(400, "the request exceeds the available context size, try increasing it",
                        code="exceed_context_size_error")
    with FakeOpenAI([refusal]) as srv:
        agent, _ = local_agent(srv, tmp_path, "llamacpp")
        run = await agent.run("hello")
    assert run.error is not None and "-c " in run.error and "only your prompt" in run.error


def test_suggested_window_leaves_room() -> None:
    assert win.suggested_window(4500) == 8192
    assert win.suggested_window(8192) == 8192
    assert win.suggested_window(10) == 2048


class CappedModel(ScriptedModel):
    """A scripted model with an output cap, as local models have."""

    max_output_tokens = 4096


@pytest.mark.parametrize(("model_cls", "compacts"), [(CappedModel, True), (ScriptedModel, False)])
async def test_compaction_leaves_room_for_the_output_cap(tmp_path: Path, model_cls: type,
                                                         compacts: bool) -> None:
    from agent_ext.models import Message

    model = model_cls(["SUMMARY: earlier work", "answer"] if compacts else ["answer"])
    events: list[ev.Event] = []
    agent = Agent(model, cwd=tmp_path, plugins=False, mcp=False, on_event=events.append,
                  limits=ContextLimits(window_tokens=16384))
    base = agent.request()
    from agent_ext.agent import context as ctxmod

    # History that brings the next request between window - cap (12,288) and 80 % (13,107).
    filler = 12_600 - ctxmod.estimate_request(base)
    agent.messages += [Message(role="user", parts=(TextPart("earlier"),)),
                       Message(role="assistant", parts=(TextPart("x" * (filler * 4)),)),
                       Message(role="user", parts=(TextPart("and then"),)),
                       Message(role="assistant", parts=(TextPart("ok"),))]
    run = await agent.run("now")
    assert run.text == "answer"
    assert any("compacted" in n for n in notices(events)) is compacts
