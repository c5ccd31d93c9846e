"""One writer at a time per file, across the agents of one process and across processes.

Two agents (two notebooks, or a notebook and a script) may edit one file at the same moment;
each checks that the file is what it read and then replaces it, and without a lock both checks
can pass before either write lands, losing one edit. ``file_lock`` is held from that last check
through the rename. It is an advisory ``flock`` on a lock file named after the file's real path,
kept in a private folder (not beside the file, so a project gets no stray files); without
``fcntl`` an exclusive-create lock file stands in.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

_fcntl: ModuleType | None
try:
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None

#: Seconds to wait for another writer before giving up (a write takes milliseconds).
LOCK_TIMEOUT = 30.0
_local = threading.Lock()
_held: dict[str, threading.Lock] = {}


class FileLockTimeoutError(TimeoutError):
    """Another writer held the file for longer than ``LOCK_TIMEOUT``."""


def lock_dir() -> Path:
    user = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"agent_ext-locks-{user}"


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file of ``path`` (by its real path, so every spelling shares one lock)."""
    key = hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:32]
    return lock_dir() / f"{key}.lock"


@contextlib.contextmanager
def file_lock(path: str | os.PathLike[str], *, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the write lock of ``path``; raises ``FileLockTimeoutError`` after ``timeout`` s."""
    target = lock_path(path)
    with _thread_lock(target, timeout):
        folder = target.parent
        folder.mkdir(mode=0o700, exist_ok=True)
        if _fcntl is not None:
            fd = os.open(target, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
            try:
                _flock(fd, timeout, path)
                yield
            finally:
                os.close(fd)  # closing releases the lock
        else:  # pragma: no cover - Windows
            with _exclusive_file(target, timeout, path):
                yield


@contextlib.contextmanager
def _thread_lock(target: Path, timeout: float) -> Iterator[None]:
    """flock is per open file, so threads of one process also take an in-process lock."""
    with _local:
        lock = _held.setdefault(str(target), threading.Lock())
    if not lock.acquire(timeout=timeout):
        raise FileLockTimeoutError(f"another write to the same file took over {timeout:g}s")
    try:
        yield
    finally:
        lock.release()


def _flock(fd: int, timeout: float, path: str | os.PathLike[str]) -> None:
    assert _fcntl is not None
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise FileLockTimeoutError(f"another process kept {os.fspath(path)} locked "
                                           f"for over {timeout:g}s; nothing was written") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        else:
            return


@contextlib.contextmanager
def _exclusive_file(target: Path, timeout: float,
                    path: str | os.PathLike[str]) -> Iterator[None]:  # pragma: no cover
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            if time.monotonic() > deadline:
                raise FileLockTimeoutError(f"{os.fspath(path)} stayed locked for over "
                                      f"{timeout:g}s; nothing was written") from None
            time.sleep(0.01)
    os.close(fd)
    try:
        yield
    finally:
        target.unlink(missing_ok=True)
