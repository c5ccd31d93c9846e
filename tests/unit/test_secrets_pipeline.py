"""Secrets never reach the model: a key printed by a real shell command or read from a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ext import Agent
from agent_ext.models import ScriptedModel, call

KEY = "sk-test-5f3a9c1e7b2d4f6a8c0e"


async def test_a_key_printed_by_the_shell_or_read_from_a_file_is_masked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", KEY)
    (tmp_path / "config.txt").write_text(f"endpoint=https://example.invalid\ntoken={KEY}\n")
    model = ScriptedModel([
        call("shell", {"command": "echo the key is $MY_SERVICE_API_KEY"}, id="s"),
        call("read_file", {"file_path": "config.txt"}, id="r"),
        call("grep", {"pattern": "token", "path": ".", "output_mode": "content"}, id="g"),
        "done",
    ])
    agent = Agent(model, cwd=tmp_path, plugins=False, mcp=False,
                  approver=lambda request: "approve")
    try:
        run = await agent.run("show me the key")
    finally:
        await agent.aclose()
    texts = {c.id: r.text for c, r in run.tool_calls}
    assert "the key is [secret:MY_SERVICE_API_KEY]" in texts["s"]
    assert "token=[secret:MY_SERVICE_API_KEY]" in texts["r"]
    assert "[secret:MY_SERVICE_API_KEY]" in texts["g"]
    sent = "".join(repr(m) for req in model.requests for m in req.messages)
    assert KEY not in sent


async def test_a_large_result_is_masked_off_the_loop_all_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from agent_ext import FunctionTool

    monkeypatch.setenv("MY_SERVICE_API_KEY", KEY)
    agent = Agent(ScriptedModel([]), cwd=tmp_path, plugins=False, mcp=False,
                  mode="bypassPermissions")
    threads: list[str] = []
    real = agent._pipeline.secrets.mask_result

    def recording(result):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return real(result)

    monkeypatch.setattr(agent._pipeline.secrets, "mask_result", recording)
    agent.registry.register(FunctionTool(lambda n: ("x" * 90 + "\n") * n + f"key={KEY}\n",
                                         name="dump", description="prints lines"))
    try:
        small = await agent.call_tool("dump", {"n": 1})
        large = await agent.call_tool("dump", {"n": 2_000})
    finally:
        await agent.aclose()
    assert f"key={KEY}" not in small.text and "[secret:MY_SERVICE_API_KEY]" in small.text
    assert KEY not in large.text
    assert threads[0] == threading.main_thread().name != threads[1]
