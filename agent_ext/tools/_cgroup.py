"""A control group per shell command, where the system lets us make one (Linux, as root or with
a delegated cgroup): every process the command starts stays in it, whatever it does to its
environment, session or parent, so stopping the command can stop all of them.

The tag in each process's environment (``_proc``) finds descendants that keep it; a process
that clears its environment and detaches (``env -i setsid cmd &``) is found only here. A small
``sh`` enters the group and then becomes the command's shell (``exec``), so nothing the command
starts can be outside it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path

from agent_ext.fs.atomic import pid_alive

_PROBE_LOCK = threading.Lock()
_ROOT: list[Path | None] = []
#: Groups of this process still in use (made, and not removed by their command).
_IN_USE: set[str] = set()


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, type, options) of the cgroup file systems."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mounts", encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup2", "cgroup"):
                found.append((parts[1], parts[2], parts[3]))
    return found


def _candidates() -> list[Path]:
    """Where a group may be made: a cgroup2 mount, else the v1 ``pids`` hierarchy."""
    mounts = _mounts()
    out = [Path(point) for point, kind, _ in mounts if kind == "cgroup2"]
    out += [Path(point) for point, kind, options in mounts
            if kind == "cgroup" and "pids" in options.split(",")]
    return out


def root() -> Path | None:
    """A folder under which this process can make groups, or None (probed once)."""
    with _PROBE_LOCK:
        if _ROOT:
            return _ROOT[0]
        found: Path | None = None
        if sys.platform.startswith("linux"):
            for base in _candidates():
                probe = base / f"agent_ext-probe-{os.getpid()}"
                try:
                    probe.mkdir()
                except OSError:
                    continue
                with contextlib.suppress(OSError):
                    probe.rmdir()
                found = base
                _sweep(base)
                break
        _ROOT.append(found)
        return found


def _sweep(base: Path, *, own: bool = False) -> None:
    """Remove empty groups: of processes that are gone (a kernel that was killed), or with
    ``own`` this process's, whose last member has ended since."""
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            owner = entry.name.split("-")[1] if entry.name.startswith("agent_ext-") else ""
            if not owner.isdigit():
                continue
            mine = int(owner) == os.getpid()
            if (own and mine and entry.name not in _IN_USE) or (
                    not mine and not pid_alive(int(owner))):
                with contextlib.suppress(OSError):
                    entry.rmdir()  # fails, harmlessly, while the group has members


class Group:
    """One command's control group."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def make(cls, name: str) -> Group | None:
        base = root()
        if base is None:
            return None
        with _PROBE_LOCK:
            _sweep(base, own=True)
            path = base / f"agent_ext-{os.getpid()}-{name}"
            try:
                path.mkdir()
            except OSError:
                return None
            _IN_USE.add(path.name)
        return cls(path)

    def entering(self, argv: list[str]) -> list[str]:
        """``argv`` run by a shell that first moves itself into this group."""
        script = 'echo $$ > "$1" 2>/dev/null; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", str(self.path / "cgroup.procs"), *argv]

    def pids(self) -> set[int]:
        try:
            text = (self.path / "cgroup.procs").read_text(encoding="ascii")
        except OSError:
            return set()
        return {int(p) for p in text.split() if p.isdigit()}

    def kill(self, timeout: float = 2.0) -> set[int]:
        """SIGKILL every member until none is left or ``timeout`` passes; the survivors."""
        deadline = time.monotonic() + timeout
        while True:
            members = self.pids()
            if not members:
                return set()
            for pid in members:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() >= deadline:
                return self.pids()
            time.sleep(0.02)

    def remove(self) -> None:
        """Remove the group once it is empty (a group with members stays, to be killed, or is
        swept by a later command once its members have ended)."""
        with _PROBE_LOCK:
            _IN_USE.discard(self.path.name)
            with contextlib.suppress(OSError):
                self.path.rmdir()
