"""The session's cell changes: every agent edit that landed in a notebook, so the user can undo it.

Undo takes back the newest change only while the notebook still shows what the agent left
there: the cell it wrote still holds exactly that source and type, an inserted cell is still
there unchanged, a deleted cell has not come back. Otherwise it refuses and says why, since
reverting would lose the user's later work. A replaced or deleted code cell gets its outputs and
execution count back. The same works on the live notebook (through the bridge) and on .ipynb
files, which are saved after the undo.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from .document import CellData, NotebookDocument, NotebookError, NotebookSnapshot
from .labels import label_of
from .reads import NotebookReads

#: Changes kept per session, and the bytes of cell content they may hold (outputs can be large
#: images); past either bound the oldest are forgotten and can no longer be undone.
MAX_CHANGES = 200
MEMORY_BUDGET = 64 * 1024 * 1024


@dataclass(frozen=True)
class CellChange:
    """One agent edit that landed: the cell as it was (``before``) and as the agent left it."""

    seq: int
    time: float
    mode: str
    cell_id: str
    label: str
    notebook: str
    before: CellData | None
    after: CellData | None
    #: The cell the changed one followed before the edit (None: it was at the top).
    anchor: str | None
    doc: NotebookDocument = field(repr=False, compare=False)
    path: str | None = None

    def line(self) -> str:
        """One line for ``%agent history``."""
        verb = {"replace": "edited", "insert": "inserted", "delete": "deleted",
                "move": "moved"}.get(self.mode, self.mode)
        return f"{verb} {self.label} in {self.notebook}"


@dataclass(frozen=True)
class CellUndo:
    """What an undo did: the change it took back, or why it did not."""

    change: CellChange | None
    message: str
    refused: bool = False


class NotebookChanges:
    """Thread-safe, bounded record of the session's cell changes, newest last, with undo."""

    def __init__(self, max_changes: int = MAX_CHANGES,
                 memory_budget: int = MEMORY_BUDGET) -> None:
        self._changes: deque[CellChange] = deque()
        self._sizes: dict[int, int] = {}
        self._max = max_changes
        self._budget = memory_budget
        self._held = 0
        self._seq = 0
        self._lock = threading.Lock()

    def record(self, doc: NotebookDocument, snapshot: NotebookSnapshot, *, mode: str,
               cell_id: str, after: CellData | None, after_index: int | None,
               notebook: str) -> CellChange:
        """Record an edit of ``cell_id`` that landed; ``snapshot`` is the notebook before it,
        ``after`` the cell as the agent left it at position ``after_index``."""
        index = snapshot.index_of(cell_id)
        before = snapshot.cells[index] if index is not None and mode != "insert" else None
        ids = snapshot.display_ids()
        anchor = ids[index - 1] if index is not None and index > 0 else None
        if after is not None and after_index is not None:
            label = label_of(after_index, after)
        elif before is not None and index is not None:
            label = label_of(index, before)
        else:
            label = f"cell {cell_id}"
        with self._lock:
            self._seq += 1
            change = CellChange(self._seq, time.time(), mode, cell_id, label, notebook, before,
                                after, anchor, doc, snapshot.path)
            self._changes.append(change)
            self._sizes[change.seq] = size = _size(before) + _size(after)
            self._held += size
            while len(self._changes) > 1 and (len(self._changes) > self._max
                                              or self._held > self._budget):
                self._forget(self._changes.popleft())
            return change

    @property
    def bytes_held(self) -> int:
        """About how many bytes of cell content the kept changes hold."""
        return self._held

    def _forget(self, change: CellChange) -> None:
        self._held -= self._sizes.pop(change.seq, 0)

    def entries(self) -> list[CellChange]:
        """The recorded changes, oldest first."""
        with self._lock:
            return list(self._changes)

    def newest(self) -> CellChange | None:
        with self._lock:
            return self._changes[-1] if self._changes else None

    def clear(self) -> None:
        with self._lock:
            self._changes.clear()
            self._sizes.clear()
            self._held = 0

    async def undo(self, reads: NotebookReads | None = None) -> CellUndo:
        """Take back the newest change if the notebook still shows it (see the module docstring).

        A refused undo changes nothing and keeps the change, so it can be undone once the
        user puts the cell back.
        """
        change = self.newest()
        if change is None:
            return CellUndo(None, "Nothing to undo: the agent has changed no notebook cell in "
                                  "this session.")
        doc = change.doc
        try:
            now = await doc.read()
            problem = _check(change, now)
            if problem is not None:
                return CellUndo(change, problem, refused=True)
            ids = await _revert(change, doc, now)
            if not doc.live:
                await doc.save()
        except NotebookError as err:
            return CellUndo(change, f"Could not undo the change to {change.label}: {err} "
                                    "Nothing more was changed.", refused=True)
        with self._lock:
            if self._changes and self._changes[-1] is change:
                self._forget(self._changes.pop())
        if reads is not None:
            restored = {} if change.mode == "insert" or change.before is None else {
                change.cell_id: change.before.source}
            reads.record_edit(now.path, ids, restored)
        return CellUndo(change, _done(change, ids))


