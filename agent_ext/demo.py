"""A short tour of the tool framework in plain Python: ``python -m agent_ext``.

It registers a handful of deferred tools, shows what the model is sent (their names only),
finds one with ``tool_search`` and calls it, first directly and then from a scripted model run.
The model here is a ``ScriptedModel`` replaying fixed steps: no provider, no key, no network.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone

from agent_ext import Agent, FunctionTool, Kind, tool
from agent_ext.models import ScriptedModel, call


@tool(kind=Kind.READ, read_only=True)
def current_time(tz_offset_hours: int = 0) -> str:
    """Tell the current date and time.

    Args:
        tz_offset_hours: Offset from UTC in hours, e.g. 9 for Tokyo.
    """
    from datetime import timedelta  # noqa: PLC0415

    now = datetime.now(timezone.utc) + timedelta(hours=tz_offset_hours)
    return now.strftime(f"%Y-%m-%d %H:%M (UTC{tz_offset_hours:+d})")


@tool
def create_ticket(title: str, body: str = "", priority: int = 3) -> dict[str, object]:
    """Open a new ticket in the team's tracker."""
    return {"id": 101, "title": title, "body": body, "priority": priority}


def _catalogue() -> list[FunctionTool]:
    def echo(**kwargs: object) -> str:
        return json.dumps(kwargs)

    specs = [
        ("list_branches", "List the branches of a repository."),
        ("create_pull_request", "Open a pull request from a branch."),
        ("search_code", "Search code across repositories."),
    ]
    schema = {"type": "object", "properties": {"repo": {"type": "string"}}, "required": ["repo"]}
    return [FunctionTool(echo, name=n, description=d, parameters=schema, kind=Kind.OTHER)
            for n, d in specs]


def _banner(title: str) -> None:
    print(f"\n== {title} ==")


async def main() -> None:
    script = ScriptedModel([
        call("tool_search", {"query": "what time is it"}, id="c1"),
        call("current_time", {"tz_offset_hours": "9"}, id="c2"),
        "For the team it is the date and hour shown above (UTC+9).",
    ], label="demo replay")
    agent = Agent(script, plugins=False)
    agent.registry.register(current_time)
    agent.registry.register(create_ticket)
    for t in _catalogue():
        agent.registry.register_external("github", t)

    _banner("What the model is sent")
    print("declarations:", [d.name for d in agent.registry.declarations()])
    print(agent.registry.deferred_summary())

    _banner("tool_search 'open a PR' (keyword mode)")
    found = await agent.call_tool("tool_search", {"query": "open a PR"})
    print(found.text)
    print("now declared:", [d.name for d in agent.registry.declarations()])

    _banner("A malformed call is an error the model can act on")
    bad = await agent.call_tool("create_ticket", {"title": None, "colour": "red"})
    print(bad.error)

    _banner("A scripted run (demo replay, no model provider involved)")
    run = await agent.run("Our team works at UTC+9: what is the date and hour there?")
    for c, r in run.tool_calls:
        print(f"{c.name}({c.arguments}) -> {r.text.splitlines()[0]}")
    print("final answer:", run.text)
    await agent.aclose()


def run() -> None:
    asyncio.run(main())


if __name__ == "__main__":
    run()
