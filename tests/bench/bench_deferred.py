"""What deferral saves, and what the first request costs a small context window.

Registers the sample catalogue (212 tools of 14 public MCP servers) as external tools and prints
the characters of all their schemas inline, of our deferred summary, and the summary's average
characters per tool (target ≤ 40). Then the size of the built-in declarations (as our
``to_dict`` and as the OpenAI adapter sends them) and of the first request (system prompt with
the deferred summary, plus declarations) with 300 MCP tools connected, per tool profile.

Run: ``python tests/bench/bench_deferred.py``
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_ext.agent.prompt import build_context, build_system_prompt
from agent_ext.core import FunctionTool, Registry
from agent_ext.models._openai_convert import to_tools
from agent_ext.tools import register_builtins

DATA = Path(__file__).resolve().parent / "data"


def catalogue(name: str = "mcp_catalogue_sample.json") -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((DATA / name).read_text())
    return loaded


def registry_with(tools: list[dict[str, Any]]) -> Registry:
    reg = Registry()
    register_builtins(reg)
    for t in tools:
        reg.register_external(t["server"], FunctionTool(
            lambda **kw: "", name=t["name"], description=t["description"] or t["name"],
            parameters=t["input_schema"] or {"type": "object", "properties": {}}))
    return reg


def measure(tools: list[dict[str, Any]]) -> dict[str, float]:
    reg = registry_with(tools)
    before = json.dumps([d.to_dict() for d in reg.declarations()])
    summary = reg.deferred_summary()
    reg.reveal(reg.deferred())
    inline = json.dumps([d.to_dict() for d in reg.declarations()])
    return {
        "tools": len(tools),
        "inline_chars": len(inline) - len(before),
        "summary_chars": len(summary),
        "per_tool": len(summary) / len(tools),
    }


def catalogue_of(count: int) -> list[dict[str, Any]]:
    """``count`` distinct MCP tools: the sample catalogue, then the extra one."""
    tools: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for t in catalogue() + catalogue("extra_catalogue.json"):
        if len(tools) < count and (t["server"], t["name"]) not in seen:
            seen.add((t["server"], t["name"]))
            tools.append(t)
    return tools


def first_request(tools: list[dict[str, Any]], profile: str = "default") -> dict[str, int]:
    """Characters of the first request: built-in declarations, system prompt, both together."""
    reg = registry_with(tools)
    reg.set_profile(profile)
    declarations = reg.declarations()
    # The first request: the stable system prompt, the declarations, and the session context
    # that starts the first user turn.
    system = build_system_prompt(registry=reg) + build_context(cwd=Path("/home/user/project"))
    decl_chars = len(json.dumps([d.to_dict() for d in declarations]))
    return {
        "tools": len(declarations),
        "declaration_chars": decl_chars,
        "openai_chars": len(json.dumps(to_tools(declarations))),
        "summary_chars": len(reg.deferred_summary()),
        "system_chars": len(system),
        "request_chars": len(system) + decl_chars,
    }


def report_request(figures: dict[str, int], label: str) -> str:
    return (f"{label}: {figures['tools']} declarations {figures['declaration_chars']:,} chars "
            f"({figures['openai_chars']:,} as the OpenAI adapter sends them); system prompt "
            f"{figures['system_chars']:,} (deferred summary {figures['summary_chars']:,}); "
            f"first request {figures['request_chars']:,}")


def report(figures: dict[str, float], label: str) -> str:
    return (f"{label}: {int(figures['tools'])} tools; schemas inline "
            f"{int(figures['inline_chars']):,} chars, deferred summary "
            f"{int(figures['summary_chars']):,} chars "
            f"({figures['per_tool']:.1f} chars per tool, target <= 40)")


if __name__ == "__main__":
    print(report(measure(catalogue()), "sample catalogue"))
    print(report(measure(catalogue("extra_catalogue.json")), "extra catalogue"))
    for profile in ("default", "compact"):
        print(report_request(first_request([], profile), f"built-ins only, {profile}"))
        print(report_request(first_request(catalogue_of(300), profile),
                             f"300 MCP tools, {profile}"))
