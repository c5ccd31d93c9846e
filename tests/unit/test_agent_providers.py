"""The agent loop over the real adapters and loopback fake servers: retries, cuts, cancel."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from agent_ext.agent import Agent
from agent_ext.agent.transcript import unanswered_calls
from agent_ext.core import Kind, tool
from agent_ext.models.anthropic_messages import AnthropicModel
from agent_ext.models.openai_chat import OpenAIChatModel
from tests.fakes import SSE, FakeAnthropic, FakeOpenAI
from tests.fakes import anthropic_server as anth
from tests.fakes import openai_server as oai


@tool(kind=Kind.READ, read_only=True, defer=False)
def lookup(key: str) -> str:
    """Look a key up."""
    return f"{key}: found"


def openai_agent(srv: FakeOpenAI, tmp_path: Path) -> Agent:
    model = OpenAIChatModel("fake-model", base_url=srv.base_url, api_key="test-key",
                            provider="vllm", retry_base_delay=0.01)
    agent = Agent(model, cwd=tmp_path, plugins=False)
    agent.registry.register(lookup)
    return agent


async def test_openai_429_then_two_streamed_calls_then_answer(tmp_path: Path) -> None:
    script = [
        oai.error(429, "slow down", type="rate_limit_error", headers={"retry-after": "0"}),
        oai.tool_reply(("c1", "lookup", {"key": "alpha"}), ("c2", "lookup", {"key": "beta"}),
                       pieces=4),
        oai.text_reply("Both keys were found."),
    ]
    with FakeOpenAI(script) as srv:
        agent = openai_agent(srv, tmp_path)
        run = await agent.run("look up alpha and beta")
        assert run.text == "Both keys were found." and run.stop_reason == "end"
        assert [r.text for _, r in run.tool_calls] == ["alpha: found", "beta: found"]
        assert len(srv.requests) == 3
        sent = srv.requests[2].body["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool"]
        sent_tools = [t["function"]["name"] for t in srv.requests[1].body["tools"]]
        assert sent_tools == sorted(sent_tools) and {"lookup", "tool_search"} <= set(sent_tools)
        assert run.usage.input_tokens == 20


async def test_openai_stream_cut_mid_call_leaves_a_valid_conversation(tmp_path: Path) -> None:
    cut = oai.tool_reply(("c1", "lookup", {"key": "alpha"}), pieces=6)
    with FakeOpenAI([SSE(cut.events, cut_after=4, done=False)]) as srv:
        agent = openai_agent(srv, tmp_path)
        run = await agent.run("look up alpha")
    assert run.stop_reason == "error" and run.error
    assert [m.role for m in agent.messages] == ["user"]
    assert unanswered_calls(agent.messages) == []


async def test_cancel_during_a_slow_stream_is_prompt(tmp_path: Path) -> None:
    slow = oai.text_reply("a " * 50, pieces=50)
    with FakeOpenAI([SSE(slow.events, interval=0.2)]) as srv:
        agent = openai_agent(srv, tmp_path)
        task = asyncio.ensure_future(agent.run("talk slowly"))
        await asyncio.sleep(0.6)
        t0 = time.perf_counter()
        agent.cancel()
        run = await asyncio.wait_for(task, 5)
        assert time.perf_counter() - t0 < 1
    assert run.stop_reason == "cancelled"
    assert [m.role for m in agent.messages] == ["user"]


async def test_anthropic_multi_tool_turn_through_the_agent(tmp_path: Path) -> None:
    script = [
        anth.tool_reply(("t1", "lookup", {"key": "x"}), ("t2", "lookup", {"key": "y"})),
        anth.text_reply("done"),
    ]
    with FakeAnthropic(script) as srv:
        model = AnthropicModel("claude-fake", base_url=srv.base_url, api_key="k",
                               retry_base_delay=0.01)
        agent = Agent(model, cwd=tmp_path, plugins=False)
        agent.registry.register(lookup)
        run = await agent.run("look up x and y")
        assert run.text == "done"
        last = srv.requests[1].body["messages"][-1]
        assert last["role"] == "user"
        assert [b["tool_use_id"] for b in last["content"]] == ["t1", "t2"]
