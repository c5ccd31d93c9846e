"""Against a real llama-server: the window is asked, and the first task's tool calls run.

Mechanics only (the model's wisdom is not tested): the window the server reports is the one the
agent uses, tool calls (structured or written as text) are parsed and run, and the run ends
with a clear reason within a bound.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agent_ext.agent import Agent
from agent_ext.agent import events as ev
from agent_ext.models import window as win
from agent_ext.models.openai_chat import OpenAIChatModel

from .conftest import LlamaServer

pytestmark = [pytest.mark.real_model, pytest.mark.slow]


def test_the_server_reports_its_window(llama_server: LlamaServer) -> None:
    win.clear_cache()
    model = OpenAIChatModel("qwen", base_url=llama_server.base_url, provider="llamacpp")
    assert model.probe_context_window() == llama_server.n_ctx
    # An OpenAI-compatible base URL on loopback is asked the same way.
    win.clear_cache()
    plain = OpenAIChatModel("qwen", base_url=llama_server.base_url, provider="openai")
    assert plain.local and plain.probe_context_window() == llama_server.n_ctx


@pytest.mark.timeout(900)
async def test_a_file_fix_runs_tools(llama_server: LlamaServer, tmp_path: Path) -> None:
    win.clear_cache()
    app = tmp_path / "app.py"
    app.write_text("def mean(values):\n    return sum(values) / len(values) + 1\n")
    events: list[ev.Event] = []
    model = OpenAIChatModel("qwen", base_url=llama_server.base_url, provider="llamacpp",
                            max_output_tokens=256, timeout=600)
    agent = Agent(model, cwd=tmp_path, plugins=False, mcp=False, max_turns=3,
                  mode="acceptEdits", on_event=events.append)
    started = time.monotonic()
    try:
        run = await agent.run("read the file app.py and fix the bug")
    finally:
        await agent.aclose()
    seconds = time.monotonic() - started
    print(f"\nreal model: {run.turns} turns, {seconds:.0f} s, {run.usage.input_tokens} in / "
          f"{run.usage.output_tokens} out tokens, stop={run.stop_reason}, "
          f"calls={[c.name for c, _ in run.tool_calls]}")
    assert agent.limits.window_tokens == llama_server.n_ctx
    assert run.tool_calls, f"no tool ran; the answer was {run.text[:300]!r}"
    assert run.stop_reason in ("end", "max_turns", "length", "repeated_call")
    text = app.read_text()
    assert "def mean(values):" in text  # the file was not damaged
