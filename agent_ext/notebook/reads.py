"""What this session has seen of each notebook, and whether that licenses an edit.

A notebook has no reliable mtime in the browser, so staleness is judged on content: an edit is
allowed only when the session has seen every cell (one full read, or pages that together cover
every cell with nothing changed in between), the cell ids are still the ones it saw, and the
target cell's source is unchanged. The agent's own edits count as seen. Anything else is refused
with what changed, so the model re-reads instead of overwriting work it has not seen.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from agent_ext.core.errors import ErrorCode

from .document import NotebookSnapshot

_LIST = 10


def source_fingerprint(source: str) -> bytes:
    """A short digest of a cell source."""
    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=12).digest()


def notebook_key(path: str | None) -> str:
    """The key reads are recorded under: the notebook's real path."""
    return os.path.realpath(path) if path else "<unsaved notebook>"


@dataclass
class _Record:
    ids: list[str]
    fps: dict[str, bytes]
    covered: set[str] = field(default_factory=set)
    capped: bool = False


@dataclass(frozen=True)
class ReadState:
    """A copy of what the session knows of one notebook."""

    ids: tuple[str, ...]
    covered: frozenset[str]
    capped: bool

    @property
    def full(self) -> bool:
        return self.covered.issuperset(self.ids)


@dataclass(frozen=True)
class CellChanges:
    """Cells changed, added and deleted since a read, each as ``(index, display id)``; the
    index of a deleted cell is where it was."""

    changed: tuple[tuple[int, str], ...] = ()
    added: tuple[tuple[int, str], ...] = ()
    deleted: tuple[tuple[int, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.deleted)


class NotebookReads:
    """Session-scoped, thread-safe record of notebook reads and the agent's own edits."""

    def __init__(self) -> None:
        self._records: dict[str, _Record] = {}
        self._lock = threading.Lock()

    def record_read(self, snapshot: NotebookSnapshot, shown: Iterable[str], *,
                    capped: bool = False) -> ReadState:
        """Record a read that showed the sources of ``shown`` (display ids) whole.

        Reads of an unchanged notebook add up; a change since the last read starts over.
        """
        ids = snapshot.display_ids()
        fps = {i: source_fingerprint(c.source) for i, c in zip(ids, snapshot.cells, strict=True)}
        key = notebook_key(snapshot.path)
        with self._lock:
            rec = self._records.get(key)
            if rec is None or rec.ids != ids or rec.fps != fps:
                rec = self._records[key] = _Record(ids, fps)
            rec.covered.update(i for i in shown if i in fps)
            rec.capped = capped
            return _state(rec)

    def record_edit(self, path: str | None, ids: Sequence[str],
                    sources: Mapping[str, str]) -> None:
        """Record the agent's own edit: the id list after it and the sources it wrote."""
        key = notebook_key(path)
        with self._lock:
            rec = self._records.get(key)
            if rec is None:
                rec = self._records[key] = _Record(list(ids), {})
            rec.ids = list(ids)
            keep = set(ids)
            rec.fps = {i: fp for i, fp in rec.fps.items() if i in keep}
            rec.covered &= keep
            for cell_id, source in sources.items():
                rec.fps[cell_id] = source_fingerprint(source)
                rec.covered.add(cell_id)

    def rekey(self, path: str | None, mapping: Mapping[str, str]) -> None:
        """Rename cells the session knows (``cell-3`` -> its new persistent id)."""
        with self._lock:
            rec = self._records.get(notebook_key(path))
            if rec is None:
                return
            rec.ids = [mapping.get(i, i) for i in rec.ids]
            rec.fps = {mapping.get(i, i): fp for i, fp in rec.fps.items()}
            rec.covered = {mapping.get(i, i) for i in rec.covered}

    def state(self, path: str | None) -> ReadState | None:
        with self._lock:
            rec = self._records.get(notebook_key(path))
            return _state(rec) if rec is not None else None

    def changes(self, snapshot: NotebookSnapshot) -> CellChanges | None:
        """What changed in ``snapshot`` since the session last read (or edited) it, None when
        it never did. The agent's own edits are not changes."""
        ids = snapshot.display_ids()
        with self._lock:
            rec = self._records.get(notebook_key(snapshot.path))
            if rec is None:
                return None
            old_ids, old_fps = list(rec.ids), dict(rec.fps)
        before = set(old_ids)
        after = set(ids)
        changed = tuple((i, cid) for i, (cid, cell) in enumerate(zip(ids, snapshot.cells,
                                                                     strict=True))
                        if cid in before and cid in old_fps
                        and old_fps[cid] != source_fingerprint(cell.source))
        added = tuple((i, cid) for i, cid in enumerate(ids) if cid not in before)
        deleted = tuple((i, cid) for i, cid in enumerate(old_ids) if cid not in after)
        return CellChanges(changed, added, deleted)

    def forget(self, path: str | None) -> None:
        with self._lock:
            self._records.pop(notebook_key(path), None)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def unread(self, path: str | None, *, address: str) -> tuple[str, str] | None:
        """``(code, message)`` when this session has no read of the notebook at ``path``.

        Answered from the record alone, so an edit of a notebook the session never read is
        refused without opening it (nothing of it reaches the model before it is read).
        """
        with self._lock:
            known = notebook_key(path) in self._records
        return None if known else _unread(address)

    def check_edit(self, snapshot: NotebookSnapshot, cell_id: str | None, *,
                   address: str | None = None) -> tuple[str, str] | None:
        """None when the session may edit ``cell_id`` (None: only the id list matters, as for an
        insert); else ``(code, message)`` saying what changed and what to do next."""
        where = address or snapshot.path or "the notebook"
        ids = snapshot.display_ids()
        with self._lock:
            rec = self._records.get(notebook_key(snapshot.path))
            if rec is None:
                return _unread(where)
            if rec.ids != ids:
                what = _id_changes(rec.ids, ids, snapshot)
                return ErrorCode.FILE_CHANGED_SINCE_READ, (
                    f"{where} changed since you read it: {what}. Nothing was changed. Read it "
                    f"again with read_file {where}, then retry against its current cells.")
            if cell_id is not None:
                index = ids.index(cell_id) if cell_id in ids else None
                now = (source_fingerprint(snapshot.cells[index].source) if index is not None
                       else None)
                if now is None or rec.fps.get(cell_id) != now:
                    return ErrorCode.FILE_CHANGED_SINCE_READ, (
                        f"Cell {cell_id} in {where} changed since you read it (its source was "
                        "edited by the user or another program). Nothing was changed. Read it "
                        f"again with read_file {where}:cells={cell_id}, then retry against its "
                        "current source.")
            missing = [i for i, shown in enumerate(ids) if shown not in rec.covered]
            if missing:
                why = (" (your last read hit the size cap)" if rec.capped else "")
                seen = len(ids) - len(missing)
                return ErrorCode.EDIT_REQUIRES_PRIOR_READ, (
                    f"You have seen {seen} of {len(ids)} cells of {where}{why}; notebook edits "
                    "need every cell read first, so nothing was changed. Read the rest with "
                    f"read_file {where}:cells={_first_span(missing)} (add :source to leave "
                    "outputs out), then retry.")
        return None


def _unread(where: str) -> tuple[str, str]:
    return ErrorCode.EDIT_REQUIRES_PRIOR_READ, (
        f"You have not read {where} in this session, so editing it could destroy work you have "
        f"not seen. First call the read_file tool with {_call(where)} (page through a large "
        f"one with {where}:cells=0-49 and so on), then retry this edit.")


def _call(path: str) -> str:
    """The arguments of the read_file call to make, as JSON (what a model copies best)."""
    return json.dumps({"file_path": path})


def _state(rec: _Record) -> ReadState:
    return ReadState(tuple(rec.ids), frozenset(rec.covered), rec.capped)


def _first_span(positions: list[int]) -> str:
    """The first run of positions, at most 50 long, as ``a-b``."""
    start = end = positions[0]
    for p in positions[1:]:
        if p != end + 1 or p - start >= 49:
            break
        end = p
    return str(start) if start == end else f"{start}-{end}"


def _id_changes(old: list[str], new: list[str], snapshot: NotebookSnapshot) -> str:
    """What happened to the cell list, in words."""
    if not snapshot.has_ids:
        return (f"it has no cell ids, so cells are known by position, and it now has {len(new)} "
                f"cells where you saw {len(old)}" if len(old) != len(new)
                else "its cells were rearranged")
    before, after = set(old), set(new)
    added = [i for i in new if i not in before]
    removed = [i for i in old if i not in after]
    common_old = [i for i in old if i in after]
    common_new = [i for i in new if i in before]
    matcher = difflib.SequenceMatcher(None, common_old, common_new, autojunk=False)
    kept = {common_old[b.a + k] for b in matcher.get_matching_blocks() for k in range(b.size)}
    moved = [i for i in common_new if i not in kept]
    said = []
    for verb, items in (("added", added), ("removed", removed), ("moved", moved)):
        if items:
            listing = ", ".join(items[:_LIST]) + (f" and {len(items) - _LIST} more"
                                                 if len(items) > _LIST else "")
            said.append(f"cell(s) {verb}: {listing}")
    return "; ".join(said) or "its cell order changed"

