"""The mcp:// scheme against the real stdio test server: listings, reads, caps and prompts."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent_ext.core import ImagePart, Registry, TextPart
from agent_ext.fs.selectors import LineRange, Selector
from agent_ext.mcp import McpManager, McpScheme
from agent_ext.urls import Resolved, URLError, URLRouter, parse_url
from tests.mcp_servers.harness import stdio_config

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def scheme() -> AsyncIterator[McpScheme]:
    manager = McpManager([stdio_config("demo")], Registry())
    await manager.start()
    try:
        yield manager.scheme
    finally:
        await manager.aclose()


async def read(scheme: McpScheme, url: str, selector: Selector | None = None) -> Resolved:
    return await scheme.resolve(parse_url(url), selector)


async def test_the_scheme_registers_with_the_router(scheme: McpScheme) -> None:
    router = URLRouter([scheme])
    assert router.unpeeled() == ["mcp"]
    assert router.is_url("mcp://demo/res://greeting")
    assert (await router.resolve("mcp://demo/res://greeting")).text == (
        "Hello from the demo server")
    assert router.complete("mcp://de") == ["mcp://demo/"]


async def test_listings(scheme: McpScheme) -> None:
    servers = (await read(scheme, "mcp://")).text or ""
    assert "demo: connected" in servers and "12 tools" in servers
    index = (await read(scheme, "mcp://demo/")).text or ""
    assert "mcp://demo/res://greeting — greeting: A friendly greeting (text/plain)" in index
    assert "Resource templates (1" in index and "mcp://demo/res://users/{user_id}" in index
    assert "Prompts: 1 (mcp://demo/?prompts)" in index
    assert scheme.complete("demo/res://l") == ["demo/res://logo.png"]
    prompts = (await read(scheme, "mcp://demo/?prompts")).text or ""
    assert "summarize(text*, style)" in prompts and "not run" in prompts
    one = (await read(scheme, "mcp://demo/?prompt=summarize")).text or ""
    assert "text (required)" in one and "style" in one


async def test_reads_text_templates_images_and_binary(scheme: McpScheme) -> None:
    assert (await read(scheme, "mcp://demo/res://users/42")).text == "user 42"
    logo = await read(scheme, "mcp://demo/res://logo.png")
    assert logo.text is None and isinstance(logo.parts[0], ImagePart)
    assert logo.parts[0].data.startswith(b"\x89PNG")
    binary = await read(scheme, "mcp://demo/res://data.bin")
    text = binary.text or "".join(p.text for p in binary.parts if isinstance(p, TextPart))
    assert "1.0 KB of binary data; not shown" in text
    assert "\x00" not in text


async def test_text_is_capped_and_line_selectors_apply(scheme: McpScheme) -> None:
    big = await read(scheme, "mcp://demo/res://big.txt")
    assert big.text is not None and len(big.text) == 200_000 and not big.full
    assert "truncated at 200000 characters" in big.notes[0]
    lines = await read(scheme, "mcp://demo/res://numbers", Selector(ranges=(LineRange(3, 5),)))
    assert lines.text == "line 3\nline 4\nline 5" and not lines.full


async def test_percent_encoded_uris_and_errors(scheme: McpScheme) -> None:
    assert (await read(scheme, "mcp://demo/res%3A%2F%2Fgreeting")).text == (
        "Hello from the demo server")
    with pytest.raises(URLError, match="could not read 'res://nothing'") as missing:
        await read(scheme, "mcp://demo/res://nothing")
    assert missing.value.code == "file_not_found"
    with pytest.raises(URLError, match="no MCP server named 'nope'"):
        await read(scheme, "mcp://nope/x")
    with pytest.raises(URLError, match="unknown query"):
        await read(scheme, "mcp://demo/?bogus")
