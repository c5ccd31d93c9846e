"""Planning and applying one cell edit under the strict notebook rule.

notebook_edit and ``edit`` on ``cell://`` share this: resolve the cell the model named, refuse
unless the session's reads license the edit (``reads.py``), show the user the cell's diff, and
re-check everything right before the change lands, since the user may edit the notebook while
the approval waits. A notebook without persistent ids (nbformat 4.4) gets them first, so the cell
the model named is still that cell after the save.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from agent_ext.core.errors import ErrorCode

from .changes import NotebookChanges
from .document import CellData, NotebookDocument, NotebookError, NotebookSnapshot
from .ids import new_cell_id, resolve_cell
from .reads import NotebookReads

Mode = Literal["replace", "insert", "delete", "move"]
CELL_TYPES = ("code", "markdown", "raw")


@dataclass(frozen=True)
class EditRequest:
    """What the model asked for; cell names as it wrote them (an id, ``[12]`` or ``cell-N``)."""

    mode: Mode
    cell: str | None = None
    new_source: str | None = None
    cell_type: str | None = None
    after: str | None = None


@dataclass(frozen=True)
class EditPlan:
    """A checked edit: the cell (display id), its type and source before and after."""

    mode: Mode
    action: str
    cell_id: str | None
    cell_type: str
    old_type: str | None
    original: str
    proposed: str
    anchor: str | None
    snapshot: NotebookSnapshot
    address: str

    @property
    def check_id(self) -> str | None:
        """The cell whose source must be as last read (None: only the id list matters)."""
        return None if self.mode == "insert" else self.cell_id

    @property
    def takes_source(self) -> bool:
        """Whether the user may edit the proposal before approving."""
        return self.mode in ("replace", "insert")


@dataclass(frozen=True)
class Applied:
    """What an applied edit did: the cell's id now, and ids assigned by a 4.4 -> 4.5 upgrade."""

    plan: EditPlan
    cell_id: str
    source: str
    renamed: dict[str, str]
    ids_after: tuple[str, ...]


def plan_edit(snapshot: NotebookSnapshot, request: EditRequest, reads: NotebookReads, *,
              address: str) -> EditPlan:
    """Resolve and check ``request`` against ``snapshot``; raises NotebookError."""
    cells = snapshot.cells
    # Whole-notebook checks first: a cell reference is resolved (and its errors, which may
    # quote cells, are shown) only once the session has seen every cell as it is now.
    problem = reads.check_edit(snapshot, None, address=address)
    if problem is not None:
        raise NotebookError(*problem)
    target = _resolve(snapshot, request.cell, address) if request.cell is not None else None
    if request.mode != "insert" and target is None:
        raise NotebookError(ErrorCode.INVALID_TOOL_PARAMS,
                            f"edit_mode {request.mode} needs cell_id: the cell to change.")
    after = _resolve(snapshot, request.after, address) if request.after is not None else None
    index = snapshot.index_of(target) if target is not None else None
    cell = cells[index] if index is not None and request.mode != "insert" else None
    problem = reads.check_edit(snapshot, target if request.mode != "insert" else None,
                               address=address)
    if problem is not None:
        raise NotebookError(*problem)
    if request.mode == "insert":
        kind = request.cell_type or "code"
        return EditPlan("insert", "insert", new_cell_id(set(snapshot.display_ids())), kind, None,
                        "", request.new_source or "", target, snapshot, address)
    assert cell is not None
    assert target is not None
    if request.mode == "delete":
        return EditPlan("delete", "delete", target, cell.cell_type, None, cell.source, "",
                        None, snapshot, address)
    if request.mode == "move":
        if after == target:
            raise NotebookError(ErrorCode.EDIT_NO_CHANGE,
                                f"Cannot move cell {target} after itself; give after_cell_id "
                                "another cell, or null for the top.")
        ids = snapshot.display_ids()
        index = ids.index(target)
        if (after is None and index == 0) or (after is not None and index > 0
                                              and ids[index - 1] == after):
            raise NotebookError(ErrorCode.EDIT_NO_CHANGE,
                                f"Cell {target} is already there; nothing to move.")
        return EditPlan("move", "move", target, cell.cell_type, None, cell.source, cell.source,
                        after, snapshot, address)
    kind = request.cell_type or cell.cell_type
    source = cell.source if request.new_source is None else request.new_source
    if kind == cell.cell_type and source == cell.source:
        raise NotebookError(ErrorCode.EDIT_NO_CHANGE,
                            f"Cell {target} already has exactly this source and type; nothing "
                            "was changed.")
    action = "set_type" if source == cell.source else "edit"
    return EditPlan("replace", action, target, kind,
                    cell.cell_type if kind != cell.cell_type else None, cell.source, source,
                    None, snapshot, address)


