"""Shell processes: start one in its own session, find its whole tree, and kill all of it.

A command's children may outlive it, leave its process group with ``setsid`` or be re-parented
to init; a timeout or a cancel must still stop every one of them, in bounded time. Each command
gets a unique tag in its environment, which every descendant inherits, so even orphans that
left the group are found (through /proc on Linux, ``ps -E`` on macOS).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agent_ext.core.budget import TRUNCATION_MARKER

from ._cgroup import Group

TAG_ENV = "AGENT_EXT_SHELL_TAG"
POSIX = os.name == "posix"
LINUX = sys.platform.startswith("linux")
CHUNK = 65_536
#: The pause per chunk's worth read for a paced log past its cap (at most ~3 MB/s): a background
#: job's output there is only kept as a rolling end, and read at full speed a flood (``yes``)
#: would keep two cores and the kernel's event loop busy for as long as it runs. The command
#: itself just waits on its full pipe, as it would behind a paused terminal.
PACED_NAP = 0.02
#: The saved log of one command keeps at most this many characters (its start and its end);
#: ``AGENT_EXT_SHELL_LOG_MB`` sets another size.
LOG_CAP_CHARS = 64 * 1024 * 1024
#: Of the cap, the end of the output kept (in memory until the log closes).
LOG_TAIL_SHARE = 16


def log_cap() -> int:
    """The saved-log cap in characters, from ``AGENT_EXT_SHELL_LOG_MB`` when it is set."""
    raw = os.environ.get("AGENT_EXT_SHELL_LOG_MB", "").strip()
    try:
        megabytes = float(raw) if raw else 0.0
    except ValueError:
        megabytes = 0.0
    return int(megabytes * 1024 * 1024) if megabytes > 0 else LOG_CAP_CHARS


@dataclass(frozen=True)
class ProcInfo:
    """One row of the process table."""

    pid: int
    ppid: int
    pgid: int
    zombie: bool


def shell_argv(command: str) -> list[str]:
    """``bash -c command``; ``sh -c`` where bash is missing; ``cmd /c`` on Windows without bash."""
    for candidate in ("/bin/bash", "/usr/bin/bash", shutil.which("bash")):
        if candidate and os.access(candidate, os.X_OK):
            return [candidate, "-c", command]
    if POSIX:
        return ["/bin/sh", "-c", command]
    return [os.environ.get("COMSPEC", "cmd.exe"), "/d", "/s", "/c", command]


def spawn(command: str, cwd: Path, log: OutputLog,
          on_done: Callable[[RunningProcess], None] | None = None) -> RunningProcess:
    """Start ``command`` in a new session, stdin closed, stdout+stderr merged into ``log``."""
    tag = uuid.uuid4().hex
    env = {**os.environ, TAG_ENV: tag}
    if POSIX:
        group = Group.make(tag) if LINUX else None
        argv = shell_argv(command) if group is None else group.entering(shell_argv(command))
        popen = subprocess.Popen(argv, cwd=cwd, env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        return RunningProcess(popen, tag, log, on_done, group)
    popen = subprocess.Popen(shell_argv(command), cwd=cwd, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT,
                             creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0))
    return RunningProcess(popen, tag, log, on_done)


async def spawn_async(command: str, cwd: Path, log: OutputLog,
                      on_done: Callable[[RunningProcess], None] | None = None) -> RunningProcess:
    """``spawn`` in a worker thread; a process started after the caller was cancelled is killed."""
    started = asyncio.ensure_future(asyncio.to_thread(spawn, command, cwd, log, on_done))
    try:
        return await asyncio.shield(started)
    except asyncio.CancelledError:
        started.add_done_callback(_kill_orphan)
        raise


def _kill_orphan(started: asyncio.Future[RunningProcess]) -> None:
    if not started.cancelled() and started.exception() is None:
        started.result().kill_soon()


class RunningProcess:
    """A started command: its process, its output log, and a thread draining the pipe.

    The thread reads until every holder of the pipe has closed it, reaps the process, calls
    ``on_done`` (from that thread) and only then sets ``done``.
    """

    def __init__(self, popen: subprocess.Popen[bytes], tag: str, log: OutputLog,
                 on_done: Callable[[RunningProcess], None] | None,
                 group: Group | None = None) -> None:
        self.popen = popen
        #: The command's control group, where the system allows one (see ``_cgroup``).
        self.group = group
        self.pid = popen.pid
        self.tag = tag
        self.log = log
        self.started = time.monotonic()
        self.ended: float | None = None
        self.returncode: int | None = None
        self.done = threading.Event()
        self._on_done = on_done
        self._lock = threading.Lock()
        self._waiters: list[Callable[[], None]] = []
        self._thread = threading.Thread(target=self._pump, daemon=True,
                                        name=f"agent_ext-shell-{self.pid}")
        self._thread.start()

    def _pump(self) -> None:
        stream = self.popen.stdout
        try:
            while stream is not None:
                chunk = os.read(stream.fileno(), CHUNK)
                if not chunk:
                    break
                self.log.feed(chunk)
                if self.log.paced and self.log.capped:
                    time.sleep(PACED_NAP * len(chunk) / CHUNK)
        except (OSError, ValueError):
            pass
        finally:
            self.log.close()
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
            self.returncode = self.popen.wait()
            self.ended = time.monotonic()
            if self.group is not None:
                self.group.remove()  # kept while members are left, for kill() to find them
            if self._on_done is not None:
                with contextlib.suppress(Exception):
                    self._on_done(self)
            with self._lock:
                self.done.set()
                waiters, self._waiters = self._waiters, []
            for wake in waiters:
                with contextlib.suppress(RuntimeError):
                    wake()

    @property
    def elapsed(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    async def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for ``done`` without blocking the loop."""
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_resolve, woken)

        with self._lock:
            if self.done.is_set():
                return True
            self._waiters.append(wake)
        try:
            await asyncio.wait_for(woken, timeout)
        except asyncio.TimeoutError:
            with self._lock:
                if wake in self._waiters:
                    self._waiters.remove(wake)
        return self.done.is_set()

    def exited(self) -> bool:
        """Whether the shell itself has exited (descendants may still hold its output)."""
        return self.popen.poll() is not None

    def kill(self, grace: float = 2.0) -> set[int]:
        """Kill the whole tree (blocking, bounded) and wait briefly for the pipe to drain."""
        survivors = kill_tree(self.pid, self.tag, grace=grace)
        if self.group is not None:
            # Whatever left the tree and cleared its environment is still in the group.
            survivors |= self.group.kill()
            self.group.remove()
        self.done.wait(timeout=2.0)
        return survivors

    def kill_soon(self, grace: float = 2.0) -> None:
        """Start killing the tree now and finish in a daemon thread (for cancelled tasks)."""
        signal_tree(self.pid, self.tag, _TERM)
        threading.Thread(target=self.kill, args=(grace,), daemon=True,
                         name=f"agent_ext-kill-{self.pid}").start()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_TERM = getattr(signal, "SIGTERM", 15)
