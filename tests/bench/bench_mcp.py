"""What 5 MCP servers with 300 tools add to the model's first request: only the deferred summary.

Starts 5 real stdio servers (tests/mcp_servers/catalogue_server.py: the sample catalogue's tools
of github, playwright, filesystem, everything and git, padded with synthetic tools to 300),
attaches them to an Agent, and measures the whole first request the model receives (system
prompt + declarations JSON + messages) before and after, the deferred summary, and what the
same tools would cost inline (every schema sent, as other Jupyter agents do).

Run: ``python tests/bench/bench_mcp.py``
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agent_ext import Agent  # noqa: E402
from agent_ext.agent.transcript import dumps  # noqa: E402
from agent_ext.mcp import McpManager, ServerConfig  # noqa: E402
from agent_ext.models import ScriptedModel  # noqa: E402
from agent_ext.models.types import ModelRequest  # noqa: E402

CATALOGUE = ROOT / "tests" / "bench" / "data" / "mcp_catalogue_sample.json"
SERVER = ROOT / "tests" / "mcp_servers" / "catalogue_server.py"
PLAN = {"github": 86, "playwright": 54, "filesystem": 54, "everything": 53, "git": 53}
PROMPT = "List the open pull requests of this repository and summarise the failing checks."
TARGET = 12_000


def configs() -> list[ServerConfig]:
    return [ServerConfig.stdio(name, sys.executable, [str(SERVER), str(CATALOGUE), name,
                                                       str(total)], timeout=30)
            for name, total in PLAN.items()]


def request_chars(request: ModelRequest) -> dict[str, int]:
    system = len(request.system)
    tools = len(json.dumps([t.to_dict() for t in request.tools]))
    messages = len(dumps(list(request.messages)))
    return {"system": system, "declarations": tools, "messages": messages,
            "total": system + tools + messages}


async def first_request(cwd: Path, with_mcp: bool) -> dict[str, object]:
    """Run one scripted turn and measure the request the model received."""
    model = ScriptedModel(["done"])
    agent = Agent(model, cwd=cwd, plugins=False)
    manager = McpManager(configs() if with_mcp else [], agent.registry)
    figures: dict[str, object] = {}
    try:
        started = time.monotonic()
        await manager.start()
        figures["start_seconds"] = round(time.monotonic() - started, 2)
        declarations = agent.registry.declarations()
        figures["mcp_tools"] = sum(n.startswith("mcp__") for n in agent.registry.names())
        figures["summary_chars"] = len(agent.registry.deferred_summary())
        await agent.run(PROMPT)
        figures["request"] = request_chars(model.requests[0])
        figures["declarations_unchanged"] = agent.registry.declarations() == declarations
        figures["declarations"] = declarations
        if with_mcp:
            one = "mcp__github__list_pull_requests"
            agent.registry.reveal([one])
            after = agent.registry.declarations()
            figures["reveal_adds_exactly_one"] = (
                [d for d in after if d not in declarations] == [agent.registry.get(one)
                                                                .declaration()])
            agent.registry.reveal(agent.registry.deferred())
            inline = [d for d in agent.registry.declarations() if d.name.startswith("mcp__")]
            figures["inline_chars"] = len(json.dumps([d.to_dict() for d in inline]))
    finally:
        await manager.aclose()
        await agent.aclose()
    return figures


async def measure() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        base = await first_request(Path(tmp), with_mcp=False)
        mcp = await first_request(Path(tmp), with_mcp=True)
    base_req, mcp_req = base["request"], mcp["request"]
    assert isinstance(base_req, dict) and isinstance(mcp_req, dict)
    return {"base": base, "mcp": mcp, "growth": mcp_req["total"] - base_req["total"],
            "summary_growth": int(mcp["summary_chars"]) - int(base["summary_chars"]),
            "declarations_equal": base["declarations"] == mcp["declarations"]}


def report(figures: dict[str, object]) -> str:
    base, mcp = figures["base"], figures["mcp"]
    assert isinstance(base, dict) and isinstance(mcp, dict)
    b, m = base["request"], mcp["request"]
    per_tool = int(figures["summary_growth"]) / int(mcp["mcp_tools"])
    lines = [
        (f"MCP bench: {mcp['mcp_tools']} tools from {len(PLAN)} stdio servers, started in "
         f"{mcp['start_seconds']} s (in parallel)"),
        (f"  first request without MCP: {b['total']:,} chars (system {b['system']:,}, "
         f"declarations {b['declarations']:,}, messages {b['messages']:,})"),
        (f"  first request with MCP:    {m['total']:,} chars (system {m['system']:,}, "
         f"declarations {m['declarations']:,}, messages {m['messages']:,}); aim <= {TARGET:,}"),
        (f"  growth: {figures['growth']:,} chars; the deferred summary grew by "
         f"{figures['summary_growth']:,} chars ({per_tool:.1f} per MCP tool) and nothing else "
         "did"),
        (f"  declarations unchanged by MCP: {figures['declarations_equal']}; unchanged until a "
         f"reveal: {mcp['declarations_unchanged']}; a reveal adds exactly that schema: "
         f"{mcp['reveal_adds_exactly_one']}"),
        f"  the same tools inline (every schema sent each turn): {mcp['inline_chars']:,} chars",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(asyncio.run(measure())))
