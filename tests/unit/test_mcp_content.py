"""MCP content blocks mapped to parts: caps, notes and error results, without a server."""

from __future__ import annotations

import base64

import mcp_types as types

from agent_ext.core import ImagePart, TextPart
from agent_ext.mcp import content
from agent_ext.mcp.content import MAX_IMAGE_BYTES, block_part, to_result


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_images_are_parts_up_to_the_cap() -> None:
    small = block_part(types.ImageContent(data=b64(b"\x89PNG..."), mime_type="image/png"), "s")
    assert isinstance(small, ImagePart) and small.mime_type == "image/png"
    huge = block_part(types.ImageContent(data=b64(b"x" * (MAX_IMAGE_BYTES + 1)),
                                         mime_type="image/png"), "s")
    assert isinstance(huge, TextPart) and "over the 5.0 MB limit; not shown" in huge.text
    broken = block_part(types.ImageContent(data="@@not base64@@", mime_type="image/png"), "s")
    assert isinstance(broken, TextPart) and "not valid base64" in broken.text


def test_blobs_text_types_are_decoded_and_others_described() -> None:
    text = content.blob_part(b64(b'{"a": 1}'), "application/json", "res://a.json", "s")
    assert text == TextPart('[resource res://a.json]\n{"a": 1}')
    other = content.blob_part(b64(b"\x00" * 3000), None, "res://x", "s")
    assert isinstance(other, TextPart)
    assert "application/octet-stream, 2.9 KB of binary data; not shown" in other.text
    assert "mcp://s/res://x" in other.text


def test_results_errors_and_empty_answers() -> None:
    err = to_result(types.CallToolResult(content=[types.TextContent(text="bad input")],
                                         is_error=True), "srv", "tool")
    assert err.error is not None and err.error.code == "mcp_tool_error"
    assert err.text == "tool (MCP server 'srv') reported an error: bad input"
    empty = to_result(types.CallToolResult(content=[]), "srv", "tool")
    assert empty.text == "(tool returned no content)" and not empty.is_error
    both = to_result(types.CallToolResult(content=[types.TextContent(text="t")],
                                          structured_content={"k": 1}), "srv", "tool")
    assert both.text == "t"