_KILL = getattr(signal, "SIGKILL", 9)


def process_table() -> dict[int, ProcInfo]:
    """Every process visible to us, by pid; empty where neither /proc nor ``ps`` works."""
    if LINUX and Path("/proc").is_dir():
        return _proc_table()
    if POSIX:
        return _ps_table()
    return {}


def _proc_table() -> dict[int, ProcInfo]:
    table: dict[int, ProcInfo] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        fields = raw[raw.rfind(b")") + 2:].split()
        if len(fields) < 3:
            continue
        pid = int(entry.name)
        table[pid] = ProcInfo(pid, int(fields[1]), int(fields[2]), fields[0] in (b"Z", b"X"))
    return table


def _ps_table() -> dict[int, ProcInfo]:
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,pgid=,stat="], capture_output=True,
                             text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    table: dict[int, ProcInfo] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].isdigit():
            pid = int(parts[0])
            table[pid] = ProcInfo(pid, int(parts[1]), int(parts[2]), parts[3].startswith("Z"))
    return table


def tagged(tag: str, pids: Iterable[int]) -> set[int]:
    """The processes whose environment carries ``tag`` (our descendants, orphans included)."""
    needle = f"{TAG_ENV}={tag}"
    if LINUX:
        marker = needle.encode() + b"\0"
        found = set()
        for pid in pids:
            try:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    if marker in fh.read():
                        found.add(pid)
            except OSError:
                continue
        return found
    if POSIX:
        try:
            out = subprocess.run(["ps", "-A", "-E", "-ww", "-o", "pid=,command="],
                                 capture_output=True, text=True, timeout=5, check=False).stdout
        except (OSError, subprocess.SubprocessError):
            return set()
        return {int(line.split()[0]) for line in out.splitlines()
                if needle in line and line.split()[0].isdigit()}
    return set()


