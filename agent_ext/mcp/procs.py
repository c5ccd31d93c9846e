"""Killing a stdio server's whole process tree: its process group plus tracked descendants.

Servers start in their own session, so one ``killpg`` reaches every descendant that stayed in
the group, even after the server itself died (a crash leaves its children in the group).
Descendants that started their own session are found through ``/proc`` while the server lives
and are killed one by one. POSIX only; elsewhere the server process alone is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Collection
from pathlib import Path

_PROC = Path("/proc")


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (Linux ``/proc``; empty elsewhere)."""
    if not _PROC.is_dir():
        return set()
    children: dict[int, list[int]] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        parent = _ppid(int(entry.name))
        if parent is not None:
            children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _ppid(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if len(fields) > 1 else None


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat_fields(pid)
    return not fields or fields[0] not in ("Z", "X")


def group_alive(pgid: int) -> bool:
    """Whether a live member of process group ``pgid`` is left (zombies do not count)."""
    if sys.platform == "win32":
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not _PROC.is_dir():
        return True
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                return True
    return False


def _stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name: state, ppid, pgrp, ..."""
    try:
        return (_PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()
    except OSError:
        return []


def signal_tree(pgid: int, extra: Collection[int], sig: int) -> None:
    """Send ``sig`` to group ``pgid`` and to each pid in ``extra``; gone ones are skipped."""
    if sys.platform == "win32":
        with contextlib.suppress(OSError):
            os.kill(pgid, signal.SIGTERM)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    for pid in extra:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_now(pgid: int, extra: Collection[int] = ()) -> None:
    """SIGKILL the tree at once: for exit paths where no event loop is left to wait on."""
    signal_tree(pgid, {*extra, *descendants(pgid)}, getattr(signal, "SIGKILL", signal.SIGTERM))
