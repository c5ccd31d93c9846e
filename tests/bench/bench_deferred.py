"""What deferral saves: the declarations a model would get inline vs our deferred summary.

Registers the sample catalogue (212 tools of 14 public MCP servers) as external tools and prints
the characters of all their schemas inline, of our deferred summary, and the summary's average
characters per tool (target ≤ 40).

Run: ``python tests/bench/bench_deferred.py``
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_ext.core import FunctionTool, Registry
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


def report(figures: dict[str, float], label: str) -> str:
    return (f"{label}: {int(figures['tools'])} tools; schemas inline "
            f"{int(figures['inline_chars']):,} chars, deferred summary "
            f"{int(figures['summary_chars']):,} chars "
            f"({figures['per_tool']:.1f} chars per tool, target <= 40)")


if __name__ == "__main__":
    print(report(measure(catalogue()), "sample catalogue"))
    print(report(measure(catalogue("extra_catalogue.json")), "extra catalogue"))