def tree(root: int, tag: str, known: set[int] | None = None) -> tuple[set[int], set[int]]:
    """Live processes of a command's tree, and the process groups they lead or belong to.

    Seeds: the root, its process group, every tagged process and ``known`` pids; then every
    descendant of a seed. Our own process and its group are never included.
    """
    table = process_table()
    if not table:  # no process table: the root's group is all that can be reached
        return ({root} if _exists(root) else set()), {root}
    me, my_group = os.getpid(), (os.getpgrp() if POSIX else -1)
    seeds = {root, *(known or ())} | {p.pid for p in table.values() if p.pgid == root}
    seeds |= tagged(tag, table)
    children: dict[int, list[int]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info.pid)
    found: set[int] = set()
    stack = [p for p in seeds if p in table]
    while stack:
        pid = stack.pop()
        if pid in found or pid in (0, 1, me):
            continue
        found.add(pid)
        stack.extend(children.get(pid, ()))
    alive = {p for p in found if not table[p].zombie}
    groups = {table[p].pgid for p in alive} | {root}
    return alive, {g for g in groups if g > 1 and g != my_group}


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def signal_tree(root: int, tag: str, sig: int, known: set[int] | None = None) -> set[int]:
    """Send ``sig`` to every live process of the tree and to its groups; the pids signalled."""
    if not POSIX:
        _windows_kill(root)
        return set()
    pids, groups = tree(root, tag, known)
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, sig)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
        if sig == _TERM:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)  # a stopped process must wake to see SIGTERM
    return pids


def kill_tree(root: int, tag: str, grace: float = 2.0, hard: float = 2.0) -> set[int]:
    """SIGTERM the tree, SIGKILL what is left after ``grace``; the pids still alive after ``hard``.

    Blocking and bounded (about ``grace + hard`` seconds at most); run it in a thread.
    """
    if not POSIX:
        _windows_kill(root)
        return set()
    known = signal_tree(root, tag, _TERM)
    if _wait_gone(root, tag, known, grace, _TERM):
        return set()
    known |= signal_tree(root, tag, _KILL, known)
    if _wait_gone(root, tag, known, hard, _KILL):
        return set()
    return tree(root, tag, known)[0]


def _wait_gone(root: int, tag: str, known: set[int], limit: float, sig: int) -> bool:
    """Poll until the tree is gone (True) or ``limit`` passes; newcomers get ``sig`` too."""
    deadline = time.monotonic() + limit
    while True:
        alive, _ = tree(root, tag, known)
        if not alive:
            return True
        if time.monotonic() >= deadline:
            return False
        if alive - known:
            known |= signal_tree(root, tag, sig, known)
        time.sleep(0.05)


def _windows_kill(root: int) -> None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(root)], capture_output=True,
                       timeout=10, check=False)


