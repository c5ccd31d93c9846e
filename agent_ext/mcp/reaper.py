"""A watcher that kills the stdio servers' process groups when the kernel dies unannounced.

A kernel stopped normally kills its servers itself (``aclose``, ``stop_now``, ``atexit``). A
kernel killed with SIGKILL runs no code: its servers see their stdin close and most exit, but
what they started lives on. The watcher is a small separate process, in a session of its own,
that reads ``+pgid`` / ``-pgid`` lines from a pipe whose other end only the kernel holds. When
the pipe closes without the closing line ``.``, the kernel is gone, and the watcher sends
SIGTERM and then SIGKILL to every group still registered. A process forked from the kernel
closes its copy of the pipe at once, so it does not keep the watcher waiting. POSIX only;
elsewhere it does nothing. Descendants that left the server's process group are out of its
reach.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import weakref
from typing import IO

# Run with ``python -I -S -c WATCHER GRACE``: the standard library only, nothing of agent_ext.
# Group numbers 0 and 1 are never taken (killpg(0) would signal the watcher's own group).
WATCHER = """
import os, signal, sys, time
grace = float(sys.argv[1])
groups, clean = set(), False
for line in sys.stdin:
    line = line.strip()
    if line == ".":
        clean = True
        break
    if line[:1] in "+-" and line[1:].isdigit() and int(line[1:]) > 1:
        (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
if not clean:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for group in list(groups):
            try:
                os.killpg(group, sig)
            except OSError:
                groups.discard(group)
        if groups and sig == signal.SIGTERM:
            time.sleep(grace)
"""
#: Seconds between SIGTERM and SIGKILL to the groups of a kernel that died.
GRACE = 0.5
#: A process forked from the kernel must not keep the watcher's pipe open: every reaper
#: drops its end in the child.
_REAPERS: weakref.WeakSet[Reaper] = weakref.WeakSet()


class Reaper:
    """The kernel's end of the watcher: started on the first ``add``, told of each group."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        _REAPERS.add(self)

    @property
    def pid(self) -> int | None:
        """The watcher's pid while it runs."""
        return self._process.pid if self._process is not None else None

    def add(self, pgid: int) -> None:
        """Watch process group ``pgid`` (a server started in a session of its own)."""
        if pgid > 1:
            self._send(f"+{pgid}", start=True)

    def remove(self, pgid: int) -> None:
        """Stop watching ``pgid``: its server ended, and the number may be reused."""
        self._send(f"-{pgid}", start=False)

    def close(self) -> None:
        """Let the watcher go without killing anything (every server was stopped)."""
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        self._write(process.stdin, ".")
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        # It exits at once on "."; the wait is short so an async caller is not held up.
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.5)

    def _forget_in_child(self) -> None:
        """In a forked child: close this copy of the pipe without a word (no lock: another
        thread of the parent may have held it at the fork)."""
        process, self._process = self._process, None
        self._lock = threading.Lock()
        if process is not None and process.stdin is not None:
            # Point the descriptor at /dev/null: the pipe is released, and the file object
            # still owns a descriptor it may close.
            with contextlib.suppress(OSError, ValueError):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, process.stdin.fileno())
                os.close(null)

    def _send(self, line: str, *, start: bool) -> None:
        if sys.platform == "win32":
            return
        with self._lock:
            if self._process is not None and self._process.poll() is not None:
                self._process = None
            if self._process is None:
                if not start:
                    return
                self._process = _start_watcher()
            if self._process is not None:
                self._write(self._process.stdin, line)

    @staticmethod
    def _write(stream: IO[bytes] | None, line: str) -> None:
        if stream is None:
            return
        with contextlib.suppress(OSError, ValueError):
            stream.write(line.encode() + b"\n")
            stream.flush()


def _forget_all_in_child() -> None:
    for reaper in list(_REAPERS):
        reaper._forget_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_all_in_child)


def _start_watcher() -> subprocess.Popen[bytes] | None:
    """The watcher process, or None when it cannot be started (the servers still run)."""
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", WATCHER, str(GRACE)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
    except OSError:
        return None
