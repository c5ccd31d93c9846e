"""AnthropicModel against a fake Messages API server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest

from agent_ext.core import ImagePart, TextPart, ToolDeclaration
from agent_ext.models.anthropic_messages import AnthropicModel
from agent_ext.models.base import ModelError, ReasoningDelta, StreamItem, TextDelta, ToolCallDelta
from agent_ext.models.types import Message, ModelRequest, ModelResponse, ToolCall, ToolReturn
from tests.fakes import SSE, FakeAnthropic, free_port
from tests.fakes.anthropic_server import (
    block_start,
    block_stop,
    error,
    error_event,
    message_delta,
    message_start,
    message_stop,
    text_events,
    text_reply,
    tool_events,
    tool_reply,
)

pytestmark = pytest.mark.timeout(20)

PNG = b"\x89PNG\r\n\x1a\nfake"
HELLO = ModelRequest(messages=(Message("user", (TextPart("hello"),)),), tools=(), system="Be brief.")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE",
                "ANTHROPIC_CUSTOM_HEADERS"):
        monkeypatch.delenv(var, raising=False)


def model(srv: FakeAnthropic, **kw: Any) -> AnthropicModel:
    kw.setdefault("retry_base_delay", 0.001)
    return AnthropicModel("claude-fake", base_url=srv.base_url, api_key="test-key", **kw)


async def collect(m: AnthropicModel, request: ModelRequest = HELLO,
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


async def fails(m: AnthropicModel, request: ModelRequest = HELLO) -> tuple[ModelError,
                                                                            list[StreamItem]]:
    seen: list[StreamItem] = []
    with pytest.raises(ModelError) as info:
        await collect(m, request, seen)
    return info.value, seen


def auth_of(headers: dict[str, str]) -> str:
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


# -- streaming ---------------------------------------------------------------------------------


async def test_plain_text_streams_deltas_then_one_response_with_usage() -> None:
    events = [message_start(20, cache_read=100, cache_creation=5),
              *text_events(0, "Hello there, friend.", pieces=4),
              message_delta("end_turn", 9), message_stop()]
    with FakeAnthropic([SSE(events)]) as srv:
        deltas, final = await collect(model(srv))
    assert [type(d) for d in deltas] == [TextDelta] * 4
    assert final.text == "Hello there, friend." and final.tool_calls == ()
    assert (final.usage.input_tokens, final.usage.output_tokens) == (125, 9)
    assert final.provider_data == {"stop_reason": "end_turn"}
    sent = srv.requests[0]
    assert sent.path == "/v1/messages" and auth_of(sent.headers) == "test-key"
    assert "anthropic-version" in sent.headers
    assert sent.body == {"model": "claude-fake", "max_tokens": 8192, "stream": True,
                         "system": "Be brief.",
                         "messages": [{"role": "user",
                                       "content": [{"type": "text", "text": "hello"}]}]}


async def test_several_tool_calls_with_arguments_split_across_deltas() -> None:
    reply = tool_reply(("toolu_1", "read_file", {"path": "src/main.py", "limit": 40}),
                       ("toolu_2", "grep", {"pattern": "TODO"}), text="Looking.", pieces=5)
    with FakeAnthropic([reply]) as srv:
        deltas, final = await collect(model(srv))
    assert final.text == "Looking."
    assert final.tool_calls == (
        ToolCall("toolu_1", "read_file", '{"path": "src/main.py", "limit": 40}'),
        ToolCall("toolu_2", "grep", '{"pattern": "TODO"}'))
    call_deltas = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert {d.index for d in call_deltas} == {0, 1}
    assert all(d.id == "toolu_2" and d.name == "grep" for d in call_deltas if d.index == 1)
    assert final.provider_data["stop_reason"] == "tool_use"


async def test_tool_input_given_whole_in_the_block_start() -> None:
    events = [message_start(), block_start(0, {"type": "tool_use", "id": "t1", "name": "ls",
                                               "input": {"path": "."}}),
              block_stop(0), message_delta("tool_use"), message_stop()]
    with FakeAnthropic([SSE(events)]) as srv:
        _, final = await collect(model(srv))
    assert final.tool_calls == (ToolCall("t1", "ls", '{"path": "."}'),)


async def test_thinking_blocks_are_returned_and_resent_first_and_untouched() -> None:
    reply = tool_reply(("toolu_1", "read", {"path": "a.txt"}), text="Reading.",
                       thinking="I should read a.txt first.", signature="EqQBCkYIARgCIkD==",
                       redacted="ENCRYPTED-BLOB")
    with FakeAnthropic([reply, text_reply("done")]) as srv:
        m = model(srv, thinking_budget=2048)
        deltas, final = await collect(m)
        assert "".join(d.text for d in deltas if isinstance(d, ReasoningDelta)) == \
            "I should read a.txt first."
        blocks = [{"type": "thinking", "thinking": "I should read a.txt first.",
                   "signature": "EqQBCkYIARgCIkD=="},
                  {"type": "redacted_thinking", "data": "ENCRYPTED-BLOB"}]
        assert final.provider_data["thinking_blocks"] == blocks
        history = (*HELLO.messages,
                   Message("assistant", (TextPart(final.text),), final.tool_calls,
                           provider_data=final.provider_data),
                   Message("tool", tool_returns=(ToolReturn("toolu_1", "read",
                                                            (TextPart("contents"),)),)),
                   Message("user", (TextPart("thanks"),)))
        await collect(m, ModelRequest(history, ()))
    first, second = srv.bodies
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert second["messages"][1] == {"role": "assistant", "content": [
        *blocks, {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}}]}
    assert second["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1",
         "content": [{"type": "text", "text": "contents"}]},
        {"type": "text", "text": "thanks"}]}
    assert len(second["messages"]) == 3


async def test_images_in_user_messages_and_tool_results_are_base64_blocks() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": ImagePart(PNG).base64}}
    history = (Message("user", (TextPart("Look:"), ImagePart(PNG))),
               Message("assistant", tool_calls=(ToolCall.of("t1", "shot", {}),
                                                ToolCall.of("t2", "boom", {}))),
               Message("tool", tool_returns=(
                   ToolReturn("t1", "shot", (TextPart("a chart"), ImagePart(PNG))),
                   ToolReturn("t2", "boom", (TextPart("it failed"),), is_error=True))))
    with FakeAnthropic([text_reply("ok")]) as srv:
        await collect(model(srv), ModelRequest(history, ()))
    messages = srv.bodies[0]["messages"]
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": "Look:"}, image]}
    assert messages[2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1",
         "content": [{"type": "text", "text": "a chart"}, image]},
        {"type": "tool_result", "tool_use_id": "t2",
         "content": [{"type": "text", "text": "it failed"}], "is_error": True}]}


async def test_system_messages_fold_into_the_system_prompt_and_same_roles_merge() -> None:
    history = (Message("system", (TextPart("Extra rule."),)),
               Message("user", (TextPart("one"),)), Message("user", (TextPart("two"),)))
    with FakeAnthropic([text_reply("ok")]) as srv:
        await collect(model(srv), ModelRequest(history, (), system="Base."))
    body = srv.bodies[0]
    assert body["system"] == "Base.\n\nExtra rule."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "one"},
                                                             {"type": "text", "text": "two"}]}]


async def test_tool_declarations_are_sent_exactly_as_given() -> None:
    schema = {"type": "object", "properties": {
        "path": {"type": "string", "description": "Where."},
        "mode": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}], "default": None}},
        "required": ["path"], "additionalProperties": False}
    decls = (ToolDeclaration("read_file", "Read a file.", schema),)
    with FakeAnthropic([text_reply("ok")]) as srv:
        await collect(model(srv), ModelRequest(HELLO.messages, decls))
    assert srv.bodies[0]["tools"] == [{"name": "read_file", "description": "Read a file.",
                                       "input_schema": schema}]


def test_thinking_budget_must_be_below_max_tokens() -> None:
    with pytest.raises(ModelError, match="max_tokens") as info:
        AnthropicModel("claude-fake", api_key="k", max_tokens=1000, thinking_budget=1000)
    assert info.value.kind == "bad_request"


def test_missing_sdk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ModelError, match=r"pip install 'agent-ext\[anthropic\]'") as info:
        AnthropicModel("claude-fake")
    assert info.value.kind == "bad_request"


# -- retries and errors ------------------------------------------------------------------------


async def test_429_is_retried_after_the_retry_after_the_server_asked_for() -> None:
    script = [error(429, "rate_limit_error", "Slow down.", headers={"retry-after": "0.3"}),
              text_reply("finally")]
    with FakeAnthropic(script) as srv:
        started = time.monotonic()
        _, final = await collect(model(srv))
        waited = time.monotonic() - started
    assert final.text == "finally" and len(srv.requests) == 2 and waited >= 0.28


async def test_overloaded_and_500_are_retried() -> None:
    script = [error(529, "overloaded_error", "Overloaded"), error(500, "api_error", "oops"),
              text_reply("ok")]
    with FakeAnthropic(script) as srv:
        _, final = await collect(model(srv))
    assert final.text == "ok" and len(srv.requests) == 3


async def test_overload_that_persists_says_to_try_later() -> None:
    with FakeAnthropic([error(529, "overloaded_error", "Overloaded")] * 2) as srv:
        err, _ = await fails(model(srv, max_retries=1))
    assert err.kind == "server" and "overloaded" in str(err) and "1 retry" in str(err)


async def test_overloaded_event_before_any_output_is_retried() -> None:
    with FakeAnthropic([SSE([message_start(), error_event("overloaded_error", "Overloaded")]),
                        text_reply("ok")]) as srv:
        _, final = await collect(model(srv))
    assert final.text == "ok" and len(srv.requests) == 2


async def test_error_event_after_output_is_raised_not_replayed() -> None:
    events = [message_start(), *text_events(0, "Half an ans"),
              error_event("overloaded_error", "Overloaded")]
    with FakeAnthropic([SSE(events), text_reply("never")]) as srv:
        err, seen = await fails(model(srv))
    assert err.kind == "server" and len(srv.requests) == 1
    assert any(isinstance(i, TextDelta) for i in seen)


async def test_401_is_not_retried_and_names_the_key_variable() -> None:
    with FakeAnthropic([error(401, "authentication_error", "invalid x-api-key")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "auth" and len(srv.requests) == 1 and "ANTHROPIC_API_KEY" in str(err)


async def test_unknown_model_names_the_model_and_the_url() -> None:
    with FakeAnthropic([error(404, "not_found_error", "model: claude-fake")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "not_found" and "'claude-fake'" in str(err) and srv.base_url in str(err)


async def test_prompt_too_long_is_a_context_length_error() -> None:
    with FakeAnthropic([error(400, "invalid_request_error",
                              "prompt is too long: 210000 tokens > 200000 maximum")]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "context_length" and len(srv.requests) == 1


async def test_connection_refused_says_the_server_is_not_reachable() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    m = AnthropicModel("claude-fake", base_url=url, api_key="k", max_retries=1,
                       retry_base_delay=0.001)
    err, _ = await fails(m)
    assert err.kind == "network" and url in str(err) and "is the server running" in str(err)


async def test_stream_cut_mid_tool_call_is_a_stream_error_and_not_replayed() -> None:
    events = [message_start(), *tool_events(0, "t1", "write", {"path": "a", "text": "x" * 40},
                                            pieces=6)]
    with FakeAnthropic([SSE(events, cut_after=5), text_reply("never")]) as srv:
        err, seen = await fails(model(srv))
    assert err.kind == "stream" and "try again" in str(err) and len(srv.requests) == 1
    assert any(isinstance(i, ToolCallDelta) for i in seen)


async def test_stream_ended_without_message_stop_is_a_stream_error() -> None:
    events = [message_start(), *tool_events(0, "t1", "write", {"path": "a"})]
    with FakeAnthropic([SSE(events)]) as srv:
        err, _ = await fails(model(srv))
    assert err.kind == "stream" and "tool call" in str(err)


async def test_no_key_for_anthropic_itself_says_which_variable_to_set() -> None:
    err, _ = await fails(AnthropicModel("claude-fake"))
    assert err.kind == "auth" and "ANTHROPIC_API_KEY" in str(err)


async def test_key_and_url_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic([text_reply("ok")]) as srv:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key")
        m = AnthropicModel("claude-fake")
        await collect(m)
    assert auth_of(srv.requests[0].headers) == "env-key" and m.name == "anthropic:claude-fake"
