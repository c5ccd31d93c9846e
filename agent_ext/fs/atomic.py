"""Atomic file replacement: a file is wholly the old or wholly the new content, never a mix.

The bytes go to a private temporary file in the same folder, are flushed to disk, and take the
target's place with one ``rename``. A crash, a kill or a full disk at any moment leaves the
original intact. Each temporary file is noted in a journal of this process while it exists, so
one left by a killed process is removed at the next start (``sweep_interrupted``), and
``remove_stale_temps`` clears a folder of them. Writing in place would close no race: a reader
or a crash could see a half-written file.

Two kinds of file are not replaced: a read-only one is refused (nothing is chmod-ed behind the
user's back), and one with several hard links is written in place, so that every name keeps
showing the same file; its old content is kept in a backup beside it until the write is done.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_TEMP_NAME = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$", re.DOTALL)
_MAX_NAME_BYTES = 200
_umask_lock = threading.Lock()


class AtomicWriteError(OSError):
    """A write that did not happen; the message says why and that the original is unchanged."""

    def __init__(self, code: int | None, message: str, path: Path) -> None:
        super().__init__(code, message)
        self.filename = str(path)
        self.message = message

    def __str__(self) -> str:
        return self.message


def atomic_write(path: str | os.PathLike[str], data: bytes, *,
                 mode: int | None = None) -> os.stat_result:
    """Replace ``path`` with ``data`` atomically and durably. Returns the new file's stat.

    A symlink is written through: its final target is replaced and the link stays a link.
    Permission bits (and owner, where allowed) are kept; a new file gets ``0644 & ~umask``
    unless ``mode`` is given. A read-only file is refused; a file with several hard links is
    written in place (see the module docstring). Raises AtomicWriteError (an OSError).
    """
    target = _final_target(Path(path))
    existing = _stat_or_none(target)
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        code = errno.EISDIR if stat.S_ISDIR(existing.st_mode) else errno.EINVAL
        raise AtomicWriteError(code, f"{target} is not a regular file; nothing was written.",
                               target)
    if existing is not None and not existing.st_mode & stat.S_IWUSR:
        raise AtomicWriteError(
            errno.EACCES, f"{target} is read-only (mode {stat.S_IMODE(existing.st_mode):04o}); "
                          "nothing was written. If it should change, make it writable first "
                          f"(chmod u+w {target}).", target)
    if existing is not None and existing.st_nlink > 1:
        return _write_linked(target, data)
    perm = mode if mode is not None else (
        stat.S_IMODE(existing.st_mode) if existing is not None else 0o644 & ~current_umask())
    tmp = target.parent / temp_name(target.name)
    with _journal(tmp):
        return _replace(target, tmp, data, existing, perm)


def _replace(target: Path, tmp: Path, data: bytes, existing: os.stat_result | None,
             perm: int) -> os.stat_result:
    try:
        fd = os.open(tmp, _FLAGS, 0o600)
    except OSError as err:
        raise _failure(err, target, existed=existing is not None, creating_temp=True) from err
    try:
        try:
            _write_all(fd, data)
            if existing is not None:
                _copy_owner(fd, existing)
            _chmod(fd, tmp, perm)
            os.fsync(fd)
            result = os.fstat(fd)
        finally:
            os.close(fd)
        tmp.replace(target)
    except BaseException as err:
        _discard(tmp)
        if isinstance(err, OSError):
            raise _failure(err, target, existed=existing is not None,
                           creating_temp=False) from err
        raise
    _fsync_dir(target.parent)
    return result


def _write_linked(target: Path, data: bytes) -> os.stat_result:
    """Write a hard-linked file in place, with its old content kept in a backup meanwhile."""
    backup = target.parent / f".{target.name}.{secrets.token_hex(6)}.bak"
    try:
        old = target.read_bytes()
        fd = os.open(backup, _FLAGS, 0o600)
        try:
            _write_all(fd, old)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as err:
        _discard(backup)
        raise _failure(err, target, existed=True, creating_temp=True) from err
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
            result = os.fstat(fd)
        finally:
            os.close(fd)
    except OSError as err:
        with contextlib.suppress(OSError):
            fd = os.open(target, os.O_WRONLY)
            try:
                _write_all(fd, old)
                os.ftruncate(fd, len(old))
                os.fsync(fd)
            finally:
                os.close(fd)
            _discard(backup)
        raise _failure(err, target, existed=True, creating_temp=False) from err
    _discard(backup)
    return result


# -- the journal of temporary files ---------------------------------------------------------

def journal_dir() -> Path:
    """Where each process notes the temporary files it has open (one folder per user)."""
    user = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"agent_ext-writes-{user}"


@contextlib.contextmanager
def _journal(tmp: Path) -> Iterator[None]:
    """Note ``tmp`` while it may exist, so a kill between open and rename is cleaned up later."""
    folder = journal_dir()
    note = folder / f"{os.getpid()}.{secrets.token_hex(6)}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        note.write_text(os.fspath(tmp), encoding="utf-8")
    except OSError:
        pass  # no journal: remove_stale_temps on the folder still finds the file
    try:
        yield
    finally:
        note.unlink(missing_ok=True)


def sweep_interrupted() -> list[Path]:
    """Remove the temporary files of writes whose process was killed; returns what went."""
    removed: list[Path] = []
    folder = journal_dir()
    try:
        notes = list(folder.iterdir())
    except OSError:
        return removed
    for note in notes:
        pid_text = note.name.split(".", 1)[0]
        if not pid_text.isdigit() or pid_alive(int(pid_text)):
            continue
        try:
            tmp = Path(note.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            tmp = None
        if tmp is not None and is_temp_name(tmp.name):
            with contextlib.suppress(OSError):
                if tmp.is_file() and not tmp.is_symlink():
                    tmp.unlink()
                    removed.append(tmp)
        note.unlink(missing_ok=True)
    return removed


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one we may not signal counts as alive)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def temp_name(name: str) -> str:
    """The temporary name used beside ``name``: ``.{name}.{12 hex}.tmp``, kept under NAME_MAX."""
    while len(os.fsencode(name)) > _MAX_NAME_BYTES:
        name = name[:-1]
    return f".{name}.{secrets.token_hex(6)}.tmp"


def is_temp_name(name: str) -> bool:
    """Whether ``name`` has the shape of an ``atomic_write`` temporary file."""
    return bool(_TEMP_NAME.match(name))


def remove_stale_temps(folder: str | os.PathLike[str], *, older_than: float = 60.0) -> list[Path]:
    """Delete temporary files left by interrupted writes in ``folder``; returns what was removed.

    Only regular files named like ours and older than ``older_than`` seconds are touched, so a
    write still in progress in another thread or process keeps its file.
    """
    removed: list[Path] = []
    cutoff = time.time() - older_than
    with os.scandir(folder) as entries:
        for entry in entries:
            if not is_temp_name(entry.name) or not entry.is_file(follow_symlinks=False):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_mtime > cutoff:
                    continue
                Path(entry.path).unlink()
            except FileNotFoundError:
                continue  # its writer finished or another cleanup got there first
            removed.append(Path(entry.path))
    return removed


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass  # no /proc: fall back to setting and restoring it
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _final_target(path: Path) -> Path:
    """The file a write to ``path`` lands in: symlinks followed to their final target."""
    target = Path(os.path.realpath(path))
    if target.is_symlink():
        raise AtomicWriteError(errno.ELOOP, f"{path} is a symlink loop; nothing was written.",
                               path)
    return target


def _stat_or_none(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise _failure(err, path, existed=True, creating_temp=False) from err


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _copy_owner(fd: int, original: os.stat_result) -> None:
    """Give the new file the original's owner and group where we may (group files stay shared)."""
    if not hasattr(os, "fchown"):
        return
    if (original.st_uid, original.st_gid) == (os.getuid(), os.getgid()):
        return
    try:
        os.fchown(fd, original.st_uid, original.st_gid)
    except PermissionError:
        try:
            os.fchown(fd, -1, original.st_gid)
        except PermissionError:
            return  # only root gives files away; the new file is ours, as any save would be


