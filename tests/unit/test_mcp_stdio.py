"""McpManager against the real stdio test server: tools, calls, changes, crashes, shutdown."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_ext.core import ExecControl, ImagePart, Kind, Permission, Registry, Tier, ToolResult
from agent_ext.mcp import McpManager, McpNotice, ServerConfig, ServerConnection
from agent_ext.mcp.tools import McpTool
from tests.mcp_servers.harness import free_port, kill_leftovers, stdio_config, until, wait_gone

pytestmark = pytest.mark.timeout(90)


async def call(registry: Registry, name: str, args: dict[str, object] | None = None,
               control: ExecControl | None = None) -> ToolResult:
    built = registry.get(name).build(args or {})
    assert not isinstance(built, ToolResult), built
    return await built.execute(control or ExecControl())


@pytest.fixture
async def demo() -> AsyncIterator[tuple[McpManager, Registry, list[McpNotice]]]:
    registry = Registry()
    notices: list[McpNotice] = []
    manager = McpManager([stdio_config("demo", "--spawn-child")], registry,
                         on_event=notices.append)
    await manager.start()
    try:
        yield manager, registry, notices
    finally:
        await manager.aclose()


def pids_of(manager: McpManager) -> list[int]:
    return [c.process.pid for c in manager.connections.values()
            if c.process is not None and c.process.pid is not None]


async def test_tools_are_registered_deferred_with_their_traits(demo: tuple) -> None:
    manager, registry, notices = demo
    assert manager.connections["demo"].state == "connected"
    assert registry.declarations() == []
    summary = registry.deferred_summary()
    assert "mcp__demo__{" in summary and "echo" in summary and "lookup_weather" in summary
    echo = registry.get("mcp__demo__echo")
    weather = registry.get("mcp__demo__lookup_weather")
    assert isinstance(echo, McpTool) and isinstance(weather, McpTool)
    assert echo.server == "demo" and echo.defer and echo.max_output_chars == 500_000
    assert "demo" in echo.search_hint
    assert "Red square" in registry.get("mcp__demo__red_square").search_hint
    assert (echo.kind, echo.read_only, echo.concurrency_safe) == (Kind.OTHER, False, False)
    assert (weather.kind, weather.read_only, weather.concurrency_safe) == (Kind.READ, True, True)
    assert echo.parameters_schema()["properties"]["text"]["type"] == "string"
    inv_echo, inv_weather = echo.build({"text": "x"}), weather.build({"city": "Oslo"})
    assert not isinstance(inv_echo, ToolResult) and not isinstance(inv_weather, ToolResult)
    assert inv_echo.default_permission() is Permission.ASK
    assert inv_weather.default_permission() is Permission.ASK
    assert (inv_echo.tier(), inv_weather.tier()) == (Tier.EXEC, Tier.READ)
    details = await inv_echo.confirmation_details()
    assert details.kind == "mcp" and details.extra["server"] == "demo"
    bad = echo.build({"text": 5, "other": 1})
    assert isinstance(bad, ToolResult) and bad.error and bad.error.code == "invalid_tool_params"
    assert [n.text for n in notices if n.level != "info"] == []


async def test_text_image_and_progress(demo: tuple) -> None:
    _, registry, _ = demo
    result = await call(registry, "mcp__demo__echo", {"text": "hi"})
    assert result.text == "echo: hi" and not result.is_error
    image = await call(registry, "mcp__demo__red_square")
    parts = image.parts
    assert parts[0].text == "a red square"  # type: ignore[union-attr]
    assert isinstance(parts[1], ImagePart) and parts[1].data.startswith(b"\x89PNG")
    lines: list[str] = []
    counted = await call(registry, "mcp__demo__slow_count", {"steps": 4},
                         ExecControl(on_output=lines.append))
    assert counted.text == "counted to 4"
    assert lines and lines[-1] == "step 4 (4/4)\n"


async def test_errors_structured_and_mixed_content(demo: tuple) -> None:
    _, registry, _ = demo
    failed = await call(registry, "mcp__demo__fail")
    assert failed.error is not None and failed.error.code == "mcp_tool_error"
    assert "out of stock" in failed.text
    structured = await call(registry, "mcp__demo__structured")
    assert json.loads(structured.text) == {"count": 3, "ok": True}
    mixed = (await call(registry, "mcp__demo__mixed")).text
    assert "mixed results" in mixed
    assert "[audio: audio/wav" in mixed
    assert "[resource res://notes]\nembedded notes" in mixed
    assert "application/octet-stream, 256 bytes of binary data; not shown" in mixed
    assert "mcp://demo/res://greeting" in mixed


async def test_list_changed_updates_registry_and_keeps_reveal_marks(demo: tuple) -> None:
    _, registry, notices = demo
    registry.reveal(["mcp__demo__echo", "mcp__demo__gone_soon"])
    before = registry.version
    assert (await call(registry, "mcp__demo__change_tools")).text == "changed"
    await until(lambda: "mcp__demo__added_later" in registry)
    assert "mcp__demo__added_later" in registry
    assert "mcp__demo__gone_soon" not in registry
    assert "mcp__demo__echo" in registry.revealed
    assert "mcp__demo__gone_soon" not in registry.revealed
    assert registry.version > before
    assert (await call(registry, "mcp__demo__added_later", {"x": 3})).text == "added 3"
    assert any("changed its tools" in n.text for n in notices)


async def test_crash_mid_call_gives_an_error_then_the_next_call_reconnects(demo: tuple) -> None:
    manager, registry, notices = demo
    first_server = pids_of(manager)
    first_child = int((await call(registry, "mcp__demo__child_pid")).text)
    assert first_child > 0
    try:
        crashed = await call(registry, "mcp__demo__crash")
        assert crashed.error is not None and crashed.error.code == "mcp_server_disconnected"
        assert await wait_gone([*first_server, first_child]) == []
        again = await call(registry, "mcp__demo__echo", {"text": "back"})
        assert again.text == "echo: back"
        assert manager.connections["demo"].state == "connected"
        stopped = [n for n in notices if "stopped" in n.text]
        assert len(stopped) == 1 and "exited with code 3" in stopped[0].text
        assert "crashing on purpose" in stopped[0].text
        second = pids_of(manager)
        second_child = int((await call(registry, "mcp__demo__child_pid")).text)
        await manager.aclose()
        assert await wait_gone([*second, second_child]) == []
    finally:
        kill_leftovers([*first_server, first_child])


async def test_failing_servers_do_not_block_the_others(tmp_path: Path) -> None:
    registry = Registry()
    notices: list[McpNotice] = []
    manager = McpManager([
        stdio_config("demo"),
        ServerConfig.stdio("nocmd", "agent-ext-no-such-command"),
        stdio_config("hangs", "--hang", timeout=2),
        ServerConfig.http("nobody", f"http://127.0.0.1:{free_port()}/mcp"),
        ServerConfig.stdio("dies", "python3", ["-c", "import sys; sys.exit('broken config')"]),
    ], registry, on_event=notices.append)
    try:
        started = time.monotonic()
        await manager.start()
        took = time.monotonic() - started
        assert took < 12, took
        states = {s.name: s for s in manager.status()}
        assert states["demo"].state == "connected"
        for name in ("nocmd", "hangs", "nobody", "dies"):
            assert states[name].state == "failed", states[name]
        assert "not found" in (states["nocmd"].reason or "")
        assert "did not answer within 2 s" in (states["hangs"].reason or "")
        assert "could not connect" in (states["nobody"].reason or "")
        assert "exited with code 1" in (states["dies"].reason or "")
        assert "broken config" in (states["dies"].reason or "")
        assert (await call(registry, "mcp__demo__echo", {"text": "ok"})).text == "echo: ok"
        await manager.start()
        failures = [n for n in notices if n.level == "warning"]
        assert sorted(n.server or "" for n in failures) == ["dies", "hangs", "nobody", "nocmd"]
        assert all("did not start" in n.text and "check its entry" in n.text for n in failures)
        assert not [n for n in registry.names() if n.startswith("mcp__nocmd")]
    finally:
        pids = pids_of(manager)
        await manager.aclose()
        assert await wait_gone(pids) == []


async def test_aclose_is_idempotent_and_kills_the_process_tree(demo: tuple) -> None:
    manager, registry, _ = demo
    pids = [*pids_of(manager), int((await call(registry, "mcp__demo__child_pid")).text)]
    await manager.aclose()
    await manager.aclose()
    assert await wait_gone(pids) == []
    assert not [n for n in registry.names() if n.startswith("mcp__")]
    assert {s.state for s in manager.status()} == {"closed"}


async def test_a_cancelled_call_cancels_the_request_not_the_server(demo: tuple) -> None:
    manager, registry, _ = demo
    task = asyncio.ensure_future(call(registry, "mcp__demo__wait_forever"))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await call(registry, "mcp__demo__echo", {"text": "still"})).text == "echo: still"
    pids = pids_of(manager)
    await manager.aclose()
    assert await wait_gone(pids) == []


async def test_a_cancelled_start_leaves_no_process() -> None:
    registry = Registry()
    manager = McpManager([stdio_config("slow", "--spawn-child", "--hang", timeout=30)], registry)
    task = asyncio.ensure_future(manager.start())
    await until(lambda: pids_of(manager))
    pids = pids_of(manager)
    assert pids
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await manager.aclose()
    assert await wait_gone(pids) == []


async def test_a_server_that_cannot_restart_loses_its_tools(tmp_path: Path) -> None:
    marker = tmp_path / "refuse"
    registry = Registry()
    notices: list[McpNotice] = []
    manager = McpManager([stdio_config("flaky", "--fail-if", str(marker))], registry,
                         on_event=notices.append, backoff=0.05)
    await manager.start()
    try:
        registry.reveal(["mcp__flaky__echo"])
        marker.write_text("x")
        crashed = await call(registry, "mcp__flaky__crash")
        assert crashed.error is not None and crashed.error.code == "mcp_server_disconnected"
        retried = await call(registry, "mcp__flaky__echo", {"text": "x"})
        assert retried.error is not None and retried.error.code == "mcp_server_unavailable"
        assert "could not be restarted after 3 attempts" in retried.text
        assert "marker file present" in retried.text
        assert "mcp__flaky__echo" not in registry and not registry.revealed
        gave_up = [n for n in notices if "was not restarted" in n.text]
        assert len(gave_up) == 1
        marker.unlink()
        status = await manager.reconnect("flaky")
        assert status.state == "connected" and "mcp__flaky__echo" in registry
    finally:
        await manager.aclose()


async def test_at_most_max_servers_are_started() -> None:
    registry = Registry()
    notices: list[McpNotice] = []
    manager = McpManager([stdio_config("one"), stdio_config("two")], registry, max_servers=1,
                         on_event=notices.append)
    try:
        await manager.start()
        states = {s.name: s for s in manager.status()}
        assert states["one"].state == "connected"
        assert states["two"].state == "failed" and "at most 1" in (states["two"].reason or "")
        with pytest.raises(ValueError, match="most this session allows"):
            await manager.add(stdio_config("three"))
    finally:
        await manager.aclose()


async def test_add_and_remove_at_runtime() -> None:
    registry = Registry()
    manager = McpManager([], registry)
    try:
        await manager.start()
        status = await manager.add(stdio_config("late"))
        assert status.state == "connected" and status.tools > 5
        registry.reveal(["mcp__late__echo"])
        assert await manager.remove("late")
        assert "mcp__late__echo" not in registry and not registry.revealed
        assert not await manager.remove("late")
    finally:
        await manager.aclose()


async def test_from_project_reads_mcp_json_and_reports_its_problems_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEMO_GREETING_TOKEN", "tok-abc-123")
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "demo": {"command": stdio_config().command, "args": list(stdio_config().args),
                 "env": {"TOKEN": "${DEMO_GREETING_TOKEN}"}},
        "broken": {"command": 42},
    }}, indent=2))
    notices: list[McpNotice] = []
    registry = Registry()
    assert McpManager.from_project(tmp_path, Registry()).configs == {}  # not trusted yet
    manager = McpManager.from_project(tmp_path, registry, on_event=notices.append,
                                      trust_project=True)
    try:
        await manager.start()
        await manager.start()
        assert "mcp__demo__echo" in registry
        [problem] = [n.text for n in notices if n.level == "warning"]
        assert "'broken'" in problem and ".mcp.json:12:" in problem
        assert manager.status("demo")[0].source == str(tmp_path / ".mcp.json")
        assert "tok-abc-123" not in repr(manager.configs["demo"])
    finally:
        await manager.aclose()


async def test_add_entry_saves_to_mcp_json_and_starts_the_server(tmp_path: Path) -> None:
    registry = Registry()
    manager = McpManager([], registry)
    entry = {"command": stdio_config().command, "args": list(stdio_config().args)}
    try:
        status = await manager.add_entry("saved", entry, save_in=tmp_path)
        assert status.state == "connected" and "mcp__saved__echo" in manager.tool_names("saved")
        saved = json.loads((tmp_path / ".mcp.json").read_text())
        assert saved["mcpServers"]["saved"] == entry
    finally:
        await manager.aclose()


async def test_kill_processes_works_without_awaiting(demo: tuple) -> None:
    manager, registry, _ = demo
    pids = [*pids_of(manager), int((await call(registry, "mcp__demo__child_pid")).text)]
    manager.kill_processes()
    assert await wait_gone(pids) == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tool_list_changes_arrive_in_both_protocol_eras(mode: str) -> None:
    seen: list[set[str]] = []
    conn = ServerConnection(stdio_config(), on_tools=lambda c: seen.append(
        {t.name for t in c.tools}))
    conn.mode = mode
    try:
        assert await conn.connect()
        assert conn.protocol is not None and conn.protocol.startswith(
            "2025" if mode == "legacy" else "2026")
        await conn.request(lambda client: client.call_tool("change_tools", {}))
        await until(lambda: len(seen) > 1)
        assert "added_later" in seen[-1] and "gone_soon" not in seen[-1]
    finally:
        await conn.close()
