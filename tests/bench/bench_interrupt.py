"""How long Kernel → Interrupt takes to end a ``%%agent`` cell that waits for an approval.

For several rounds in one kernel: a scripted run asks for approval, the client (acting as the
frontend) sends only ``ready``, interrupts 0.5 s later, and times the interrupt to the cell's
reply. Without the run's 250 ms ticker this took as long as the next kernel message (tens of
seconds). Target: ≤ 1 s.

Run: ``python tests/bench/bench_interrupt.py``
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_S = 1.0


def measure(rounds: int = 5) -> dict[str, float]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.kernel.cells import scripted_agent
    from tests.kernel.harness import running_kernel
    from tests.kernel.test_interrupt_kernel import interrupt_during_approval

    latencies = []
    with tempfile.TemporaryDirectory() as tmp, running_kernel(Path(tmp) / "home",
                                                             Path(tmp)) as kernel:
        kernel.ok("%load_ext agent_ext")
        for _ in range(rounds):
            kernel.ok(scripted_agent("note.txt"))
            run, latency = interrupt_during_approval(kernel)
            assert run.status == "error", run.text
            latencies.append(latency)
    return {"median_s": statistics.median(latencies), "max_s": max(latencies),
            "rounds": float(rounds)}


def report(figures: dict[str, float]) -> str:
    return (f"interrupt during an approval wait → cell ended: median {figures['median_s']:.2f} s,"
            f" worst {figures['max_s']:.2f} s over {figures['rounds']:.0f} rounds "
            f"(target ≤ {TARGET_S:.0f} s)")


if __name__ == "__main__":
    print(report(measure()))
