"""MCP content blocks as parts the model can take: text, images, and notes for the rest.

Images become image parts (up to a size cap); audio and binary blobs are described, never
dumped as base64 into the context; embedded text resources keep their URI; resource links say
how to read them through ``mcp://``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING

from agent_ext.core import ImagePart, Part, TextPart, ToolResult

from .errors import MCP_TOOL_ERROR

if TYPE_CHECKING:
    import mcp_types as types

#: Larger images are described instead of sent.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
_TEXT_MIME = ("text/", "application/json", "application/xml", "application/yaml",
              "application/javascript", "application/x-yaml", "application/toml")


def resource_url(server: str, uri: str) -> str:
    """The ``mcp://`` address of a server's resource."""
    return f"mcp://{server}/{uri}"


def _decode(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / 1024 / 1024:.1f} MB"
    return f"{count / 1024:.1f} KB" if count >= 1024 else f"{count} bytes"


def image_part(data: str, mime: str, what: str) -> Part:
    """An image part, or a note when the data is not base64 or is over the cap."""
    raw = _decode(data)
    if raw is None:
        return TextPart(f"[{what}: {mime} image whose data is not valid base64]")
    if len(raw) > MAX_IMAGE_BYTES:
        return TextPart(f"[{what}: {mime} image of {_size(len(raw))}, over the "
                        f"{_size(MAX_IMAGE_BYTES)} limit; not shown]")
    return ImagePart(raw, mime)


def is_text_mime(mime: str | None) -> bool:
    return bool(mime) and str(mime).lower().startswith(_TEXT_MIME)


def blob_part(blob: str, mime: str | None, uri: str, server: str) -> Part:
    """A binary resource: an image part, decoded text for text types, else a description."""
    kind = (mime or "application/octet-stream").lower()
    if kind.startswith("image/"):
        return image_part(blob, kind, f"resource {uri}")
    raw = _decode(blob)
    if raw is not None and is_text_mime(kind):
        return TextPart(f"[resource {uri}]\n{raw.decode('utf-8', errors='replace')}")
    size = _size(len(raw)) if raw is not None else "unknown size"
    return TextPart(f"[resource {uri}: {kind}, {size} of binary data; not shown. Read "
                    f"{resource_url(server, uri)} only if a description is enough.]")


def block_part(block: types.ContentBlock, server: str) -> Part:
    """One content block of a tool result."""
    import mcp_types as types  # noqa: PLC0415  (loaded already: a server sent the block)

    if isinstance(block, types.TextContent):
        return TextPart(block.text)
    if isinstance(block, types.ImageContent):
        return image_part(block.data, block.mime_type, "image")
    if isinstance(block, types.AudioContent):
        raw = _decode(block.data)
        size = _size(len(raw)) if raw is not None else "unknown size"
        return TextPart(f"[audio: {block.mime_type}, {size}; audio is not passed to the model]")
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        if isinstance(res, types.TextResourceContents):
            return TextPart(f"[resource {res.uri}]\n{res.text}")
        return blob_part(res.blob, res.mime_type, str(res.uri), server)
    link = block
    label = f" ({link.name})" if link.name and link.name != link.uri else ""
    return TextPart(f"[resource link: {link.uri}{label}; read it with read_file "
                    f"{resource_url(server, str(link.uri))}]")


def to_result(result: types.CallToolResult, server: str, tool: str) -> ToolResult:
    """A tool's answer as a ToolResult; ``isError`` becomes an ``mcp_tool_error`` result."""
    parts = [block_part(b, server) for b in result.content]
    if not any(isinstance(p, TextPart) for p in parts) and result.structured_content is not None:
        parts.insert(0, TextPart(json.dumps(result.structured_content, ensure_ascii=False,
                                            indent=1, default=str)))
    text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
    if result.is_error:
        message = f"{tool} (MCP server {server!r}) reported an error: {text or 'no details'}"
        return ToolResult.fail(MCP_TOOL_ERROR, message)
    if not parts:
        return ToolResult(llm_content=f"({tool} returned no content)", display="(no content)")
    if all(isinstance(p, TextPart) for p in parts):
        return ToolResult(llm_content=text, display=text)
    images = sum(isinstance(p, ImagePart) for p in parts)
    note = f"{images} image{'s' if images != 1 else ''}"
    return ToolResult(llm_content=parts, display=f"{text}\n[{note}]" if text else f"[{note}]")
