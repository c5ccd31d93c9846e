"""A watcher that kills the stdio servers' process groups when the kernel dies unannounced.

A kernel stopped normally kills its servers itself (``aclose``, ``stop_now``, ``atexit``). A
kernel killed with SIGKILL runs no code: its servers see their stdin close and most exit, but
what they started lives on. The watcher is a small separate process, in a session of its own,
that reads ``+pgid`` / ``-pgid`` lines from a pipe whose other end only the kernel holds. When
the pipe closes without the closing line ``.``, the kernel is gone, and the watcher sends
SIGTERM and then SIGKILL to every group still registered. POSIX only; elsewhere it does
nothing. Descendants that left the server's process group are out of its reach.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from typing import IO

# Run with ``python -c``: the standard library only, nothing of agent_ext.
WATCHER = """
import os, signal, sys, time
groups, clean = set(), False
for line in sys.stdin:
    line = line.strip()
    if line == ".":
        clean = True
        break
    if line[:1] in "+-" and line[1:].isdigit():
        (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
if not clean:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for group in list(groups):
            try:
                os.killpg(group, sig)
            except OSError:
                groups.discard(group)
        if groups and sig == signal.SIGTERM:
            time.sleep(GRACE)
"""
GRACE = 0.5


class Reaper:
    """The kernel's end of the watcher: started on the first ``add``, told of each group."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The watcher's pid while it runs."""
        return self._process.pid if self._process is not None else None

    def add(self, pgid: int) -> None:
        """Watch process group ``pgid`` (a server started in a session of its own)."""
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
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2.0)

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


def _start_watcher() -> subprocess.Popen[bytes] | None:
    """The watcher process, or None when it cannot be started (the servers still run)."""
    try:
        return subprocess.Popen(
            [sys.executable, "-S", "-c", WATCHER.replace("GRACE", repr(GRACE))],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
    except OSError:
        return None
