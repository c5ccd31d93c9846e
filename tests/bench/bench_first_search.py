"""The first ``tool_search`` in a fresh kernel, with either backend, over 1,000 tools.

For each backend, a fresh kernel registers the bench's catalogue (repeated to 1,000 tools) as
MCP tools, then times the first registry search: loading the search modules, numpy and the
embedding table where the backend needs them, building the index and answering. The semantic
backend is timed twice: searched the moment it is created ("cold", the table still loading),
and searched :data:`PAUSE` seconds after it is created, as when an agent chooses it at start and
the model's first tool_search comes a model turn later. It also checks that the search printed
nothing (no progress bar, no warning) into the cell. Target: ≤ 300 ms with either backend.

Run: ``python tests/bench/bench_first_search.py``
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TARGET_MS = 300.0
SIZE = 1000
# Seconds between choosing the backend and the first search: less than one model turn.
PAUSE = 1.0

SETUP = """
import json
from agent_ext.core import FunctionTool, Registry
registry = Registry()
for t in json.loads({tools!r}):
    registry.register_external(t["server"], FunctionTool(
        lambda **kw: "", name=t["name"], description=t["description"],
        parameters={{"type": "object", "properties": {{}}}}, server=t["server"]))
"""
PROBE = """
import time
t0 = time.perf_counter()
if {semantic!r}:
    from agent_ext.core.search_embed import EmbeddingBackend
    registry.search_backend = EmbeddingBackend()
if {pause!r}:
    time.sleep({pause!r})
    t0 = time.perf_counter()
hits = registry.search("change the settings of a project", 5).hits
print(round((time.perf_counter() - t0) * 1000, 1), len(hits))
"""


def measure() -> dict[str, dict[str, object]]:
    for p in (str(HERE), str(ROOT)):
        if p not in sys.path:
            sys.path.insert(0, p)
    from bench_tool_search import load_tools, synthetic_catalogue

    from tests.kernel.harness import running_kernel

    tools = [{"server": t["server"], "name": t["name"], "description": t["description"]}
             for t in synthetic_catalogue(load_tools(), SIZE)]
    out: dict[str, dict[str, object]] = {}
    for name, semantic, pause in (("pure", False, 0.0), ("semantic cold", True, 0.0),
                                  ("semantic after a turn", True, PAUSE)):
        with tempfile.TemporaryDirectory() as tmp, running_kernel(Path(tmp) / "home",
                                                                 Path(tmp)) as kernel:
            kernel.ok(SETUP.format(tools=json.dumps(tools)), timeout=120)
            run = kernel.ok(PROBE.format(semantic=semantic, pause=pause), timeout=60)
            ms, hits = run.stdout.split()
            shown = [m for m in run.messages if m["msg_type"] in (
                "stream", "display_data", "error")]
            out[name] = {
                "ms": float(ms), "hits": int(hits), "other_output": len(shown) - 1}
    return out


def report(figures: dict[str, dict[str, object]]) -> str:
    return "\n".join(
        f"first search in a fresh kernel over {SIZE} tools, {name}: {f['ms']} ms "
        f"(target ≤ {TARGET_MS:.0f} ms), {f['hits']} hits, other output: {f['other_output']}"
        for name, f in figures.items())


if __name__ == "__main__":
    print(report(measure()))
