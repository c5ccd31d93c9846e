"""Context accounting and compaction: long sessions stay under the model's context window.

Tokens are the provider's figures when it reports usage, else an estimate (about four characters
a token, a fixed cost per image). When the next request would pass ``compact_at`` of the window,
older turns are summarised by the model itself, and large tool results that stay are replaced
by pointers to files the model can read back.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

from agent_ext.core import ImagePart, TextPart
from agent_ext.core.budget import SpillError, SpillStore
from agent_ext.core.budget.text import persisted_stub
from agent_ext.models import Message, ModelRequest, ToolReturn

IMAGE_TOKENS = 1_500
SUMMARY_PROMPT = (
    "Summarise the conversation so far for your own later use: the user's goals and "
    "preferences, decisions made, files and notebook cells read or changed (with ids), commands "
    "run and their outcome, open problems and what remains to do. Be concise and factual; do not "
    "call tools."
)
SUMMARY_HEADER = "[agent_ext: earlier conversation, summarised to save context]\n"


@dataclass(frozen=True)
class ContextLimits:
    """The model's window and when to compact."""

    window_tokens: int = 128_000
    compact_at: float = 0.8
    #: User prompts kept verbatim (with everything after them) when compacting.
    keep_recent_prompts: int = 2
    #: Tool results longer than this are replaced by file pointers when compacting.
    pointer_chars: int = 4_000


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def estimate_message(m: Message) -> int:
    total = 4
    for p in m.parts:
        total += estimate_tokens(p.text) if isinstance(p, TextPart) else IMAGE_TOKENS
    for c in m.tool_calls:
        total += estimate_tokens(c.name + c.arguments) + 4
    for r in m.tool_returns:
        for p in r.content:
            total += estimate_tokens(p.text) if isinstance(p, TextPart) else IMAGE_TOKENS
    return total


def estimate_request(request: ModelRequest) -> int:
    tools = json.dumps([t.to_dict() for t in request.tools], ensure_ascii=False)
    return (estimate_tokens(request.system) + estimate_tokens(tools)
            + sum(estimate_message(m) for m in request.messages))


def split_for_compaction(messages: list[Message], keep_prompts: int) -> int:
    """Where the kept tail starts: at a user prompt, never between a call and its result."""
    prompts = [i for i, m in enumerate(messages) if m.role == "user" and not m.tool_returns]
    if len(prompts) <= keep_prompts:
        return 0
    return prompts[-keep_prompts]


def pointerize(messages: list[Message], store: SpillStore, limit: int) -> list[Message]:
    """Replace tool results over ``limit`` characters by pointers to saved copies."""
    out = []
    for m in messages:
        if not m.tool_returns:
            out.append(m)
            continue
        returns = []
        for r in m.tool_returns:
            text = "\n".join(p.text for p in r.content if isinstance(p, TextPart))
            if len(text) <= limit or text.startswith("<persisted-output>"):
                returns.append(r)
                continue
            try:
                record = store.persist(f"{r.call_id}-compacted", text)
            except SpillError:
                returns.append(r)
                continue
            stub = persisted_stub(text, size=record.bytes, sha256=record.sha256,
                                  preview_chars=min(2_000, limit // 2), path=record.path)
            images = tuple(p for p in r.content if isinstance(p, ImagePart))
            returns.append(ToolReturn(r.call_id, r.name, (TextPart(stub), *images), r.is_error))
        out.append(replace(m, tool_returns=tuple(returns)))
    return out
