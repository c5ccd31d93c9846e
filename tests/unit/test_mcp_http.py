"""McpManager against the real HTTP test server on 127.0.0.1 (streamable HTTP and SSE)."""

from __future__ import annotations

import time

import pytest

from agent_ext.core import ExecControl, Registry, ToolResult
from agent_ext.mcp import McpManager, McpNotice, ServerConfig, parse_server
from agent_ext.urls import parse_url
from tests.mcp_servers.harness import free_port, http_server

pytestmark = pytest.mark.timeout(60)
TOKEN = "tok-4f9a81c2e7"


async def add(registry: Registry, a: int, b: int) -> ToolResult:
    built = registry.get("mcp__remote__remote_add").build({"a": a, "b": b})
    assert not isinstance(built, ToolResult)
    return await built.execute(ExecControl())


async def test_streamable_http_with_an_interpolated_bearer_header() -> None:
    with http_server(TOKEN) as url:
        config = parse_server("remote", {"url": url,
                                         "headers": {"Authorization": "Bearer ${MCP_TOK}"}},
                              environ={"MCP_TOK": TOKEN})
        assert config.transport == "http" and TOKEN not in repr(config)
        registry = Registry()
        manager = McpManager([config], registry)
        try:
            await manager.start()
            assert (await add(registry, 2, 3)).text == "5"
            readme = await manager.scheme.resolve(parse_url("mcp://remote/res://remote-readme"),
                                                  None)
            assert readme.text == "remote readme text"
        finally:
            await manager.aclose()


async def test_sse_transport() -> None:
    with http_server(TOKEN, sse=True) as url:
        config = parse_server("remote", {"url": url, "headers": {"Authorization": f"Bearer {TOKEN}"}})
        assert config.transport == "sse"
        registry = Registry()
        manager = McpManager([config], registry)
        try:
            await manager.start()
            assert (await add(registry, 4, 5)).text == "9"
        finally:
            await manager.aclose()


async def test_a_wrong_token_fails_clearly_and_secrets_are_masked() -> None:
    secret = "wrong-secret-token-77"
    with http_server(TOKEN) as url:
        config = parse_server("remote", {"type": "http", "url": url,
                                         "headers": {"Authorization": "Bearer ${BAD}"}},
                              environ={"BAD": secret})
        notices: list[McpNotice] = []
        manager = McpManager([config], Registry(), on_event=notices.append)
        try:
            await manager.start()
            [status] = manager.status()
            assert status.state == "failed"
            assert "HTTP 401" in (status.reason or "") and "Authorization" in (status.reason or "")
            [notice] = notices
            assert "HTTP 401" in notice.text
            shown = " ".join([notice.text, status.line(), repr(config), config.describe()])
            assert secret not in shown
        finally:
            await manager.aclose()


async def test_a_port_with_nothing_listening_fails_fast() -> None:
    manager = McpManager([ServerConfig.http("gone", f"http://127.0.0.1:{free_port()}/mcp")],
                         Registry())
    try:
        started = time.monotonic()
        await manager.start()
        assert time.monotonic() - started < 5
        [status] = manager.status()
        assert status.state == "failed" and "could not connect" in (status.reason or "")
    finally:
        await manager.aclose()


async def test_a_server_gone_mid_session_fails_calls_clearly_then_gives_up() -> None:
    registry = Registry()
    notices: list[McpNotice] = []
    with http_server(TOKEN) as url:
        manager = McpManager([ServerConfig.http("remote", url,
                                                headers={"Authorization": f"Bearer {TOKEN}"})],
                             registry, on_event=notices.append, backoff=0.05)
        await manager.start()
        assert (await add(registry, 1, 1)).text == "2"
    try:
        lost = await add(registry, 1, 2)
        assert lost.error is not None and lost.error.code == "mcp_server_disconnected"
        assert "could not connect" in lost.text
        gone = await add(registry, 1, 3)
        assert gone.error is not None and gone.error.code == "mcp_server_unavailable"
        assert "could not be restarted after 3 attempts" in gone.text
        assert "mcp__remote__remote_add" not in registry
        assert [n.level for n in notices].count("warning") == 2
    finally:
        await manager.aclose()