def _size(cell: CellData | None) -> int:
    """About the bytes ``cell`` holds: its source and its outputs as JSON."""
    if cell is None:
        return 0
    return len(cell.source) + (len(json.dumps(cell.outputs)) if cell.outputs else 0)


def _check(change: CellChange, now: NotebookSnapshot) -> str | None:
    """Why the change cannot be undone in ``now``, or None."""
    index = now.index_of(change.cell_id)
    where = f"{change.label} in {change.notebook}"
    if change.mode == "delete":
        if index is not None:
            return (f"The cell the agent deleted ({where}) is back in the notebook; not "
                    "undone.")
        return None
    if index is None:
        return f"{_now_label(change, None)} is no longer in {change.notebook}; not undone."
    cell = now.cells[index]
    after = change.after
    if after is not None and (cell.source != after.source or cell.cell_type != after.cell_type):
        return (f"{_now_label(change, index, cell)} changed since the agent's edit; not undone "
                "(undoing would lose that later work).")
    if change.mode == "move" and change.anchor is not None and now.index_of(change.anchor) is None:
        return (f"The cell {change.label} came after is gone, so it has no place to go back "
                "to; not undone.")
    return None


def _now_label(change: CellChange, index: int | None, cell: CellData | None = None) -> str:
    """The changed cell named as it is now (its position may have moved), capitalised."""
    if index is None or cell is None:
        text = change.label
    else:
        text = label_of(index, cell).split(" · `", 1)[0]
    return text[:1].upper() + text[1:]


async def _revert(change: CellChange, doc: NotebookDocument,
                  now: NotebookSnapshot) -> list[str]:
    """Put the cell back as it was; the id list after."""
    ids = now.display_ids()
    before = change.before
    if change.mode == "insert":
        await doc.delete(change.cell_id)
        ids.remove(change.cell_id)
        return ids
    if change.mode == "move":
        await doc.move(change.cell_id, change.anchor)
        ids.remove(change.cell_id)
        ids.insert(0 if change.anchor is None else ids.index(change.anchor) + 1, change.cell_id)
        return ids
    assert before is not None
    if change.mode == "delete":
        anchor = change.anchor if change.anchor in ids else None
        await doc.insert(anchor, before.cell_type, before.source, change.cell_id)
        ids.insert(0 if anchor is None else ids.index(anchor) + 1, change.cell_id)
    else:
        after = change.after
        if after is not None and after.cell_type != before.cell_type:
            await doc.set_type(change.cell_id, before.cell_type)
        if after is None or after.source != before.source:
            await doc.replace_source(change.cell_id, before.source, clear_outputs=False)
    if before.cell_type == "code":
        await doc.set_outputs(change.cell_id, list(before.outputs), before.execution_count)
    return ids


def _done(change: CellChange, ids: list[str]) -> str:
    """What the undo did, naming the cell as it is now."""
    where = change.notebook
    if change.mode == "insert":
        return f"Undone: removed {change.label}, which the agent inserted in {where}."
    cell = change.before if change.mode != "move" else change.after
    shown = label_of(ids.index(change.cell_id), cell) if cell is not None else change.label
    if change.mode == "move":
        return f"Undone: {shown} is back where it was in {where}."
    outputs = ", with its outputs" if change.before is not None and change.before.outputs else ""
    if change.mode == "delete":
        return f"Undone: {shown} is back in {where}{outputs}."
    return f"Undone: {shown} in {where} is as it was before the agent's edit{outputs}."
