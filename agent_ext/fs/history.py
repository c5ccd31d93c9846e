"""The session's edit history: every agent write, so the user can undo them.

Undo restores a file only while it still holds exactly what the agent wrote; anything newer
(the user's own edits, a formatter) would be lost, so undo refuses instead. Before-images are
kept in memory up to a budget; older ones spill to files in the session folder, or are dropped
with a note when there is no folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .atomic import atomic_write

DEFAULT_MEMORY_BUDGET = 200 * 1024 * 1024


@dataclass(frozen=True)
class EditEntry:
    """One recorded write, as shown to the user (no file content)."""

    seq: int
    path: Path
    tool: str
    call_id: str
    time: float
    created: bool
    before_sha256: str | None
    after_sha256: str
    #: False when the before-image was dropped to bound memory; ``note`` says so.
    undoable: bool = True
    note: str = ""


@dataclass(frozen=True)
class UndoResult:
    """What ``undo`` did: the entries it reverted, newest first, and why it stopped early."""

    undone: tuple[EditEntry, ...]
    refused: EditEntry | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.refused is None


class _Record:
    """An entry plus its before-image: in memory, in a spill file, or gone."""

    def __init__(self, entry: EditEntry, before: bytes | None) -> None:
        self.entry = entry
        self.before = before
        self.spill: Path | None = None


class EditHistory:
    """Thread-safe, bounded record of the session's writes, with undo.

    ``spill_dir`` is where before-images go when ``memory_budget`` bytes are exceeded (a
    private folder is created inside it); without it the oldest ones are dropped. It may be a
    function giving the folder, asked only when the first before-image is spilled, so that a
    session which never spills creates no folder.
    """

    def __init__(self, spill_dir: str | os.PathLike[str] | Callable[[], Path] | None = None, *,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET, max_entries: int = 10_000) -> None:
        self._records: deque[_Record] = deque()
        self._spill_root: Callable[[], Path] | None = (
            None if spill_dir is None else spill_dir if callable(spill_dir)
            else functools.partial(Path, spill_dir))
        self._spill_dir: Path | None = None
        self._budget = memory_budget
        self._max_entries = max_entries
        self._in_memory = 0
        self._seq = 0
        self._lock = threading.Lock()

    @property
    def bytes_in_memory(self) -> int:
        return self._in_memory

    def record(self, path: str | os.PathLike[str], before: bytes | None, after: bytes, *,
               tool: str, call_id: str) -> EditEntry:
        """Record a write of ``after`` over ``before`` (None: the write created the file)."""
        with self._lock:
            self._seq += 1
            entry = EditEntry(
                seq=self._seq, path=Path(path).absolute(), tool=tool, call_id=call_id,
                time=time.time(), created=before is None,
                before_sha256=None if before is None else _sha256(before),
                after_sha256=_sha256(after))
            self._records.append(_Record(entry, before))
            self._in_memory += len(before or b"")
            self._enforce_bounds()
            return entry

    def entries(self) -> list[EditEntry]:
        """Every recorded write still undoable or noted, oldest first."""
        with self._lock:
            return [r.entry for r in self._records]

    def undo(self, n: int = 1) -> UndoResult:
        """Revert the last ``n`` writes, newest first, stopping at the first that cannot be.

        A write is reverted only if its file still holds exactly the bytes it wrote; a created
        file is deleted. Restores are atomic.
        """
        undone: list[EditEntry] = []
        with self._lock:
            for _ in range(n):
                if not self._records:
                    break
                record = self._records[-1]
                problem = self._revert(record)
                if problem is not None:
                    return UndoResult(tuple(undone), record.entry, problem)
                self._records.pop()
                self._release(record)
                undone.append(record.entry)
        if not undone:
            return UndoResult((), None, "Nothing to undo: no writes are recorded in this session.")
        names = ", ".join(f"{e.path.name} ({e.tool} {e.call_id})" for e in undone)
        return UndoResult(tuple(undone), None, f"Reverted {len(undone)} write(s): {names}.")

    def clear(self) -> None:
        """Forget every entry and delete the spilled before-images."""
        with self._lock:
            while self._records:
                self._release(self._records.popleft())
            if self._spill_dir is not None:
                with contextlib.suppress(OSError):  # not empty: files someone else put there
                    self._spill_dir.rmdir()
                self._spill_dir = None

    def _revert(self, record: _Record) -> str | None:
        entry = record.entry
        try:
            current = entry.path.read_bytes()
        except FileNotFoundError:
            current = None
        except OSError as err:
            return f"Cannot undo {entry.path}: reading it failed ({err.strerror}). Nothing changed."
        if current is None or _sha256(current) != entry.after_sha256:
            return (f"{entry.path} has changed since {entry.tool} wrote it (call "
                    f"{entry.call_id}); undoing would lose that later work, so nothing was "
                    "changed. Restore it by hand if you mean to.")
        if not entry.undoable:
            return f"Cannot undo {entry.path}: {entry.note} Nothing changed."
        try:
            if entry.created:
                Path(os.path.realpath(entry.path)).unlink()
            else:
                atomic_write(entry.path, self._before_image(record))
        except OSError as err:
            return f"Cannot undo {entry.path}: {err}"
        return None

    def _before_image(self, record: _Record) -> bytes:
        if record.before is not None:
            return record.before
        assert record.spill is not None
        data = record.spill.read_bytes()
        if _sha256(data) != record.entry.before_sha256:
            raise OSError(f"its saved copy {record.spill} is damaged; nothing was changed")
        return data

    def _enforce_bounds(self) -> None:
        """Move the oldest in-memory before-images out until the budget holds. Lock held."""
        while len(self._records) > self._max_entries:
            self._release(self._records.popleft())
        for record in self._records:
            if self._in_memory <= self._budget:
                break
            if record.before:
                self._evict(record)

    def _evict(self, record: _Record) -> None:
        """Spill one before-image to the session folder, or drop it with a note. Lock held."""
        assert record.before is not None
        note = "its before-image was dropped to bound memory (no session folder to keep it in)."
        if self._spill_root is not None:
            try:
                record.spill = self._write_spill(record.entry.seq, record.before)
            except OSError as err:
                note = (f"its before-image could not be saved ({err.strerror or err}) and was "
                        "dropped to bound memory.")
        self._in_memory -= len(record.before)
        record.before = None
        if record.spill is None:
            record.entry = dataclasses.replace(record.entry, undoable=False, note=note)

    def _write_spill(self, seq: int, data: bytes) -> Path:
        assert self._spill_root is not None
        if self._spill_dir is None:
            root = self._spill_root()
            root.mkdir(parents=True, exist_ok=True)
            self._spill_dir = Path(tempfile.mkdtemp(prefix="edit-history-", dir=root))
        path = self._spill_dir / f"{seq}.before"
        atomic_write(path, data, mode=0o600)
        return path

    def _release(self, record: _Record) -> None:
        self._in_memory -= len(record.before or b"")
        record.before = None
        if record.spill is not None:
            record.spill.unlink(missing_ok=True)
            record.spill = None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
