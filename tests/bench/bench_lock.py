"""What the per-file write lock costs an edit: the lock alone, and a whole small write with and
without it, in the same run (target: the lock's median cost per edit at most 1 ms).

Run: ``python tests/bench/bench_lock.py``
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from agent_ext.fs.atomic import atomic_write
from agent_ext.fs.lock import file_lock


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure(rounds: int = 400) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "f.txt"
        target.write_text("x\n" * 200)
        data = b"y\n" * 200
        lock_only, plain, locked = [], [], []
        for _ in range(rounds):
            start = time.perf_counter()
            with file_lock(target):
                pass
            lock_only.append(time.perf_counter() - start)
            start = time.perf_counter()
            atomic_write(target, data)
            plain.append(time.perf_counter() - start)
            start = time.perf_counter()
            with file_lock(target):
                atomic_write(target, data)
            locked.append(time.perf_counter() - start)
    return {"lock_ms": _median_ms(lock_only), "write_ms": _median_ms(plain),
            "locked_write_ms": _median_ms(locked)}


def report(figures: dict[str, float]) -> str:
    ratio = figures["locked_write_ms"] / figures["write_ms"] if figures["write_ms"] else 0.0
    return (f"file lock: {figures['lock_ms']:.3f} ms median per edit (target <= 1 ms); a small "
            f"atomic write {figures['write_ms']:.3f} ms, with the lock "
            f"{figures['locked_write_ms']:.3f} ms ({ratio:.2f}x)")


if __name__ == "__main__":
    print(report(measure()))
