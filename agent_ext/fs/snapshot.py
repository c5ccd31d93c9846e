"""A file as read for a change: its bytes, text and identity, opened without blocking.

The edit tools read a file through ``read_snapshot`` once when they plan a change and compare
the file with the snapshot again right before writing (``same_file``), so a change made by
someone else in between is seen.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_ext.core import ErrorCode, ToolRefusal

from .textio import BinaryFileError, TextFile, decode_text, sniff_binary

_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class Snapshot:
    """A file as read: its bytes, decoded text, identity and where its symlinks led."""

    path: Path
    real: str
    st: os.stat_result
    data: bytes
    text: TextFile


def open_regular(path: Path) -> tuple[int, os.stat_result]:
    """An fd and its fstat for a regular file. Never blocks on a FIFO; raises ToolRefusal."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode):
        return fd, st
    os.close(fd)
    if stat.S_ISDIR(st.st_mode):
        raise ToolRefusal(ErrorCode.TARGET_IS_DIRECTORY,
                          f"{path} is a directory, not a file. List it with ls, or give the path "
                          "of a file inside it.")
    raise ToolRefusal(ErrorCode.TARGET_NOT_REGULAR_FILE,
                      f"{path} is not a regular file (a pipe, socket or device); read it with the "
                      "shell tool if you must.")


def read_snapshot(path: Path) -> Snapshot:
    """Read and decode a text file, with the fstat taken before reading.

    Raises FileNotFoundError, ToolRefusal (not a regular file) or BinaryFileError.
    """
    fd, st = open_regular(path)
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    kind = sniff_binary(data[:_SNIFF_BYTES])
    if kind is not None:
        raise BinaryFileError(os.fspath(path), kind)
    return Snapshot(path, os.path.realpath(path), st, data, decode_text(data))


def same_file(a: os.stat_result, b: os.stat_result) -> bool:
    """Same identity and fingerprint (device, inode, mtime in ns, size)."""
    return (a.st_dev, a.st_ino, a.st_mtime_ns, a.st_size) == (
        b.st_dev, b.st_ino, b.st_mtime_ns, b.st_size)
