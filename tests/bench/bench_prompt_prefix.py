"""How much of the first request stays byte-identical for another folder and another day.

Local servers (llama.cpp, Ollama, LM Studio, vLLM) and cloud providers reuse the computation for
the longest prefix a request shares with an earlier one. Chat templates render the system
prompt, then the tool declarations, then the conversation; so this serialises a first request
in that order, as the OpenAI adapter sends it, for a session in folder A on day 1, in folder B
(other instruction files) on day 1 and in folder A on day 2 (a moved clock), and prints, for
the default and the compact tool profile, the first request's size and the share of it that the
others share as a prefix (the part a prompt cache can reuse).

Run: ``python tests/bench/bench_prompt_prefix.py``
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from agent_ext.agent import Agent
from agent_ext.agent import prompt as prompt_mod
from agent_ext.core import TextPart
from agent_ext.core.profiles import PROFILES
from agent_ext.models import Message, ScriptedModel
from agent_ext.models._openai_convert import to_messages, to_tools

PROMPT = "read the file app.py and fix the bug"
DAY_1, DAY_2 = date(2026, 3, 1), date(2026, 3, 2)


@contextmanager
def clock(day: date) -> Iterator[None]:
    saved = prompt_mod.today
    prompt_mod.today = lambda: day
    try:
        yield
    finally:
        prompt_mod.today = saved


def serialized(cwd: Path, day: date, profile: str = "default") -> str:
    """The first request in template order: system prompt, tools, then the messages."""
    agent = Agent(ScriptedModel([]), cwd=cwd, plugins=False, mcp=False, tool_profile=profile)
    agent.messages.append(Message(role="user", parts=(TextPart(PROMPT),)))
    with clock(day):
        request = agent.request()
    messages = to_messages(request)
    system, rest = messages[0], messages[1:]
    return (json.dumps(system, ensure_ascii=False) + json.dumps(to_tools(request.tools),
                                                                ensure_ascii=False)
            + json.dumps(rest, ensure_ascii=False))


def shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def measure(profile: str = "default") -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agent_ext_prefix_") as tmp:
        saved = os.environ.get("AGENT_EXT_CONFIG_DIR")
        os.environ["AGENT_EXT_CONFIG_DIR"] = str(Path(tmp) / "config")  # no user instructions
        try:
            folders = []
            for name, rule in (("alpha", "Use tabs."), ("beta-project", "Tests live in tests/.")):
                folder = Path(tmp) / name
                folder.mkdir()
                (folder / ".git").mkdir()
                (folder / "AGENTS.md").write_text(rule)
                folders.append(folder)
            first = serialized(folders[0], DAY_1, profile)
            other_folder = serialized(folders[1], DAY_1, profile)
            other_day = serialized(folders[0], DAY_2, profile)
        finally:
            if saved is None:
                os.environ.pop("AGENT_EXT_CONFIG_DIR", None)
            else:
                os.environ["AGENT_EXT_CONFIG_DIR"] = saved
    folder_share = shared_prefix(first, other_folder) / len(first)
    day_share = shared_prefix(first, other_day) / len(first)
    return {"profile": profile,
            "first_request_chars": len(first), "first_request_tokens_est": len(first) // 4,
            "other_folder_share": folder_share, "other_day_share": day_share,
            "stable_share": min(folder_share, day_share)}


def report(figures: dict[str, Any]) -> str:
    return "\n".join([
        (f"{figures['profile']} profile: first request {figures['first_request_chars']:,} "
         f"characters (~{figures['first_request_tokens_est']:,} tokens)"),
        f"  identical prefix (cache hit), second folder: {figures['other_folder_share']:.1%}",
        f"  identical prefix (cache hit), second day:    {figures['other_day_share']:.1%}",
    ])


if __name__ == "__main__":
    print("\n".join(report(measure(profile)) for profile in PROFILES))
