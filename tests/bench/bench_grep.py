"""Benchmark of the grep tool against raw ripgrep on a large real tree.

Run as ``python tests/bench/bench_grep.py [--repeat N] [--python]``. The tree is the
interpreter's site-packages (or its stdlib when that is small or missing), chosen at run time.
For each search the grep tool (rg engine, a fresh session each call) and a raw ``rg`` run that
does the same search (output to a pipe, read fully) are timed alternately; medians are printed
with their ratio (target: the tool within 1.3x of raw rg) and, as the spread, the quartiles of
the per-pair ratios. For files_with_matches, raw ``rg --sortr=modified`` (newest first, the
order the tool returns, but single-threaded) is timed too, and the tool's first page is checked
against its order. ``--python`` adds the pure-Python engine for reference.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
import statistics
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agent_ext.core import ExecControl, ToolContext, ToolResult  # noqa: E402
from agent_ext.tools._rg import find_rg  # noqa: E402
from agent_ext.tools.grep import GrepTool  # noqa: E402

#: (label, tool arguments, raw rg arguments): the same search both ways.
SEARCHES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("files: 'def main'", {"pattern": "def main"}, ["-l", "def main"]),
    ("files: 'import'", {"pattern": "import"}, ["-l", "import"]),
    ("files: -i 'deprecated', *.py", {"pattern": "deprecated", "-i": True, "glob": "*.py"},
     ["-l", "-i", "-g", "*.py", "deprecated"]),
    ("content: 'class \\w+Error\\('", {"pattern": r"class \w+Error\(", "output_mode": "content"},
     ["-n", r"class \w+Error\("]),
    ("content: 'import'", {"pattern": "import", "output_mode": "content"}, ["-n", "import"]),
    ("content -C2: 'TODO'", {"pattern": "TODO", "output_mode": "content", "-C": 2},
     ["-n", "-C2", "TODO"]),
]


def pick_tree() -> Path:
    """site-packages when it is large enough to be a fair test, else the stdlib."""
    for key in ("purelib", "stdlib"):
        path = Path(sysconfig.get_paths()[key])
        if path.is_dir() and sum(1 for _ in itertools.islice(path.rglob("*.py"), 2000)) >= 2000:
            return path
    return Path(sysconfig.get_paths()["stdlib"])


@dataclass
class Row:
    label: str
    ours: float
    raw: float
    python: float | None
    same: bool
    #: Quartiles of ours/raw over the alternating pairs.
    spread: tuple[float, float] = (0.0, 0.0)
    #: raw ``rg --sortr=modified`` (files_with_matches only).
    sorted_raw: float | None = None

    @property
    def ratio(self) -> float:
        return self.ours / self.raw if self.raw else float("inf")


async def run_tool(root: Path, args: dict[str, Any], engine: str = "rg") -> ToolResult:
    built = GrepTool(engine=engine, timeout=600).build(args, ToolContext(cwd=root))  # type: ignore[arg-type]
    assert not isinstance(built, ToolResult), built.text
    return await built.execute(ExecControl())


def quartiles(values: list[float]) -> tuple[float, float]:
    """First and third quartiles (the range of the middle half)."""
    if len(values) < 2:
        return (values[0], values[0]) if values else (0.0, 0.0)
    q1, _, q3 = statistics.quantiles(values, n=4)
    return q1, q3


def page_order(text: str) -> list[str]:
    """The paths of the tool's files_with_matches page, in order."""
    lines = text.split("\n")
    if "---" not in lines:
        return []
    start = lines.index("---") + 1
    end = lines.index("---", start) if "---" in lines[start:] else len(lines)
    return lines[start:end]


def same_order(root: Path, page: list[str], newest: bytes) -> bool:
    """Whether the tool's page is rg's newest-first order: the same mtimes in the same order
    (files with equal mtimes may come in another order from rg), ties broken by path."""
    head = [x.decode() for x in newest.split(b"\0")[:len(page)]]
    ours = [(-(root / p).stat().st_mtime_ns, p) for p in page]
    theirs = [-(root / p).stat().st_mtime_ns for p in head]
    return ours == sorted(ours) and [m for m, _ in ours] == theirs


