"""The agent loop: a pinned approved session, parallel reads, bad input, caps, transcripts."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_ext.agent import Agent, ApprovalRequest, ContextLimits, Decision, PlainTextRenderer
from agent_ext.agent import context as ctxmod
from agent_ext.agent import events as ev
from agent_ext.agent.transcript import dump_messages, unanswered_calls
from agent_ext.core import ErrorCode, FunctionTool, Kind, TextPart, ToolResult, tool
from agent_ext.models import ModelRequest, ModelResponse, ScriptedModel, ToolCall, Usage, call
from agent_ext.models.base import ModelError, StreamItem, ToolCallDelta

SNAPSHOTS = Path(__file__).parent / "snapshots"


@tool(kind=Kind.READ, read_only=True, defer=False)
def get_setting(name: str) -> str:
    """Read one setting."""
    return f"{name}=42"


def make_setter(store: dict[str, str]) -> FunctionTool:
    @tool(kind=Kind.EDIT, defer=False)
    def set_setting(name: str, value: str) -> str:
        """Change one setting."""
        store[name] = value
        return f"{name} is now {value}"

    return set_setting


def agent_with(model: Any, tmp_path: Path, **kw: Any) -> Agent:
    a = Agent(model, cwd=tmp_path, plugins=False, **kw)
    a.registry.register(get_setting)
    return a


def snapshot(name: str, value: Any) -> None:
    path = SNAPSHOTS / name
    text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
    if os.environ.get("AGENT_EXT_UPDATE_SNAPSHOTS"):
        path.write_text(text)
    assert json.loads(path.read_text()) == value, (
        f"{name} changed; review and rerun with AGENT_EXT_UPDATE_SNAPSHOTS=1 to accept")


async def test_scripted_session_with_approval_is_pinned(tmp_path: Path) -> None:
    store: dict[str, str] = {}
    requests: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Decision:
        requests.append(request)
        return Decision.approve()

    model = ScriptedModel([
        call("get_setting", {"name": "threads"}, id="c1", text="Let me look first."),
        call("set_setting", {"name": "threads", "value": "8"}, id="c2"),
        "Done: threads went from 42 to 8.",
    ])
    events: list[ev.Event] = []
    a = agent_with(model, tmp_path, approver=approver, on_event=events.append)
    a.registry.register(make_setter(store))
    run = await a.run("Set threads to 8.")
    assert run.text == "Done: threads went from 42 to 8."
    assert store == {"threads": "8"}
    assert len(requests) == 1 and requests[0].tool_name == "set_setting"
    kinds = [type(e).__name__ for e in events if not isinstance(e, ev.TextDelta | ev.UsageUpdated)]
    assert kinds == ["RunStarted", "ToolCallStarted", "ToolCallFinished", "ToolCallStarted",
                     "ApprovalRequested", "ApprovalResolved", "ToolCallFinished", "RunFinished"]
    snapshot("approved_session.json", dump_messages(a.messages))


async def test_eight_reads_overlap_writes_never(tmp_path: Path) -> None:
    active = {"now": 0, "peak": 0}
    everyone = asyncio.Event()

    async def track(wait_for_all: bool) -> str:
        active["now"] += 1
        active["peak"] = max(active["peak"], active["now"])
        if active["now"] == 8:
            everyone.set()
        if wait_for_all:
            await asyncio.wait_for(everyone.wait(), 5)  # only possible if all 8 run at once
        await asyncio.sleep(0.01)
        active["now"] -= 1
        return "ok"

    @tool(kind=Kind.READ, read_only=True, defer=False)
    async def slow_read(i: int) -> str:
        """A read that waits for the others."""
        return await track(True)

    @tool(kind=Kind.EDIT, defer=False)
    async def slow_write(i: int) -> str:
        """A write."""
        return await track(False)

    reads = [call("slow_read", {"i": i}, id=f"r{i}").tool_calls[0] for i in range(8)]
    writes = [call("slow_write", {"i": i}, id=f"w{i}").tool_calls[0] for i in range(3)]
    model = ScriptedModel([ModelResponse(tool_calls=(*reads, *writes)), "done"])
    a = agent_with(model, tmp_path, approver=lambda r: "approve")
    a.registry.register(slow_read)
    a.registry.register(slow_write)
    started = time.perf_counter()
    run = await a.run("go")
    assert [r.text for _, r in run.tool_calls] == ["ok"] * 11
    assert [c.id for c, _ in run.tool_calls] == [f"r{i}" for i in range(8)] + ["w0", "w1", "w2"]
    assert active["peak"] == 8
    assert time.perf_counter() - started < 5
    active["peak"] = 0
    model2 = ScriptedModel([ModelResponse(tool_calls=tuple(writes)), "done"])
    a.model = model2
    await a.run("again")
    assert active["peak"] == 1


async def test_bad_model_output_keeps_the_conversation_valid(tmp_path: Path) -> None:
    @tool(defer=False)
    def boom() -> str:
        """Raises."""
        raise ValueError("broken tool")

    model = ScriptedModel([
        ModelResponse(tool_calls=(ToolCall("a", "get_setting", '{"name": '),  # malformed JSON
                                  ToolCall("b", "no_such_tool", "{}"),
                                  ToolCall("c", "boom", "{}"),
                                  ToolCall("d", "get_setting", '{"name": "x"}'))),
        "recovered",
    ])
    a = agent_with(model, tmp_path, approver=lambda r: "approve")
    a.registry.register(boom)
    run = await a.run("try things")
    assert run.text == "recovered" and run.stop_reason == "end"
    codes = [r.error.code if r.error else None for _, r in run.tool_calls]
    assert codes == [ErrorCode.INVALID_TOOL_PARAMS, ErrorCode.UNKNOWN_TOOL,
                     ErrorCode.UNHANDLED_EXCEPTION, None]
    assert "not valid JSON" in run.tool_calls[0][1].text
    assert "tool_search" in run.tool_calls[1][1].text
    assert "broken tool" in run.tool_calls[2][1].text
    assert unanswered_calls(a.messages) == []


class CutStream:
    """A model whose stream dies in the middle of a tool call."""

    name = "cut"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        yield ToolCallDelta(0, "x1", "get_setting", '{"na')
        raise ModelError("the connection to the model closed mid-answer; send the prompt again",
                         kind="stream")


async def test_stream_cut_mid_call_ends_cleanly(tmp_path: Path) -> None:
    a = agent_with(CutStream(), tmp_path)
    run = await a.run("hello")
    assert run.stop_reason == "error"
    assert run.error is not None and "send the prompt again" in run.error
    assert [m.role for m in a.messages] == ["user"]
    assert unanswered_calls(a.messages) == []


async def test_model_exception_of_any_kind_is_reported(tmp_path: Path) -> None:
    a = agent_with(ScriptedModel([]), tmp_path)
    run = await a.run("hello")
    assert run.stop_reason == "error" and "no response left" in (run.error or "")


async def test_cancel_during_a_tool_answers_every_call(tmp_path: Path) -> None:
    started = asyncio.Event()

    @tool(kind=Kind.READ, read_only=True, defer=False)
    async def hang(i: int) -> str:
        """Never finishes."""
        started.set()
        await asyncio.sleep(60)
        return "late"

    calls = tuple(call("hang", {"i": i}, id=f"h{i}").tool_calls[0] for i in range(3))
    model = ScriptedModel([ModelResponse(tool_calls=calls), "never"])
    a = agent_with(model, tmp_path)
    a.registry.register(hang)
    task = asyncio.ensure_future(a.run("wait"))
    await asyncio.wait_for(started.wait(), 5)
    t0 = time.perf_counter()
    a.cancel()
    run = await asyncio.wait_for(task, 5)
    assert time.perf_counter() - t0 < 1
    assert run.stop_reason == "cancelled"
    assert [r.error.code for _, r in run.tool_calls if r.error] == [ErrorCode.EXECUTION_CANCELLED] * 3
    assert unanswered_calls(a.messages) == []
    assert model.remaining == 1  # the model was not asked again


async def test_task_cancellation_propagates_and_next_run_repairs(tmp_path: Path) -> None:
    started = asyncio.Event()

    @tool(kind=Kind.READ, read_only=True, defer=False)
    async def hang() -> str:
        """Never finishes."""
        started.set()
        await asyncio.sleep(60)
        return "late"

    model = ScriptedModel([call("hang", {}, id="h"), "next answer"])
    a = agent_with(model, tmp_path)
    a.registry.register(hang)
    task = asyncio.ensure_future(a.run("wait"))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert unanswered_calls(a.messages) == []
    run = await a.run("continue")
    assert run.text == "next answer"


async def test_cancel_from_the_approval_prompt(tmp_path: Path) -> None:
    store: dict[str, str] = {}
    model = ScriptedModel([
        ModelResponse(tool_calls=(ToolCall.of("s1", "set_setting", {"name": "a", "value": "1"}),
                                  ToolCall.of("s2", "set_setting", {"name": "b", "value": "2"}))),
        "never"])
    a = agent_with(model, tmp_path, approver=lambda r: Decision.cancel())
    a.registry.register(make_setter(store))
    run = await a.run("change")
    assert run.stop_reason == "cancelled" and store == {}
    assert [r.error.code for _, r in run.tool_calls if r.error] == [ErrorCode.EXECUTION_CANCELLED] * 2


async def test_rejection_with_feedback_reaches_the_model(tmp_path: Path) -> None:
    store: dict[str, str] = {}
    model = ScriptedModel([call("set_setting", {"name": "a", "value": "1"}), "ok"])
    a = agent_with(model, tmp_path, approver=lambda r: Decision.reject("use value 2 instead"))
    a.registry.register(make_setter(store))
    await a.run("change")
    sent = model.requests[1].messages[-1].tool_returns[0]
    assert sent.is_error and "use value 2 instead" in sent.content[0].text  # type: ignore[union-attr]
    assert store == {}


async def test_headless_default_denies_and_records(tmp_path: Path) -> None:
    store: dict[str, str] = {}
    model = ScriptedModel([call("set_setting", {"name": "a", "value": "1"}), "ok"])
    a = agent_with(model, tmp_path)
    a.registry.register(make_setter(store))
    run = await a.run("change")
    assert store == {}
    assert "no one can approve" in run.tool_calls[0][1].text


async def test_max_turns_and_token_caps(tmp_path: Path) -> None:
    loop_forever = ScriptedModel(fn=lambda req: call("get_setting", {"name": "x"},
                                                     id=f"c{len(req.messages)}"))
    run = await agent_with(loop_forever, tmp_path, max_turns=3).run("loop")
    assert run.stop_reason == "max_turns" and run.turns == 3
    assert unanswered_calls(run.messages) == []

    def costly(req: ModelRequest) -> ModelResponse:
        return ModelResponse(tool_calls=call("get_setting", {"name": "x"},
                                             id=f"c{len(req.messages)}").tool_calls,
                             usage=Usage(1000, 100))

    run = await agent_with(ScriptedModel(fn=costly), tmp_path, max_tokens=2500).run("loop")
    assert run.stop_reason == "token_cap" and run.turns == 3
    assert run.usage == Usage(3000, 300)
    run = await agent_with(ScriptedModel(fn=costly), tmp_path, max_cost=0.01,
                           price_per_mtok=(3.0, 15.0)).run("loop")
    assert run.stop_reason == "cost_cap" and run.turns == 3  # 3 x $0.0045 > $0.01


async def test_usage_is_estimated_when_the_provider_gives_none(tmp_path: Path) -> None:
    events: list[ev.Event] = []
    a = agent_with(ScriptedModel(["hello there"]), tmp_path, on_event=events.append)
    run = await a.run("hi")
    usage = [e for e in events if isinstance(e, ev.UsageUpdated)]
    assert usage and usage[0].estimated and run.usage.input_tokens > 100


async def test_transcript_save_and_restore_rebuilds_reveals(tmp_path: Path) -> None:
    model = ScriptedModel([
        call("tool_search", {"query": "select:mcp__srv__remote"}, id="t1"),
        call("mcp__srv__remote", {"x": "1"}, id="t2"),
        "done",
    ])
    remote = FunctionTool(lambda **kw: "remote ok", name="remote", description="A remote tool.",
                          parameters={"type": "object", "properties": {"x": {"type": "string"}}})
    a = agent_with(model, tmp_path, approver=lambda r: "approve")
    a.registry.register_external("srv", remote)
    await a.run("use remote")
    path = a.save(tmp_path / "t.json")
    b = agent_with(ScriptedModel([]), tmp_path)
    b.registry.register_external("srv", FunctionTool(
        lambda **kw: "x", name="remote", description="A remote tool.",
        parameters={"type": "object", "properties": {"x": {"type": "string"}}}))
    assert "mcp__srv__remote" not in b.registry.revealed
    b.load(path)
    assert b.messages == a.messages
    assert "mcp__srv__remote" in b.registry.revealed
    (tmp_path / "bad.json").write_text('{"messages": []}')
    with pytest.raises(ValueError, match="not an agent_ext transcript"):
        b.load(tmp_path / "bad.json")


async def test_compaction_summarises_old_turns_and_points_to_files(tmp_path: Path) -> None:
    @tool(kind=Kind.READ, read_only=True, defer=False)
    def dump_log() -> str:
        """A big output."""
        return "log line\n" * 2000

    def respond(req: ModelRequest) -> ModelResponse:
        if not req.tools:  # the summary request
            return ModelResponse(text="SUMMARY: the user asked twice about logs.")
        last = req.messages[-1]
        if last.role == "user" and not last.tool_returns:
            return call("dump_log", {}, id=f"d{len(req.messages)}")
        return ModelResponse(text="read the log")

    probe = agent_with(ScriptedModel([]), tmp_path)
    probe.registry.register(dump_log)
    fixed = ctxmod.estimate_request(probe.request())  # system prompt and declarations
    # Room for about one big log result (~4,500 tokens) on top of what every request carries.
    limits = ContextLimits(window_tokens=int((fixed + 6_000) / 0.8), compact_at=0.8,
                           keep_recent_prompts=1, pointer_chars=1_000)
    a = agent_with(ScriptedModel(fn=respond), tmp_path, limits=limits)
    a.registry.register(dump_log)
    await a.run("first")
    await a.run("second")
    await a.run("third")
    first = a.messages[0]
    assert first.role == "user" and "SUMMARY: the user asked twice" in first.parts[0].text  # type: ignore[union-attr]
    kept = [r for m in a.messages for r in m.tool_returns]
    assert all(len(r.content[0].text) < 4000 for r in kept)  # type: ignore[union-attr]
    assert any("<persisted-output>" in r.content[0].text for r in kept)  # type: ignore[union-attr]
    assert unanswered_calls(a.messages) == []


async def test_instructions_files_reach_the_first_user_turn(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("Always use tabs.")
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "CLAUDE.md").write_text("Tests live in tests/.")
    model = ScriptedModel(["ok", "again"])
    a = Agent(model, cwd=sub, plugins=False, system_prompt="Answer in French.")
    await a.run("hello")
    await a.run("more")
    first = model.requests[0]
    context = first.messages[0].parts[0].text  # type: ignore[union-attr]
    assert context.index("Always use tabs.") < context.index("Tests live in tests/.")
    assert str(sub) in context and "Today's date" in context
    assert first.messages[0].parts[1].text == "hello"  # type: ignore[union-attr]
    # The folder stays out of the system prompt; the caller's addition stays in it.
    assert "Answer in French." in first.system and str(sub) not in first.system
    # The context is sent once, at the start of the conversation, on every request.
    second = model.requests[1]
    assert second.messages[0] == first.messages[0]
    assert [len(m.parts) for m in second.messages if m.role == "user"] == [2, 1]
    # The conversation itself holds the user's words only.
    assert a.messages[0].parts == (TextPart("hello"),)


async def test_plain_text_renderer(tmp_path: Path) -> None:
    import io

    out = io.StringIO()
    a = agent_with(ScriptedModel([call("get_setting", {"name": "k"}, id="1"), "All good."]),
                   tmp_path, on_event=PlainTextRenderer(out))
    await a.run("check")
    text = out.getvalue()
    assert "→ get_setting(name='k')" in text and "get_setting: done" in text
    assert text.rstrip().endswith("tokens: ~" + text.rstrip().split("tokens: ~")[-1])
    assert "All good." in text


async def test_plain_text_renderer_says_why_a_call_failed(tmp_path: Path) -> None:
    """A headless cell's log names the reason, not only the code, of a failed call."""
    import io

    out = io.StringIO()
    a = agent_with(ScriptedModel([call("get_setting", {"nam": "k"}, id="1"), "Sorry."]),
                   tmp_path, on_event=PlainTextRenderer(out))
    await a.run("check")
    line = next(x for x in out.getvalue().splitlines() if "get_setting: error" in x)
    assert "(invalid_tool_params)" in line and "`nam` is not a parameter" in line
    assert len(line) < 260


