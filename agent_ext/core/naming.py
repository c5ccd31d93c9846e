"""Tool names every provider accepts: ``[A-Za-z0-9_-]{1,64}``, external ones ``mcp__srv__tool``."""

from __future__ import annotations

import re
from collections.abc import Collection

MAX_NAME = 64
_VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def is_valid_name(name: str) -> bool:
    return bool(_VALID.match(name))


def sanitize(name: str) -> str:
    """Replace characters providers refuse with ``_``; elide the middle of over-long names."""
    clean = _INVALID_CHARS.sub("_", name) or "_"
    return elide(clean)


def elide(name: str, limit: int = MAX_NAME) -> str:
    """Keep the start (server) and the end (tool) of a long name, joined by ``___``."""
    if len(name) <= limit:
        return name
    keep = limit - 3
    head = keep // 2
    return f"{name[:head]}___{name[len(name) - (keep - head):]}"


def external_name(server: str, tool: str, taken: Collection[str] = ()) -> str:
    """The registered name of an external tool, unique among ``taken`` (case-insensitive)."""
    base = sanitize(f"mcp__{server}__{tool}")
    lowered = {t.lower() for t in taken}
    if base.lower() not in lowered:
        return base
    n = 2
    while True:
        suffix = f"_{n}"
        candidate = elide(base, MAX_NAME - len(suffix)) + suffix
        if candidate.lower() not in lowered:
            return candidate
        n += 1


def split_external(name: str) -> tuple[str, str] | None:
    """``mcp__srv__tool`` → ``("srv", "tool")``; None for other names."""
    if not name.startswith("mcp__"):
        return None
    server, sep, tool = name[5:].partition("__")
    return (server, tool) if sep and server and tool else None