async def apply_edit(doc: NotebookDocument, plan: EditPlan, reads: NotebookReads, *,
                     source: str | None = None, changes: NotebookChanges | None = None,
                     notebook: str = "the notebook") -> Applied:
    """Re-check ``plan`` against the notebook now and apply it; ``source`` is the user's edited
    proposal. Raises NotebookError; on a refusal nothing is changed. A landed edit is recorded
    in ``changes`` (``notebook`` names the notebook there), so the user can undo it."""
    text = plan.proposed if source is None else source
    now = await doc.read()
    problem = reads.check_edit(now, plan.check_id, address=plan.address)
    if problem is not None:
        raise NotebookError(*problem)
    if plan.cell_id is not None and plan.mode != "insert":
        index = now.index_of(plan.cell_id)
        if index is None or now.cells[index].source != plan.original:
            raise NotebookError(ErrorCode.FILE_CHANGED_SINCE_READ,
                                f"Cell {plan.cell_id} changed while this edit waited for approval; "
                                f"nothing was changed. Read it again with read_file "
                                f"{plan.address}:cells={plan.cell_id}, then retry.")
    renamed: dict[str, str] = {}
    if not now.persistent_ids and now.nbformat == 4:
        now, renamed = await _persist_ids(doc, now, reads)
    cell_id = renamed.get(plan.cell_id, plan.cell_id) if plan.cell_id else None
    anchor = renamed.get(plan.anchor, plan.anchor) if plan.anchor else None
    ids = now.display_ids()
    if plan.mode == "insert":
        if cell_id is None or cell_id in ids:
            cell_id = new_cell_id(set(ids))
        await doc.insert(anchor, plan.cell_type, text, cell_id)
        ids.insert(0 if anchor is None else ids.index(anchor) + 1, cell_id)
    elif plan.mode == "delete":
        assert cell_id is not None
        await doc.delete(cell_id)
        ids.remove(cell_id)
    elif plan.mode == "move":
        assert cell_id is not None
        await doc.move(cell_id, anchor)
        ids.remove(cell_id)
        ids.insert(0 if anchor is None else ids.index(anchor) + 1, cell_id)
    else:
        assert cell_id is not None
        if plan.old_type is not None:
            await doc.set_type(cell_id, plan.cell_type)
        if text != plan.original:
            await doc.replace_source(cell_id, text, clear_outputs=plan.cell_type == "code")
    if not doc.live:
        await doc.save()
    assert cell_id is not None
    sources = {} if plan.mode == "delete" else {cell_id: text}
    reads.record_edit(now.path, ids, sources)
    if changes is not None:
        changes.record(doc, now, mode=plan.mode, cell_id=cell_id,
                       after=_left(plan, now, cell_id, text),
                       after_index=ids.index(cell_id) if cell_id in ids else None,
                       notebook=notebook)
    return Applied(replace(plan, proposed=text), cell_id, text, renamed, tuple(ids))


def _left(plan: EditPlan, before: NotebookSnapshot, cell_id: str, text: str) -> CellData | None:
    """The cell as the edit left it (None when it deleted the cell)."""
    if plan.mode == "delete":
        return None
    index = before.index_of(cell_id)
    old = before.cells[index] if index is not None and plan.mode != "insert" else None
    if plan.mode == "move" and old is not None:
        return old
    cleared = plan.cell_type == "code" and (old is None or text != old.source
                                            or old.cell_type != "code")
    return CellData(id=cell_id, cell_type=plan.cell_type, source=text,
                    metadata=old.metadata if old is not None else {},
                    outputs=[] if cleared or old is None else old.outputs,
                    execution_count=None if cleared or old is None else old.execution_count)


async def _persist_ids(doc: NotebookDocument, before: NotebookSnapshot,
                       reads: NotebookReads) -> tuple[NotebookSnapshot, dict[str, str]]:
    """Give a 4.4 notebook saved ids; map the ids the session knew to the new ones."""
    try:
        await doc.ensure_persistent_ids()
    except NotebookError:
        raise
    except Exception as err:
        raise NotebookError(ErrorCode.NOTEBOOK_EDIT_FAILURE,
                            f"Could not give the notebook's cells persistent ids ({err}); nothing "
                            "was changed.") from err
    after = await doc.read()
    old, new = before.display_ids(), after.display_ids()
    if len(old) != len(new) or any(
            a.source != b.source for a, b in zip(before.cells, after.cells, strict=True)):
        raise NotebookError(ErrorCode.FILE_CHANGED_SINCE_READ,
                            "The notebook changed while its cells were given ids; nothing else was "
                            "changed. Read it again with read_file, then retry.")
    renamed = {a: b for a, b in zip(old, new, strict=True) if a != b}
    reads.rekey(before.path, renamed)
    return after, renamed


def _resolve(snapshot: NotebookSnapshot, ref: str, address: str) -> str:
    found = resolve_cell(snapshot, ref, where=address)
    if found.index is None:
        raise NotebookError(found.error or ErrorCode.NOTEBOOK_CELL_NOT_FOUND, found.message)
    return found.cell_id


def order_lines(snapshot: NotebookSnapshot, ids: Sequence[str] | None = None) -> str:
    """The cell order as one line per cell (``id  first line``), for a move's diff."""
    by_id = dict(zip(snapshot.display_ids(), snapshot.cells, strict=True))
    lines = []
    for cell_id in ids if ids is not None else by_id:
        cell = by_id[cell_id]
        first = cell.source.strip().split("\n", 1)[0][:60]
        lines.append(f"{cell_id}  [{cell.cell_type}] {first}\n")
    return "".join(lines)