class OutputLog:
    """A process's output with bounded memory: whole while small, then head + tail + a file.

    Up to ``head_chars + tail_chars`` characters are kept whole. Past that the first
    ``head_chars`` and the last ``tail_chars`` stay in memory and everything goes to ``path``
    (written from the start when ``eager``), so a 10 MB output never sits whole in memory.
    The file itself is capped at ``file_cap`` characters: past it, it keeps the output's start
    and, when the log closes, its last ``file_cap / LOG_TAIL_SHARE`` characters, with a line
    saying how much was left out in between. Offsets are character counts from the start of
    the output. Thread-safe.
    """

    def __init__(self, path: Path, *, head_chars: int = 5_000, tail_chars: int = 20_000,
                 eager: bool = False, file_cap: int | None = None, paced: bool = False) -> None:
        self.path = path
        #: Past the cap, the reader slows down (see PACED_NAP); for background jobs.
        self.paced = paced
        self.head_chars = head_chars
        self.tail_chars = tail_chars
        self.file_cap = file_cap if file_cap is not None else log_cap()
        self.total = 0
        self.cut = False
        #: The saved file holds the start and end only: the output was longer than the cap.
        self.capped = False
        self.file_error: str | None = None
        self._written = 0
        self._file_tail: list[str] = []
        self._file_tail_size = 0
        self._head = ""
        self._tail = ""
        self._file: TextIO | None = None
        self._opened = False
        self._lock = threading.Lock()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        if eager:
            self._open()

    @property
    def saved(self) -> bool:
        """Whether ``path`` holds the output (all of it, or its start and end when capped)."""
        return self._opened and self.file_error is None

    def feed(self, data: bytes) -> None:
        self._append(self._decoder.decode(data))

    def close(self) -> None:
        """Flush the decoder and close the file; the log stays readable."""
        self._append(self._decoder.decode(b"", final=True))
        with self._lock:
            if self._file is not None:
                with contextlib.suppress(OSError):
                    if self.capped:
                        tail = "".join(self._file_tail)
                        skipped = self.total - self._written - len(tail)
                        self._file.write(f"\n{TRUNCATION_MARKER} ({skipped:,} characters left "
                                         f"out: the saved log keeps {self.file_cap:,})\n")
                        self._file.write(tail)
                    self._file.close()
                self._file = None
                self._file_tail = []

    def _append(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            if (self._file is None and not self.cut and self.file_error is None
                    and len(self._head) + len(self._tail) + len(text)
                    > self.head_chars + self.tail_chars):
                self._open()
            if self._file is not None:
                self._to_file(self._file, text)
            self.total += len(text)
            room = self.head_chars - len(self._head)
            if room > 0:
                self._head += text[:room]
                text = text[room:]
            self._tail += text
            if len(self._tail) > self.tail_chars:
                self._tail = self._tail[-self.tail_chars:]
                self.cut = True

    def _to_file(self, file: TextIO, text: str) -> None:
        """Write to the saved log, keeping only its start and a rolling end past the cap."""
        keep_tail = self.file_cap // LOG_TAIL_SHARE
        room = self.file_cap - keep_tail - self._written
        if room > 0:
            try:
                file.write(text[:room])
            except OSError as exc:
                self.file_error = str(exc)
            self._written += min(room, len(text))
            text = text[room:]
        if not text:
            return
        self.capped = True
        self._file_tail.append(text)
        self._file_tail_size += len(text)
        while self._file_tail_size - len(self._file_tail[0]) >= keep_tail:
            self._file_tail_size -= len(self._file_tail.pop(0))
        if self._file_tail_size > 2 * keep_tail:
            joined = "".join(self._file_tail)[-keep_tail:]
            self._file_tail, self._file_tail_size = [joined], len(joined)

    def _open(self) -> None:
        try:
            self._file = open(self.path, "w", encoding="utf-8", newline="")  # noqa: SIM115
            self._opened = True
            self._to_file(self._file, self._head + self._tail)
        except OSError as exc:
            self.file_error = str(exc)
            self._file = None

    def snapshot(self) -> str:
        """Everything, or the head, a cut marker and the tail (cut at line ends when close)."""
        with self._lock:
            if not self.cut:
                return self._head + self._tail
            head, tail = self._head, self._tail
        end = head.rfind("\n")
        if end >= len(head) // 2:
            head = head[:end]
        start = tail.find("\n")
        if 0 <= start < len(tail) // 2:
            tail = tail[start + 1:]
        skipped = self.total - len(head) - len(tail)
        return f"{head}\n{TRUNCATION_MARKER} ({skipped:,} characters omitted)\n{tail}"

    def since(self, offset: int, limit: int) -> tuple[str, int, int]:
        """Output from ``offset``: (text, end offset, characters skipped to fit ``limit``)."""
        with self._lock:
            total = self.total
            offset = max(0, min(offset, total))
            start = max(offset, total - max(0, limit))
            if not self.cut:
                text = (self._head + self._tail)[start:]
            else:
                tail_start = total - len(self._tail)
                start = max(start, tail_start)
                text = self._tail[start - tail_start:]
            return text, total, start - offset

    def tail(self, chars: int) -> str:
        """The last ``chars`` characters (at most what is kept in memory)."""
        return self.since(self.total - chars, chars)[0]
