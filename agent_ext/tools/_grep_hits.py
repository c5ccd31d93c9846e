"""A search's results stored by column: one list entry per matching file, not one object.

A broad search finds tens of thousands of files. An object per file (and a tuple per sort key)
made the garbage collector run dozens of times per search, costing as much as parsing rg's
output; lists of str and int hold nothing it tracks. The grep report sorts indices into these
columns and turns only the files on its page into lines.
"""

from __future__ import annotations

import os

from ._pygrep import Line, ScanResult, numbered_lines


class Found:
    """Per-file columns (path, mtime, counts, where the lines are) and how the scan ended.

    Content lines are either ``parsed`` already (by index) or kept as rg's raw ``N:text`` /
    ``N-text`` lines in ``raws[i][starts[i]:stops[i]]`` and parsed on first use.
    """

    __slots__ = ("binary", "counts", "errors", "mtimes", "parsed", "paths", "raws", "sizes",
                 "starts", "stopped", "stops")

    def __init__(self, errors: list[str] | None = None, stopped: str | None = None) -> None:
        self.paths: list[str] = []
        #: Modification time in ns, 0 when unknown.
        self.mtimes: list[int] = []
        #: Matching lines (matches in multiline mode).
        self.counts: list[int] = []
        #: Content mode only (else they may stay empty): output lines (matches and context),
        #: and where they are.
        self.sizes: list[int] = []
        self.raws: list[bytes] = []
        self.starts: list[int] = []
        self.stops: list[int] = []
        self.parsed: dict[int, list[Line]] = {}
        #: Indices of binary files (matched, but no lines to show).
        self.binary: set[int] = set()
        self.errors: list[str] = errors if errors is not None else []
        #: Why the scan stopped early: "timeout", "cancelled" or "output" (too much output).
        self.stopped = stopped

    def __len__(self) -> int:
        return len(self.paths)

    def add(self, path: str, count: int, *, size: int = 0, raw: bytes = b"", start: int = 0,
            stop: int = 0, binary: bool = False, mtime: int | None = None) -> None:
        """Append one file (stat-ed here unless ``mtime`` is given)."""
        if binary:
            self.binary.add(len(self.paths))
        self.paths.append(path)
        self.mtimes.append(mtime_ns(path) if mtime is None else mtime)
        self.counts.append(count)
        self.sizes.append(size)
        self.raws.append(raw)
        self.starts.append(start)
        self.stops.append(stop)

    def extend(self, paths: list[str], counts: list[int], *, sizes: list[int] | None = None,
               raw: bytes = b"", starts: list[int] | None = None,
               stops: list[int] | None = None) -> None:
        """Append files in bulk, stat-ing them; content mode gives where their lines are (all in
        ``raw``), the other modes give nothing more."""
        self.paths += paths
        self.counts += counts
        if sizes is not None and starts is not None and stops is not None:
            self.sizes += sizes
            self.raws += [raw] * len(paths)
            self.starts += starts
            self.stops += stops
        mtimes = self.mtimes
        for path in paths:
            try:
                mtimes.append(os.stat(path).st_mtime_ns)  # noqa: PTH116  (hot loop)
            except OSError:
                mtimes.append(0)

    def lines(self, index: int) -> list[Line]:
        """The content lines of file ``index``, parsed now if they were kept raw."""
        found = self.parsed.get(index)
        if found is None:
            if index >= len(self.raws):
                return []
            raw = self.raws[index][self.starts[index]:self.stops[index]]
            found = self.parsed[index] = numbered_lines(raw)
        return found

    @classmethod
    def from_scan(cls, result: ScanResult) -> Found:
        """The Python engine's (or an internal URL's) results, with their files' mtimes."""
        found = cls(result.errors, result.stopped)
        for hits in result.files:
            if hits.parsed is not None:
                found.parsed[len(found)] = hits.parsed
            found.add(hits.path, hits.count, size=hits.size, raw=hits.raw, start=hits.start,
                      stop=hits.stop, binary=hits.binary, mtime=result.mtimes.get(hits.path))
        return found


def mtime_ns(path: str) -> int:
    """Modification time in ns (0 when unknown, or for an internal URL)."""
    if "://" in path:
        return 0
    try:
        return os.stat(path).st_mtime_ns  # noqa: PTH116  (thousands of calls: no Path objects)
    except OSError:
        return 0
