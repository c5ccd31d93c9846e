"""Small helpers for the widgets' static HTML and text fallbacks (escaped, semantic markup)."""

from __future__ import annotations

import html
import json
from typing import Any


def esc(value: object) -> str:
    """HTML-escape any value's text."""
    return html.escape(str(value), quote=True)


def cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit} more characters)"


def cut_lines(text: str, limit: int) -> str:
    """At most ``limit`` lines, saying how many were left out."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    return "\n".join(lines[:limit]) + f"\n… ({len(lines) - limit} more lines)"


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (unknown objects become their ``str``), or None."""
    try:
        return json.loads(json.dumps(value, default=str, ensure_ascii=False))
    except (TypeError, ValueError):
        return None


def wrap(kind: str, body: str) -> str:
    """The outer element of a static rendering."""
    return f'<div class="agent-ext-static agent-ext-{kind}">{body}</div>'