async def test_call_tool_uses_the_full_pipeline(tmp_path: Path) -> None:
    store: dict[str, str] = {}
    a = agent_with(ScriptedModel([]), tmp_path)
    a.registry.register(make_setter(store))
    denied = await a.call_tool("set_setting", {"name": "a", "value": "1"})
    assert denied.error is not None and denied.error.code == ErrorCode.EXECUTION_DENIED
    a.approver = a._pipeline.approver = lambda r: asyncio.sleep(0, "approve")  # type: ignore[assignment]
    ok = await a.call_tool("set_setting", '{"name": "a", "value": "1"}')
    assert ok.text == "a is now 1" and store == {"a": "1"}
    big = await a.call_tool("get_setting", {"name": "x" * 300_000})
    assert isinstance(big, ToolResult) and len(big.text) < 300_000
    assert isinstance(big.parts[0], TextPart)


async def test_without_configuration_the_demo_replay_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_EXT_MODEL", "demo")
    events: list[ev.Event] = []
    a = Agent(cwd=tmp_path, plugins=False, on_event=events.append)
    assert a.model.name == "demo (replay)"
    run = await a.run("hello, what can you do?")
    texts = [m.parts[0].text for m in run.messages if m.role == "assistant" and m.parts]  # type: ignore[union-attr]
    assert texts and all(t.startswith("[demo replay] ") for t in texts)
    assert run.stop_reason == "end"
