"""Benchmark of the fs layer: what the read-before-write machinery costs per tool call.

Run as ``python tests/bench/bench_fs.py``. Prints the median time of atomic writes (against a
plain in-place write), read-cache and prior-read checks, path parsing, and text decoding and
re-encoding of a 1 MB CRLF file and a mixed-ending file after a one-line edit.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent_ext.fs import (  # noqa: E402
    ReadCache,
    atomic_write,
    check_prior_read,
    decode_text,
)
from agent_ext.urls import parse_path_arg  # noqa: E402


def _median_us(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        target = folder / "a.py"
        small, big = b"x = 1\n" * 100, b"y = 2\n" * 175_000
        rows = [
            ("plain write, 600 B", _median_us(lambda: target.write_bytes(small), 200)),
            ("atomic_write, 600 B", _median_us(lambda: atomic_write(target, small), 200)),
            ("plain write, 1 MB", _median_us(lambda: target.write_bytes(big), 30)),
            ("atomic_write, 1 MB", _median_us(lambda: atomic_write(target, big), 30)),
        ]
        cache = ReadCache()
        cache.record_read(target, full=True, cacheable=True)
        rows += [
            ("ReadCache.check", _median_us(lambda: cache.check(target), 2000)),
            ("check_prior_read", _median_us(
                lambda: check_prior_read(cache, target, "editing"), 2000)),
            ("parse_path_arg a.py:10-20", _median_us(
                lambda: parse_path_arg("a.py:10-20", folder), 2000)),
        ]
        crlf = b"line of some code here\r\n" * 42_000
        tf = decode_text(crlf)
        edited = tf.text.replace("line of", "LINE OF", 1)
        mixed = decode_text(b"line of some code here\n" * 21_000 + crlf[: len(crlf) // 2])
        mixed_edit = mixed.text.replace("line of", "LINE OF", 1)
        rows += [
            ("decode 1 MB CRLF", _median_us(lambda: decode_text(crlf), 20)),
            ("encode 1 MB CRLF after an edit", _median_us(lambda: tf.encode(edited), 20)),
            ("encode 1 MB mixed after an edit", _median_us(lambda: mixed.encode(mixed_edit), 20)),
        ]
    width = max(len(name) for name, _ in rows)
    for name, us in rows:
        print(f"{name:<{width}}  {us:>10.1f} µs")


if __name__ == "__main__":
    main()