def _chmod(fd: int, tmp: Path, perm: int) -> None:
    if hasattr(os, "fchmod"):
        os.fchmod(fd, perm)
    else:
        tmp.chmod(perm)


def _discard(tmp: Path) -> None:
    tmp.unlink(missing_ok=True)


def _fsync_dir(folder: Path) -> None:
    """Flush the rename to disk. Best effort: the new content is already in place and visible,
    and some filesystems (and Windows) cannot sync a directory."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        dfd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        return
    finally:
        os.close(dfd)


_REASONS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the file system is read-only",
    errno.ENOENT: "the folder does not exist",
}


def _failure(err: OSError, target: Path, *, existed: bool,
             creating_temp: bool) -> AtomicWriteError:
    reason = _REASONS.get(err.errno or 0, err.strerror or str(err))
    if creating_temp and err.errno in (errno.EACCES, errno.EPERM):
        hint = (f"{target.parent} must be writable to replace a file safely (a temporary file "
                "is written there first)")
    elif creating_temp and err.errno == errno.ENOENT:
        hint = f"create {target.parent} first"
    else:
        hint = "fix the cause and retry"
    state = "The original file is unchanged" if existed else "No file was created"
    return AtomicWriteError(err.errno, f"Could not write {target}: {reason}. {state}; {hint}.",
                            target)
