"""The watcher that kills MCP servers' process groups when the kernel is killed outright."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from agent_ext.mcp.procs import alive, group_alive

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
              pytest.mark.timeout(60)]

OWNER = """
import sys, time
from agent_ext.mcp.reaper import Reaper
reaper = Reaper()
for arg in sys.argv[1:]:
    (reaper.remove if arg.startswith("-") else reaper.add)(abs(int(arg)))
if "--close" in sys.stdin.readline():
    reaper.close()
print(reaper.pid, flush=True)
time.sleep(60)
"""


def group() -> subprocess.Popen[bytes]:
    """A process group of two sleeping processes, like a server and the child it started."""
    return subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(60)']); time.sleep(60)")], start_new_session=True)


def owner(*args: str, close: bool = False) -> tuple[subprocess.Popen[str], int | None]:
    proc = subprocess.Popen([sys.executable, "-c", OWNER, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("--close\n" if close else "stay\n")
    proc.stdin.flush()
    line = proc.stdout.readline().strip()
    return proc, None if line == "None" else int(line)


def kill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the owner, as a kernel killed outright, and close our ends of its pipes."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


def gone(check: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not check():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_groups_die_when_their_owner_is_killed_outright() -> None:
    kept, dropped = group(), group()
    try:
        time.sleep(0.3)  # let each group start its child
        proc, watcher = owner(str(kept.pid), str(dropped.pid), f"-{dropped.pid}")
        assert watcher is not None and alive(watcher)
        kill(proc)
        assert gone(lambda: group_alive(kept.pid)), "the watched group outlived its owner"
        assert gone(lambda: alive(watcher))
        assert group_alive(dropped.pid), "a group no longer watched was killed"
    finally:
        for g in (kept, dropped):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(g.pid, signal.SIGKILL)
            g.wait()


def test_a_closed_reaper_kills_nothing() -> None:
    watched = group()
    try:
        proc, watcher = owner(str(watched.pid), close=True)
        assert watcher is None
        kill(proc)
        time.sleep(1.0)
        assert group_alive(watched.pid)
    finally:
        os.killpg(watched.pid, signal.SIGKILL)
        watched.wait()
