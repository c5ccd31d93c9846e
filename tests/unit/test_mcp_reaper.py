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
import os, sys, time
from agent_ext.mcp.reaper import Reaper
reaper = Reaper()
for arg in sys.argv[1:]:
    (reaper.remove if arg.startswith("-") else reaper.add)(abs(int(arg)))
started = reaper.pid
command = sys.stdin.readline()
if "--close" in command:
    reaper.close()
forked = 0
if "--fork" in command:
    forked = os.fork()
    if forked == 0:
        time.sleep(30)
        os._exit(0)
print(started, reaper.pid, forked, flush=True)
time.sleep(60)
"""


def group() -> subprocess.Popen[bytes]:
    """A process group of two sleeping processes, like a server and the child it started."""
    return subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(60)']); time.sleep(60)")], start_new_session=True)


def owner(*args: str, command: str = "stay") -> tuple[subprocess.Popen[str], int | None, int]:
    """A process that watches the groups in ``args`` (``-N`` stops watching N) with a Reaper,
    then does ``command`` (``--close``, ``--fork``); it, the watcher's pid after the command
    (None once closed) and a forked pid."""
    proc = subprocess.Popen([sys.executable, "-c", OWNER, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(command + "\n")
    proc.stdin.flush()
    started, watcher, forked = proc.stdout.readline().split()
    assert started != "None", "adding a group starts the watcher"
    return proc, None if watcher == "None" else int(watcher), int(forked)


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
        proc, watcher, _ = owner(str(kept.pid), str(dropped.pid), f"-{dropped.pid}")
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
        proc, watcher, _ = owner(str(watched.pid), command="--close")
        assert watcher is None
        kill(proc)
        time.sleep(1.0)
        assert group_alive(watched.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(watched.pid, signal.SIGKILL)
        watched.wait()


def test_a_forked_child_does_not_keep_the_watcher_waiting() -> None:
    watched = group()
    forked = 0
    try:
        proc, watcher, forked = owner(str(watched.pid), command="--fork")
        assert watcher is not None and forked > 0 and alive(forked)
        kill(proc)
        # the fork still runs, holding what it inherited, yet the group dies
        assert gone(lambda: group_alive(watched.pid)), "the forked child kept the pipe open"
        assert alive(forked)
    finally:
        for pid in (forked,):
            if pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(watched.pid, signal.SIGKILL)
        watched.wait()
