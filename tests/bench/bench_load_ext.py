"""What ``%load_ext agent_ext`` adds to a fresh kernel, and what it imports.

For several fresh kernels, times ``%load_ext agent_ext`` inside the kernel (the extension's
own cost, messaging excluded) and as a cell round trip against an empty cell, and lists the
heavy modules loaded afterwards (none of the agent, the models or the widgets should be).
Target: ≤ 0.3 s added. Then the first ``%%agent`` cell (the demo replay, no MCP server) in that
fresh kernel, as a round trip against an empty cell: everything the first prompt imports and
builds. The bench answers each widget's ``ready`` as a page that renders it does; without that
the cell also waits ``AgentExt.ready_timeout`` to learn that no page is there, which is the
headless cost, not the prompt's. Target: ≤ 0.8 s.

Run: ``python tests/bench/bench_load_ext.py``
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TARGET_S = 0.3
FIRST_AGENT_TARGET_S = 0.8
HEAVY = ("agent_ext.agent", "agent_ext.models.openai_chat", "openai", "anthropic", "anywidget",
         "agent_ext.jupyter.widgets", "mcp", "jsonschema")
PROBE = """
import sys, time
t0 = time.perf_counter()
get_ipython().run_line_magic("load_ext", "agent_ext")
print(time.perf_counter() - t0)
print(",".join(m for m in {heavy!r} if m in sys.modules))
"""


def measure(rounds: int = 5) -> dict[str, object]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.kernel.harness import KernelSession, running_kernel, widget_model

    def page(kernel: KernelSession, msg: dict[str, Any]) -> None:
        if widget_model(msg):
            kernel.send_custom(msg["content"]["comm_id"], {"type": "ready"})

    inside, round_trip, first_agent, heavy = [], [], [], set()
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp, running_kernel(Path(tmp) / "home",
                                                                 Path(tmp)) as kernel:
            kernel.ok("pass")
            empty = kernel.ok("pass").seconds
            lines = kernel.ok(PROBE.format(heavy=HEAVY)).stdout.splitlines()
            inside.append(float(lines[0]))
            heavy.update(m for m in (lines[1] if len(lines) > 1 else "").split(",") if m)
            kernel.ok("%unload_ext agent_ext")
            loaded = kernel.ok("%load_ext agent_ext").seconds  # modules cached: messaging only
            round_trip.append(max(loaded - empty, 0.0))
            kernel.ok("%agent model demo")
            agent = kernel.ok("%%agent\nsay hello", on_message=page).seconds
            first_agent.append(max(agent - empty, 0.0))
    return {"in_kernel_s": statistics.median(inside), "max_in_kernel_s": max(inside),
            "reload_round_trip_s": statistics.median(round_trip),
            "first_agent_s": statistics.median(first_agent), "heavy_modules": sorted(heavy)}


def report(figures: dict[str, object]) -> str:
    return (f"%load_ext agent_ext in a fresh kernel: median {figures['in_kernel_s']:.3f} s, "
            f"worst {figures['max_in_kernel_s']:.3f} s (target ≤ {TARGET_S} s); "
            f"reload round trip over an empty cell {figures['reload_round_trip_s']:.3f} s; "
            f"heavy modules imported: {figures['heavy_modules'] or 'none'}; first %%agent cell "
            f"(demo, no MCP server) over an empty cell: median {figures['first_agent_s']:.3f} s "
            f"(target ≤ {FIRST_AGENT_TARGET_S} s)")


if __name__ == "__main__":
    print(report(measure()))
