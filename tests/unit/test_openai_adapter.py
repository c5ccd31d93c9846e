"""OpenAIChatModel against a fake Chat Completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ext.core import ImagePart, TextPart, ToolDeclaration
from agent_ext.models._openai_convert import ChunkAssembler
from agent_ext.models.base import ModelError, ReasoningDelta, StreamItem, TextDelta, ToolCallDelta
from agent_ext.models.openai_chat import OpenAIChatModel
from agent_ext.models.types import Message, ModelRequest, ModelResponse, ToolCall, ToolReturn
from tests.fakes import SSE, FakeOpenAI, free_port
from tests.fakes.openai_server import chunk, error, text_reply, tool_reply

pytestmark = pytest.mark.timeout(20)

PNG = b"\x89PNG\r\n\x1a\nfake"
HELLO = ModelRequest(messages=(Message("user", (TextPart("hello"),)),), tools=(), system="Be brief.")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy", "OPENAI_CUSTOM_HEADERS", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(var, raising=False)


def model(srv: FakeOpenAI, **kw: Any) -> OpenAIChatModel:
    kw.setdefault("retry_base_delay", 0.001)
    return OpenAIChatModel("fake-model", base_url=srv.base_url, api_key="test-key", **kw)


async def collect(m: OpenAIChatModel, request: ModelRequest = HELLO,
                  into: list[StreamItem] | None = None) -> tuple[list[StreamItem], ModelResponse]:
    """All deltas and the one final response (``into`` keeps what came before an error)."""
    items = into if into is not None else []

    async def run() -> None:
        async for item in m.stream(request):
            items.append(item)

    await asyncio.wait_for(run(), 10)
    finals = [i for i in items if isinstance(i, ModelResponse)]
    assert len(finals) == 1 and items[-1] is finals[0]
    return items[:-1], finals[0]


async def fails(m: OpenAIChatModel, request: ModelRequest = HELLO) -> tuple[ModelError,
                                                                             list[StreamItem]]:
    seen: list[StreamItem] = []
    with pytest.raises(ModelError) as info:
        await collect(m, request, seen)
    return info.value, seen


def calls_chunk(*calls: dict[str, Any]) -> dict[str, Any]:
    return chunk({"tool_calls": list(calls)})


def end(reason: str = "tool_calls") -> list[dict[str, Any]]:
    return [chunk(finish_reason=reason), chunk(usage=(7, 3), choices=False)]


# -- streaming ---------------------------------------------------------------------------------


async def test_plain_text_streams_deltas_then_one_response_with_usage() -> None:
    with FakeOpenAI([text_reply("Hello there, friend.", pieces=4, usage=(12, 4))]) as srv:
        deltas, final = await collect(model(srv))
    assert all(isinstance(d, TextDelta) for d in deltas) and len(deltas) == 4
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Hello there, friend."
    assert final.text == "Hello there, friend." and final.tool_calls == ()
    assert (final.usage.input_tokens, final.usage.output_tokens) == (12, 4)
    sent = srv.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer test-key"
    assert sent.body["model"] == "fake-model" and sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["messages"] == [{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "hello"}]
    assert "tools" not in sent.body


async def test_two_calls_interleaved_by_index_with_arguments_split_across_chunks() -> None:
    a, b = json.dumps({"path": "src/main.py", "limit": 40}), json.dumps({"pattern": "TODO"})
    events = [chunk({"role": "assistant", "content": "Looking."}),
              calls_chunk({"index": 0, "id": "call_a", "type": "function",
                           "function": {"name": "read_file", "arguments": ""}}),
              calls_chunk({"index": 1, "id": "call_b", "type": "function",
                           "function": {"name": "grep", "arguments": b[:3]}})]
    for n in range(0, len(a), 5):
        events.append(calls_chunk({"index": 0, "function": {"arguments": a[n:n + 5]}}))
        if n == 5:
            events.append(calls_chunk({"index": 1, "function": {"arguments": b[3:]}}))
    with FakeOpenAI([SSE(events + end())]) as srv:
        deltas, final = await collect(model(srv))
    assert final.text == "Looking."
    assert final.tool_calls == (ToolCall("call_a", "read_file", a), ToolCall("call_b", "grep", b))
    call_deltas = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert {d.index for d in call_deltas} == {0, 1}
    assert "".join(d.arguments for d in call_deltas if d.index == 0) == a
    assert all(d.id == "call_a" and d.name == "read_file" for d in call_deltas if d.index == 0)
    assert final.provider_data["finish_reason"] == "tool_calls"


async def test_a_whole_call_in_one_chunk() -> None:
    events = [calls_chunk({"index": 0, "id": "c1", "type": "function",
                           "function": {"name": "ls", "arguments": '{"path": "."}'}}), *end()]
    with FakeOpenAI([SSE(events)]) as srv:
        deltas, final = await collect(model(srv))
    assert final.tool_calls == (ToolCall("c1", "ls", '{"path": "."}'),)
    assert deltas == [ToolCallDelta(0, "c1", "ls", '{"path": "."}')]


async def test_calls_without_ids_get_stable_distinct_generated_ids() -> None:
    events = [calls_chunk({"index": 0, "function": {"name": "ls", "arguments": '{"pa'}}),
              calls_chunk({"index": 0, "function": {"arguments": 'th": "a"}'}}),
              calls_chunk({"index": 1, "function": {"name": "ls", "arguments": '{"path": "b"}'}}),
              *end()]
    with FakeOpenAI([SSE(events)]) as srv:
        deltas, final = await collect(model(srv))
    first, second = final.tool_calls
    assert re.fullmatch(r"call_0_[0-9a-f]+", first.id) and re.fullmatch(r"call_1_[0-9a-f]+",
                                                                        second.id)
    assert first.id != second.id
    assert (first.arguments, second.arguments) == ('{"path": "a"}', '{"path": "b"}')
    assert [d.id for d in deltas] == [first.id, first.id, second.id]


async def test_calls_without_index_are_told_apart_by_id_and_continued_in_order() -> None:
    events = [calls_chunk({"id": "c1", "function": {"name": "ls", "arguments": ""}}),
              calls_chunk({"function": {"arguments": '{"path": '}}),
              calls_chunk({"function": {"arguments": '"x"}'}}),
              calls_chunk({"id": "c2", "function": {"name": "cat", "arguments": '{"f": 1}'}}),
              *end()]
    with FakeOpenAI([SSE(events)]) as srv:
        _, final = await collect(model(srv))
    assert final.tool_calls == (ToolCall("c1", "ls", '{"path": "x"}'), ToolCall("c2", "cat",
                                                                                '{"f": 1}'))


async def test_repeated_id_and_name_in_later_chunks_are_not_doubled() -> None:
    events = [calls_chunk({"index": 0, "id": "c1", "type": "function",
                           "function": {"name": "grep", "arguments": '{"q":'}}),
              calls_chunk({"index": 0, "id": "c1", "type": "function",
                           "function": {"name": "grep", "arguments": ' "x"}'}}),
              # a server that reuses index 0 for a second call, with its own id
              calls_chunk({"index": 0, "id": "c2", "type": "function",
                           "function": {"name": "ls", "arguments": "{}"}}),
              *end()]
    with FakeOpenAI([SSE(events)]) as srv:
        _, final = await collect(model(srv))
    assert final.tool_calls == (ToolCall("c1", "grep", '{"q": "x"}'), ToolCall("c2", "ls", "{}"))


async def test_invalid_json_arguments_are_kept_raw() -> None:
    with FakeOpenAI([tool_reply(("c1", "edit", '{"path": "a", oops'))]) as srv:
        _, final = await collect(model(srv))
    assert final.tool_calls[0].arguments == '{"path": "a", oops'


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_is_streamed_kept_and_sent_back_next_turn(field: str) -> None:
    first = text_reply("It is 4.", reasoning="2 and 2 make 4.", reasoning_field=field)
    with FakeOpenAI([first, text_reply("ok")]) as srv:
        m = model(srv)
        deltas, final = await collect(m)
        assert "".join(d.text for d in deltas if isinstance(d, ReasoningDelta)) == \
            "2 and 2 make 4."
        assert final.text == "It is 4." and final.provider_data[field] == "2 and 2 make 4."
        history = (*HELLO.messages, Message("assistant", (TextPart(final.text),),
                                            provider_data=final.provider_data),
                   Message("user", (TextPart("and 3+3?"),)))
        await collect(m, ModelRequest(history, ()))
    assistant = srv.requests[1].body["messages"][1]
    assert assistant == {"role": "assistant", "content": "It is 4.", field: "2 and 2 make 4."}


async def test_reasoning_from_another_server_is_not_sent_back() -> None:
    data = {"reasoning_content": "elsewhere", "origin": "http://127.0.0.1:9/v1",
            "finish_reason": "stop"}
    history = (*HELLO.messages, Message("assistant", (TextPart("hi"),), provider_data=data),
               Message("user", (TextPart("again"),)))
    with FakeOpenAI([text_reply("ok")]) as srv:
        _, final = await collect(model(srv), ModelRequest(history, ()))
    assert srv.bodies[0]["messages"][1] == {"role": "assistant", "content": "hi"}
    assert final.provider_data["origin"] == srv.base_url


async def test_reasoning_and_tool_calls_round_trip_with_tool_results() -> None:
    reply = tool_reply(("c1", "read", {"path": "a.txt"}), ("c2", "shot", {}),
                       reasoning="Need the file.")
    with FakeOpenAI([reply, text_reply("done")]) as srv:
        m = model(srv)
        _, final = await collect(m)
        history = (*HELLO.messages,
                   Message("assistant", tool_calls=final.tool_calls,
                           provider_data=final.provider_data),
                   Message("tool", tool_returns=(
                       ToolReturn("c1", "read", (TextPart("file text"),)),
                       ToolReturn("c2", "shot", (TextPart("a chart"), ImagePart(PNG))),
                       ToolReturn("c3", "boom", (TextPart("it failed"),), is_error=True))))
        await collect(m, ModelRequest(history, ()))
    sent = srv.requests[1].body["messages"]
    assert sent[1] == {"role": "assistant", "content": None,
                       "reasoning_content": "Need the file.",
                       "tool_calls": [{"id": "c1", "type": "function", "function": {
                           "name": "read", "arguments": '{"path": "a.txt"}'}},
                                      {"id": "c2", "type": "function", "function": {
                                          "name": "shot", "arguments": "{}"}}]}
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": "file text"}
    assert sent[3]["role"] == "tool" and sent[3]["tool_call_id"] == "c2"
    assert sent[3]["content"].startswith("a chart")
    assert sent[4] == {"role": "tool", "tool_call_id": "c3", "content": "it failed"}
    images = sent[5]
    assert images["role"] == "user" and len(sent) == 6
    assert "c2" in images["content"][0]["text"] and "shot" in images["content"][0]["text"]
    assert images["content"][1] == {"type": "image_url", "image_url": {
        "url": "data:image/png;base64," + ImagePart(PNG).base64}}


async def test_per_call_extra_fields_are_sent_back_with_the_call() -> None:
    events = [calls_chunk({"index": 0, "id": "c1", "type": "function",
                           "function": {"name": "ls", "arguments": "{}"},
                           "extra_content": {"google": {"thought_signature": "sig=="}}}), *end()]
    with FakeOpenAI([SSE(events), text_reply("ok")]) as srv:
        m = model(srv)
        _, final = await collect(m)
        history = (*HELLO.messages, Message("assistant", tool_calls=final.tool_calls,
                                            provider_data=final.provider_data))
        await collect(m, ModelRequest(history, ()))
    call = srv.requests[1].body["messages"][1]["tool_calls"][0]
    assert call["extra_content"] == {"google": {"thought_signature": "sig=="}}


async def test_user_images_are_sent_as_data_urls() -> None:
    request = ModelRequest((Message("user", (TextPart("What is this?"),
                                             ImagePart(PNG, "image/jpeg"))),), ())
    with FakeOpenAI([text_reply("A picture.")]) as srv:
        await collect(model(srv), request)
    assert srv.requests[0].body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,"
                                                   + ImagePart(PNG).base64}}]}]


async def test_tool_declarations_are_sent_exactly_as_given() -> None:
    schema = {"type": "object", "properties": {
        "path": {"type": "string", "description": "Where."},
        "mode": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}], "default": None},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["path"], "additionalProperties": False,
        "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "integer"}}}}}
    decls = (ToolDeclaration("read_file", "Read a file.", schema),
             ToolDeclaration("noop", "", {"type": "object", "properties": {}}))
    with FakeOpenAI([text_reply("ok")]) as srv:
        await collect(model(srv), ModelRequest(HELLO.messages, decls))
    assert srv.requests[0].body["tools"] == [
        {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                          "parameters": schema}},
        {"type": "function", "function": {"name": "noop", "description": "",
                                          "parameters": {"type": "object", "properties": {}}}}]


async def test_extra_body_is_merged_into_the_request() -> None:
    with FakeOpenAI([text_reply("ok")]) as srv:
        await collect(model(srv, extra_body={"max_tokens": 99, "top_k": 5}))
    assert srv.requests[0].body["max_tokens"] == 99 and srv.requests[0].body["top_k"] == 5


async def test_stream_options_rejected_once_then_left_out() -> None:
    script = [error(400, "Unrecognized request argument supplied: stream_options"),
              text_reply("a", usage=None), text_reply("b", usage=None)]
    with FakeOpenAI(script) as srv:
        m = model(srv)
        _, first = await collect(m)
        _, second = await collect(m)
    assert (first.text, second.text) == ("a", "b")
    assert [("stream_options" in b) for b in srv.bodies] == [True, False, False]


async def test_stopping_early_closes_the_stream_cleanly() -> None:
    with FakeOpenAI([SSE(text_reply("a b c d e f", pieces=6).events, interval=0.05)]) as srv:
        stream = model(srv).stream(HELLO)
        assert isinstance(await anext(stream), TextDelta)
        await stream.aclose()  # type: ignore[attr-defined]


# -- retries and errors ------------------------------------------------------------------------


async def test_429_is_retried_after_the_retry_after_the_server_asked_for() -> None:
    script = [error(429, "Slow down.", type="rate_limit_error", headers={"retry-after": "0.3"}),
              text_reply("finally")]
    with FakeOpenAI(script) as srv:
        started = time.monotonic()
        _, final = await collect(model(srv))
        waited = time.monotonic() - started
    assert final.text == "finally" and len(srv.requests) == 2 and waited >= 0.28


async def test_500_then_success_is_retried() -> None:
    with FakeOpenAI([error(500, "oops", type="server_error"), error(502, "bad gateway"),
                     text_reply("ok")]) as srv:
        _, final = await collect(model(srv))
    assert final.text == "ok" and len(srv.requests) == 3


async def test_rate_limit_that_never_clears_says_to_wait() -> None:
    with FakeOpenAI([error(429, "Slow down.")] * 3) as srv:
        err, _ = await fails(model(srv, max_retries=2))
    assert err.kind == "rate_limit" and err.status == 429 and len(srv.requests) == 3
    assert "rate limiting" in str(err) and "2 retries" in str(err) and "try again" in str(err)


async def test_server_errors_that_persist_say_to_try_later() -> None:
    with FakeOpenAI([error(503, "down")] * 2) as srv:
        err, _ = await fails(model(srv, max_retries=1))
    assert err.kind == "server" and err.status == 503 and "try again later" in str(err)


async def test_401_is_not_retried_and_names_the_key_variable() -> None:
    with FakeOpenAI([error(401, "Incorrect API key provided.")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "auth" and err.status == 401 and len(srv.requests) == 1
    assert "rejected the API key" in str(err) and "OPENAI_API_KEY" in str(err)


async def test_403_is_an_auth_error() -> None:
    with FakeOpenAI([error(403, "Not allowed.")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "auth" and "fake-model" in str(err) and len(srv.requests) == 1


async def test_unknown_model_names_the_model_and_the_url() -> None:
    with FakeOpenAI([error(404, "The model `fake-model` does not exist.",
                           code="model_not_found")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "not_found" and len(srv.requests) == 1
    assert "'fake-model'" in str(err) and srv.base_url in str(err) and "check" in str(err)


async def test_context_length_error_has_its_own_kind() -> None:
    msg = ("This model's maximum context length is 8192 tokens. However, your messages "
           "resulted in 9000 tokens.")
    with FakeOpenAI([error(400, msg, code="context_length_exceeded")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "context_length" and len(srv.requests) == 1 and "history" in str(err)


async def test_other_400_is_a_bad_request_with_the_servers_reason() -> None:
    with FakeOpenAI([error(400, "tools are not supported by this model")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "bad_request" and "tools are not supported" in str(err)


async def test_connection_refused_says_the_server_is_not_reachable() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    m = OpenAIChatModel("fake-model", base_url=url, api_key="k", max_retries=1,
                        retry_base_delay=0.001)
    err, _ = await fails(m)
    assert err.kind == "network" and url in str(err) and "is the server running" in str(err)


async def test_stream_cut_mid_tool_call_is_a_stream_error_and_not_replayed() -> None:
    reply = tool_reply(("c1", "write", {"path": "a", "text": "x" * 50}), pieces=6)
    with FakeOpenAI([SSE(reply.events, cut_after=4), text_reply("never")]) as srv:
        err, seen = await fails(model(srv))
    assert err.kind == "stream" and "dropped" in str(err) and "try again" in str(err)
    assert any(isinstance(i, ToolCallDelta) for i in seen)
    assert len(srv.requests) == 1


async def test_stream_closed_cleanly_without_a_finish_is_a_stream_error() -> None:
    reply = tool_reply(("c1", "write", {"path": "a"}), pieces=4)
    with FakeOpenAI([SSE(reply.events[:3], done=False)]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "stream" and "tool call" in str(err)


async def test_stream_cut_before_any_output_is_retried() -> None:
    with FakeOpenAI([SSE(text_reply("x").events, cut_after=1), text_reply("second")]) as srv:
        _, final = await collect(model(srv))
    assert final.text == "second" and len(srv.requests) == 2


async def test_unreadable_stream_data_is_a_stream_error() -> None:
    with FakeOpenAI([SSE([chunk({"content": "Hi"}), "data: {not json\n\n"])]) as srv:
        err, seen = await fails(model(srv))
    assert err.kind == "stream" and "could not read" in str(err) and len(seen) == 1


async def test_error_inside_the_stream_after_output_is_raised_not_replayed() -> None:
    events = [chunk({"content": "Hal"}), {"error": {"message": "upstream failed",
                                                    "type": "server_error"}}]
    with FakeOpenAI([SSE(events), text_reply("never")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "server" and "upstream failed" in str(err) and len(srv.requests) == 1


async def test_a_silent_server_times_out_with_a_clear_message() -> None:
    with FakeOpenAI([SSE(text_reply("late").events, delay=2)]) as srv:
        err, _ = await fails(model(srv, timeout=0.2, max_retries=0))
    assert err.kind == "network" and "timeout" in str(err)


async def test_no_key_for_openai_itself_says_which_variable_to_set() -> None:
    err, _ = await fails(OpenAIChatModel("gpt-4o"))
    assert err.kind == "auth" and "OPENAI_API_KEY" in str(err)


async def test_key_and_url_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI([text_reply("ok")]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "env-key")
        await collect(OpenAIChatModel("fake-model"))
    assert srv.requests[0].headers["authorization"] == "Bearer env-key"


async def test_a_providers_own_key_variable_is_read_and_openais_is_not_leaked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "openai-secret")
    monkeypatch.setenv("OTHER_API_KEY", "other-key")
    with FakeOpenAI([text_reply("ok"), error(401, "bad key")]) as srv:
        m = OpenAIChatModel("fake-model", base_url=srv.base_url, provider="other",
                            api_key_env="OTHER_API_KEY")
        await collect(m)
        err, _ = await fails(m)
    assert srv.requests[0].headers["authorization"] == "Bearer other-key"
    assert "OTHER_API_KEY" in str(err) and str(err).startswith("Other rejected")


async def test_keyless_local_server_gets_a_placeholder_and_a_clear_401() -> None:
    with FakeOpenAI([text_reply("ok"), error(401, "key required")]) as srv:
        m = OpenAIChatModel("fake-model", base_url=srv.base_url, provider="local")
        _, final = await collect(m)
        err, _ = await fails(m)
    assert final.text == "ok" and srv.requests[0].headers["authorization"].startswith("Bearer ")
    assert err.kind == "auth" and "needs an API key" in str(err)
    assert m.name == "local:fake-model"


# -- the assembler on its own ------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(args=st.lists(st.text(max_size=30), min_size=1, max_size=3),
       cuts=st.lists(st.integers(min_value=1, max_value=8), min_size=3, max_size=3),
       with_ids=st.booleans())
def test_any_split_of_the_arguments_assembles_to_the_same_calls(
        args: list[str], cuts: list[int], with_ids: bool) -> None:
    asm = ChunkAssembler("m")
    for i, (raw, size) in enumerate(zip(args, cuts, strict=False)):
        pieces = [raw[n:n + size] for n in range(0, len(raw), size)] or [""]
        for k, piece in enumerate(pieces):
            call: dict[str, Any] = {"index": i, "function": {"arguments": piece}}
            if k == 0:
                call["function"]["name"] = f"tool{i}"
                if with_ids:
                    call["id"] = f"id{i}"
            asm.feed(calls_chunk(call))
    asm.feed(chunk(finish_reason="tool_calls"))
    final = asm.finish()
    assert [(c.name, c.arguments) for c in final.tool_calls] == [
        (f"tool{i}", raw or "{}") for i, raw in enumerate(args)]
    assert len({c.id for c in final.tool_calls}) == len(args)
