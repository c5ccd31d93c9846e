"""``%agent history``: the conversation as one short line per message.

Long texts and arguments are cut so the whole conversation fits on a screen; the full
transcript is what ``%agent save`` writes.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent_ext.agent.prompt import WHERE_HEADER
from agent_ext.core import TextPart
from agent_ext.models import Message

WIDTH = 100


def summarize(messages: Iterable[Message]) -> str:
    """One numbered line per message: who, the start of its text, the calls and results."""
    lines = []
    for n, message in enumerate(messages, 1):
        text = " ".join(" ".join(p.text for p in message.parts if isinstance(p, TextPart)
                                 and not p.text.startswith(WHERE_HEADER)).split())
        if message.role == "tool":
            body = "; ".join(f"{r.name}: {'error' if r.is_error else 'ok'}"
                             for r in message.tool_returns)
        else:
            calls = " ".join(f"→ {c.name}({_cut(c.arguments, 40)})" for c in message.tool_calls)
            body = " ".join(part for part in (_cut(text, WIDTH), calls) if part)
        lines.append(f"{n:>3} {message.role}: {body}")
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
