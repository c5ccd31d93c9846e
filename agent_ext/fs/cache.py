"""The session's read cache: which files the model has seen, and whether they changed since.

Edits refuse files the model never read or that changed under it; this is where "read" and
"changed" are decided. Entries are keyed by file identity (device, inode), so a symlink, a
hardlink and a case variant of one file share an entry. The fingerprint is mtime (ns) + size,
plus a hash of the content where the reader had all of it: a change that keeps size and mtime
(a fast writer, a coarse clock) is caught by ``content_matches``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

CacheState = Literal["unknown", "stale", "fresh"]
_Key = tuple[int, int | str]


@dataclass
class ReadEntry:
    """What the session knows about one file. ``entry()`` hands out copies."""

    path: Path
    mtime_ns: int
    size: int
    last_read_at: float | None = None
    last_write_at: float | None = None
    #: The last read returned the whole file, untruncated.
    last_read_was_full: bool = False
    #: The last read returned plain text (not an image, PDF, notebook or binary payload).
    last_read_cacheable: bool = False
    #: That full read is still in the conversation (compaction disarms it).
    read_resident_in_history: bool = False
    #: False when the filesystem reports inode 0: identity then falls back to the real path.
    verifiable: bool = True
    #: sha-256 of the whole content as last read or written (None: not known).
    digest: str | None = None


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ReadCache:
    """Session-scoped, thread-safe record of reads and writes (tools run in worker threads).

    Methods that stat take an optional ``st``: pass the ``os.fstat`` of the descriptor the
    content came from, taken before reading, so a change during the read shows up as stale.
    """

    def __init__(self) -> None:
        self._entries: dict[_Key, ReadEntry] = {}
        self._by_path: dict[str, _Key] = {}
        self._lock = threading.Lock()

    def check(self, path: str | os.PathLike[str], st: os.stat_result | None = None) -> CacheState:
        """``unknown`` (never read), ``stale`` (changed, replaced or deleted since) or ``fresh``."""
        return self._lookup(path, st)[0]

    def entry(self, path: str | os.PathLike[str],
              st: os.stat_result | None = None) -> ReadEntry | None:
        """A copy of the file's current entry, or None when it has none (or it was replaced)."""
        state, found = self._lookup(path, st)
        return None if state == "unknown" or found is None else found

    def record_read(self, path: str | os.PathLike[str], *, full: bool, cacheable: bool,
                    st: os.stat_result | None = None, digest: str | None = None) -> ReadEntry:
        """Record a successful read. Same fingerprint: flags only turn on. Drift: they reset.

        ``digest`` is the ``content_digest`` of the file's bytes when the reader had them all.
        """
        st = Path(path).stat() if st is None else st
        with self._lock:
            entry, same = self._upsert(path, st)
            if digest is not None or not same:
                entry.digest = digest
            entry.last_read_at = time.time()
            if full:
                entry.read_resident_in_history = True
            if same:
                entry.last_read_was_full |= full
                entry.last_read_cacheable |= cacheable
            else:
                entry.last_read_was_full = full
                entry.last_read_cacheable = cacheable
            return dataclasses.replace(entry)

    def record_write(self, path: str | os.PathLike[str],
                     st: os.stat_result | None = None, digest: str | None = None) -> ReadEntry:
        """Record a write by the agent: it authored every byte, so it has read them all.

        Pass the stat ``atomic_write`` returns so a change right after the write is not
        mistaken for the agent's own.
        """
        st = Path(path).stat() if st is None else st
        with self._lock:
            entry, _ = self._upsert(path, st)
            entry.digest = digest
            now = time.time()
            entry.last_write_at = entry.last_read_at = now
            entry.last_read_was_full = entry.last_read_cacheable = True
            entry.read_resident_in_history = True
            return dataclasses.replace(entry)

    def unchanged_since_read(self, path: str | os.PathLike[str], *, full_request: bool = True,
                             st: os.stat_result | None = None) -> bool:
        """Whether a read may answer "unchanged, the content is earlier in the conversation".

        Only for a full request of a fresh entry whose last read was full, plain text, still in
        the conversation, and not older than the agent's last write.
        """
        if not full_request:
            return False
        state, e = self._lookup(path, st)
        if state != "fresh" or e is None or e.last_read_at is None:
            return False
        after_write = e.last_write_at is None or e.last_read_at >= e.last_write_at
        return (e.last_read_was_full and e.last_read_cacheable and e.read_resident_in_history
                and after_write)

    def content_matches(self, path: str | os.PathLike[str], data: bytes) -> bool:
        """Whether ``data`` is what was last read or written (True when that is not known)."""
        with self._lock:
            key = self._by_path.get(os.path.realpath(path))
            entry = self._entries.get(key) if key is not None else None
            expected = entry.digest if entry is not None else None
        return expected is None or content_digest(data) == expected

    def disarm_history(self, path: str | os.PathLike[str] | None = None) -> None:
        """The conversation was compacted: keep read rights, but stop answering "unchanged"."""
        with self._lock:
            if path is None:
                for entry in self._entries.values():
                    entry.read_resident_in_history = False
                return
            key = self._by_path.get(os.path.realpath(path))
            if key is not None and key in self._entries:
                self._entries[key].read_resident_in_history = False

    def forget(self, path: str | os.PathLike[str]) -> bool:
        """Drop the file's entry (by identity, or by path when it no longer exists)."""
        real = os.path.realpath(path)
        try:
            key: _Key | None = _key(Path(path).stat(), real)
        except OSError:
            key = None
        with self._lock:
            key = key if key in self._entries else self._by_path.get(real)
            self._by_path.pop(real, None)
            return key is not None and self._entries.pop(key, None) is not None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._by_path.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _lookup(self, path: str | os.PathLike[str],
                st: os.stat_result | None) -> tuple[CacheState, ReadEntry | None]:
        real = os.path.realpath(path)
        if st is None:
            try:
                st = Path(path).stat()
            except OSError:
                with self._lock:
                    # Read before, gone now: that is a change, not a file never seen.
                    return ("stale" if real in self._by_path else "unknown"), None
        with self._lock:
            entry = self._entries.get(_key(st, real))
            if entry is None:
                # Another file now sits where a read one was (an editor's atomic save).
                return ("stale" if real in self._by_path else "unknown"), None
            fresh = entry.mtime_ns == st.st_mtime_ns and entry.size == st.st_size
            return ("fresh" if fresh else "stale"), dataclasses.replace(entry)

    def _upsert(self, path: str | os.PathLike[str], st: os.stat_result) -> tuple[ReadEntry, bool]:
        """The entry for ``st`` with the new fingerprint, and whether the fingerprint was unchanged.

        Caller holds the lock.
        """
        real = os.path.realpath(path)
        key = _key(st, real)
        self._by_path[real] = key
        entry = self._entries.get(key)
        if entry is None:
            entry = ReadEntry(Path(path).absolute(), st.st_mtime_ns, st.st_size,
                              verifiable=st.st_ino != 0)
            self._entries[key] = entry
            return entry, False
        same = entry.mtime_ns == st.st_mtime_ns and entry.size == st.st_size
        entry.path = Path(path).absolute()
        entry.mtime_ns, entry.size = st.st_mtime_ns, st.st_size
        return entry, same


def _key(st: os.stat_result, real: str) -> _Key:
    """(device, inode), or (device, real path) when the filesystem reports no inode numbers."""
    return (st.st_dev, st.st_ino) if st.st_ino != 0 else (st.st_dev, real)