def run_raw(rg: str, root: Path, args: list[str]) -> bytes:
    done = subprocess.run([rg, "--no-config", "--null", *args, "."], cwd=root,
                          capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def totals(text: str) -> tuple[int, int]:
    """(matching lines or files, files) from the tool's header."""
    found = re.match(r"Found (\d+) (?:file\(s\)|matching line\(s\) in (\d+) file\(s\))", text)
    if found is None:
        return 0, 0
    return int(found[1]), int(found[2] or found[1])


def raw_totals(out: bytes, args: list[str]) -> tuple[int, int]:
    """(matching lines or files, files) from raw ``rg --null`` output."""
    if "-l" in args:
        files = {x for x in out.split(b"\0") if x}
        return len(files), len(files)
    hits = re.findall(rb"^([^\0\n]*)\0\d+:", out, re.MULTILINE)
    return len(hits), len(set(hits))


async def measure(root: Path, repeat: int, *, python: bool = False,
                  searches: list[tuple[str, dict[str, Any], list[str]]] | None = None) -> list[Row]:
    rg = find_rg()
    assert rg is not None, "the rg binary is needed"
    rows = []
    for label, args, raw_args in searches or SEARCHES:
        run_raw(rg, root, raw_args)  # warm the page cache for both
        files_mode = "-l" in raw_args
        sort_args = ["--sortr=modified", *raw_args]
        ours: list[float] = []
        raw: list[float] = []
        by_mtime: list[float] = []
        result = None
        out = newest = b""
        for _ in range(repeat):
            start = time.perf_counter()
            result = await run_tool(root, args)
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            out = run_raw(rg, root, raw_args)
            raw.append(time.perf_counter() - start)
            if files_mode:
                start = time.perf_counter()
                newest = run_raw(rg, root, sort_args)
                by_mtime.append(time.perf_counter() - start)
        assert result is not None
        py_time = None
        if python:
            start = time.perf_counter()
            await run_tool(root, args, engine="python")
            py_time = time.perf_counter() - start
        same = totals(result.text) == raw_totals(out, raw_args)
        if files_mode:
            same = same and same_order(root, page_order(result.text), newest)
        rows.append(Row(label, statistics.median(ours), statistics.median(raw), py_time, same,
                        quartiles([a / b for a, b in zip(ours, raw, strict=True)]),
                        statistics.median(by_mtime) if by_mtime else None))
    return rows


def format_rows(root: Path, rows: list[Row]) -> str:
    lines = [f"grep tool vs raw rg on {root} (medians)",
             (f"{'search':34} {'ours ms':>8} {'rg ms':>8} {'ratio':>6} {'pairs q1-q3':>11} "
              f"{'rg --sortr=modified ms':>22} {'ratio':>6} {'python ms':>10} same")]
    for r in rows:
        py = f"{r.python * 1000:10.0f}" if r.python is not None else f"{'-':>10}"
        if r.sorted_raw is not None:
            by_mtime = f"{r.sorted_raw * 1000:22.1f} {r.ours / r.sorted_raw:6.2f}"
        else:
            by_mtime = f"{'-':>22} {'-':>6}"
        lines.append(f"{r.label:34} {r.ours * 1000:8.1f} {r.raw * 1000:8.1f} {r.ratio:6.2f} "
                     f"{r.spread[0]:5.2f}-{r.spread[1]:<5.2f} {by_mtime} {py} "
                     f"{'yes' if r.same else 'NO'}")
    overall = statistics.median(r.ratio for r in rows)
    lines.append(f"median ratio {overall:.2f}, worst {max(r.ratio for r in rows):.2f} (target: "
                 "each <= 1.30 against plain rg; the --sortr=modified column is the same "
                 "newest-first order the tool returns)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--python", action="store_true", help="also time the Python engine")
    parser.add_argument("--root", type=Path, default=None)
    opts = parser.parse_args()
    root = opts.root or pick_tree()
    rows = asyncio.run(measure(root, opts.repeat, python=opts.python))
    print(format_rows(root, rows))


if __name__ == "__main__":
    main()
