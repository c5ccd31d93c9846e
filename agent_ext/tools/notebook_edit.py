"""notebook_edit: replace, insert, delete or move a notebook cell by id, after the user approves.

By default the notebook the agent runs in (the live one in the browser when the labextension is
there, else its .ipynb file); other notebooks by path. Edits are strict: the session must have
seen every cell, the cell ids must be those it saw, and the target cell's source must be as it
was read; the agent's own edits count as read. The user approves a per-cell diff and may edit the
proposed source first. A notebook without persistent ids (nbformat 4.4) gets them before the
first edit, and the model is told the new ids.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from difflib import SequenceMatcher
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from agent_ext.core import (
    ConfirmationDetails,
    ErrorCode,
    ExecControl,
    Kind,
    Params,
    ParamsError,
    RememberedCall,
    Tier,
    Tool,
    ToolContext,
    ToolRefusal,
    ToolResult,
)
from agent_ext.fs.matching import ALIKE
from agent_ext.notebook.document import CellData, NotebookDocument, NotebookError
from agent_ext.notebook.edits import (
    Applied,
    EditPlan,
    EditRequest,
    apply_edit,
    order_lines,
    plan_edit,
)
from agent_ext.notebook.labels import cell_label, label_of
from agent_ext.notebook.reading import notebook_read_result, sync_read_cache
from agent_ext.notebook.session import (
    notebook_changes,
    notebook_provider,
    notebook_reads,
    open_notebook,
)

from ._change import SHOWN_ON_REFUSAL_CHARS, PlannedInvocation, read_now
from ._render import shown, unified_diff
from ._targets import refuse_control_characters
from .write_file import KEEP_SHARE, kept_lines

_RENAMES_SHOWN = 20
#: A cell read back after an edit is quoted whole up to this size, else named by its ends.
_ECHO_CHARS = 1_000
#: Line pairs the fragment rule compares at the most: a few tenths of a second of difflib.
_RETYPED_PAIRS = 10_000


class NotebookEditParams(Params):
    notebook_path: str | None = Field(
        default=None, description="The .ipynb file; omit it for the notebook you run in.")
    cell_id: str | None = Field(
        default=None,
        description="The id read_file shows, or [12] for execution count 12. insert: the cell "
                    "to insert after (omit for the top).")
    new_source: str | None = Field(default=None, description="The whole new source.")
    cell_type: Literal["code", "markdown", "raw"] | None = Field(default=None)
    edit_mode: Literal["replace", "insert", "delete", "move"] = Field(default="replace")
    after_cell_id: str | None = Field(
        default=None, description="move: the cell to put it after; omit for the top.")

    @field_validator("notebook_path", "cell_id", "after_cell_id", "cell_type", mode="before")
    @classmethod
    def _empty_is_absent(cls, value: object) -> object:
        """Small models fill every optional parameter, with "" for the ones they mean to leave
        out; for a path, an id or a type that means the same as leaving it out."""
        return None if isinstance(value, str) and not value.strip() else value


class NotebookEditTool(Tool[NotebookEditParams]):
    name = "notebook_edit"
    description = (
        "Replace, insert, delete or move one notebook cell, chosen by the cell id read_file "
        "shows. Read the whole notebook first; a cell changed since you read it is refused.")
    kind = Kind.EDIT
    params_model = NotebookEditParams
    search_hint = "jupyter ipynb cell notebook insert delete move replace markdown code"
    compact_description = (
        "Fix or change a notebook cell: cell_id as read_file shows it, new_source the whole "
        "new source of the cell. Also inserts, deletes or moves cells (edit_mode).")
    compact_params: ClassVar[Mapping[str, str]] = {
        "cell_id": "The cell's id, as read_file shows it.",
        "new_source": "The complete new source of the cell."}

    def check(self, params: NotebookEditParams, ctx: ToolContext) -> str | None:
        mode = params.edit_mode
        path = _path_text(params.notebook_path)
        try:
            refuse_control_characters(path or "", "`notebook_path`")
        except ParamsError as err:
            return str(err)
        if path is not None and not path.lower().endswith(".ipynb"):
            if ctx.resolve(path).is_dir():
                return (f"`notebook_path` {path!r} is a folder, not a notebook: leave "
                        "notebook_path out to edit the notebook you run in, or give the path "
                        "of a .ipynb file")
            return (f"`notebook_path` {path!r} is not a .ipynb notebook; use edit or write_file "
                    "for other files")
        if mode in ("replace", "delete", "move") and not params.cell_id:
            return f"edit_mode {mode} needs `cell_id`: the cell to change"
        if mode == "insert" and params.new_source is None:
            return "edit_mode insert needs `new_source`: the new cell's content"
        if mode == "replace" and params.new_source is None and params.cell_type is None:
            return "edit_mode replace needs `new_source` (or `cell_type` to change only the type)"
        if params.after_cell_id is not None and mode not in ("move", "insert"):
            return (f"`after_cell_id` only applies to move (and insert): {mode} keeps the cell "
                    "where it is, so send the same call without `after_cell_id`")
        if (mode == "insert" and params.after_cell_id is not None and params.cell_id is not None
                and params.after_cell_id != params.cell_id):
            return ("for insert, `cell_id` is the cell to insert after; give it once, not a "
                    "different `after_cell_id` too")
        return None

    def invocation(self, params: NotebookEditParams,
                   ctx: ToolContext) -> NotebookEditInvocation:
        text = _path_text(params.notebook_path)
        return NotebookEditInvocation(self, params, ctx, ctx.resolve(text) if text else None)


class NotebookEditInvocation(PlannedInvocation[NotebookEditParams, EditPlan]):
    """One cell edit: planned once for the diff, re-checked and applied after approval."""

    def __init__(self, tool: Tool[NotebookEditParams], params: NotebookEditParams,
                 ctx: ToolContext, path: Path | None) -> None:
        super().__init__(tool, params, ctx)
        self.path = path
        self._doc: NotebookDocument | None = None
        self._current: str | None = None

    def description(self) -> str:
        if isinstance(self._plan, EditPlan):
            plan = self._plan
            return f"notebook_edit {_verb(plan)} {plan_label(plan)} in {self._name()}"
        target = self.params.cell_id or ("top" if self.params.edit_mode == "insert" else "")
        known = self._position(target) if target and target != "top" else None
        return f"notebook_edit {self.params.edit_mode} {known or target} in {self._name()}"

    def _position(self, cell_id: str) -> str | None:
        """``cell N`` from the session's last read of the notebook, when it knows the cell."""
        path = self._notebook_path()
        state = notebook_reads(self.ctx).state(path) if path is not None else None
        if state is None or cell_id not in state.ids:
            return None
        return f"cell {state.ids.index(cell_id) + 1}"

    def locations(self) -> list[Path]:
        """The notebook's path; for the open notebook, where the session knows it is (looked
        up, never opened or read: the permission check asks before ``preflight`` reads).

        When the open notebook's path is not known the address ``nb://`` stands in, which the
        permission layer asks about rather than allowing.
        """
        if self.path is not None:
            return [self.path]
        if self._current is None:
            try:
                found = notebook_provider(self.ctx).current_path()
            except Exception:  # noqa: BLE001  a provider that cannot tell: the place is unknown
                found = None
            self._current = found or ""
        return [Path(self._current)] if self._current else [Path("nb://")]

    def tier(self) -> Tier:
        return Tier.WRITE

    def _name(self) -> str:
        if self.path is not None:
            return shown(self.path, self.ctx.cwd)
        found = self._notebook_path()  # the open notebook: the user knows it by its name
        return Path(found).name if found else "the current notebook"

    def _address(self) -> str:
        return "nb://" if self.path is None else os.fspath(self.path)

    def _request(self) -> EditRequest:
        p = self.params
        anchor = p.cell_id if p.cell_id is not None else p.after_cell_id
        if p.edit_mode == "insert":
            return EditRequest("insert", anchor, p.new_source, p.cell_type)
        return EditRequest(p.edit_mode, p.cell_id, p.new_source, p.cell_type, p.after_cell_id)

    def document(self) -> NotebookDocument:
        if self._doc is None:
            self._doc = open_notebook(self.ctx, os.fspath(self.path) if self.path else None)
        return self._doc

    async def _make_plan(self) -> EditPlan:
        path = self._notebook_path()
        unread = (notebook_reads(self.ctx).unread(path, address=self._address())
                  if path is not None else None)
        if unread is not None:
            raise NotebookError(*unread)
        snapshot = await self.document().read()
        plan = plan_edit(snapshot, self._request(), notebook_reads(self.ctx),
                         address=self._address())
        if self.ctx.registry is not None and self.ctx.registry.profile == "compact":
            _refuse_a_fragment(plan)
        return plan

    async def _refused(self, problem: ToolRefusal) -> ToolRefusal:
        """An edit of a notebook this session never read, where a read of it would run unasked:
        it is read now (the read is recorded, so the next try can land), and the model
        remembers the call as that read."""
        path = self._notebook_path()
        if (problem.code != ErrorCode.EDIT_REQUIRES_PRIOR_READ or path is None
                or notebook_reads(self.ctx).state(path) is not None
                or not self._readable_unasked(Path(path))):
            return problem
        read = await notebook_read_result(self.ctx, path)
        if read.is_error or not isinstance(read.llm_content, str) or (
                len(read.llm_content) > SHOWN_ON_REFUSAL_CHARS):
            return problem
        where = self._address() if self.path is not None else self._name()
        remembered = RememberedCall("read_file", {"file_path": self.params.notebook_path or path},
                                    read.llm_content)
        return read_now(problem, where, read.llm_content, remembered, against="these cells")

    def _preparation_failure(self, exc: Exception) -> ToolRefusal:
        return NotebookError(ErrorCode.NOTEBOOK_EDIT_FAILURE,
                             f"Could not prepare the notebook edit: {type(exc).__name__}: {exc}")

    def _refusal_path(self) -> str | None:
        return self._notebook_path()

    async def _plan_details(self, plan: EditPlan) -> ConfirmationDetails:
        diff, added, removed = _diff(plan, self._label(plan))
        upgrade = not plan.snapshot.persistent_ids and plan.snapshot.nbformat == 4
        label = plan_label(plan)
        summary = f"notebook_edit {self._name()}: {_verb(plan)} {label} (+{added} -{removed})"
        if upgrade:
            summary += (". This notebook has no saved cell ids (nbformat 4.4): approving also "
                        "gives every cell an id and saves it as nbformat 4.5.")
        return ConfirmationDetails(
            kind="edit", title=f"{_verb(plan).capitalize()} {label} in {self._name()}",
            summary=summary, tool_name=self.tool.name, file_path=self._notebook_path(),
            diff=diff,
            original=plan.original if plan.takes_source else None,
            proposed=plan.proposed if plan.takes_source else None,
            extra={"cell_id": plan.cell_id, "cell_label": label,
                   "cell_position": plan_position(plan), "cell_type": plan.cell_type,
                   "previous_cell_type": plan.old_type, "notebook": self._notebook_path(),
                   "action": plan.action, "language": plan.snapshot.language,
                   "added": added, "removed": removed, "created": False,
                   "adds_cell_ids": upgrade})

    def _takes_modification(self) -> bool:
        if self.params.edit_mode not in ("replace", "insert"):
            return False
        return not (isinstance(self._plan, EditPlan) and not self._plan.takes_source)

    async def execute(self, control: ExecControl) -> ToolResult:
        try:
            plan = await self.plan()
            applied = await apply_edit(self.document(), plan, notebook_reads(self.ctx),
                                       source=self._override,
                                       changes=notebook_changes(self.ctx), notebook=self._name())
        except ToolRefusal as err:
            return err.result()
        sync_read_cache(self.ctx, self.document())
        diff, _, _ = _diff(applied.plan, self._label(applied.plan))
        modified = self._override is not None and self._override != plan.proposed
        path = self._notebook_path()
        landed = await read_back(self.document(), applied)
        return ToolResult(llm_content=self._message(applied, modified) + "\n\n" + landed,
                          display=diff or self._message(applied, modified),
                          file_paths=[path] if path else [])

    def _notebook_path(self) -> str | None:
        found = [p for p in self.locations() if p != Path("nb://")]
        return os.fspath(found[0]) if found else None

    def _label(self, plan: EditPlan) -> str:
        return f"{self._name()} {plan_label(plan).split(' · `', 1)[0]}"

    def _message(self, applied: Applied, modified: bool) -> str:
        plan = applied.plan
        where = self._name()
        cid = applied.cell_id
        anchor = applied.renamed.get(plan.anchor, plan.anchor) if plan.anchor else None
        if plan.mode == "insert":
            spot = f"after cell {anchor}" if anchor else "at the top"
            head = f"Inserted {plan.cell_type} cell {cid} {spot} in {where}."
        elif plan.mode == "delete":
            head = f"Deleted cell {cid} from {where}."
        elif plan.mode == "move":
            spot = f"after cell {anchor}" if anchor else "to the top"
            head = f"Moved cell {cid} {spot} in {where}."
        elif plan.action == "set_type":
            head = (f"Changed cell {cid} in {where} from {plan.old_type} to {plan.cell_type}; "
                    "it keeps its id.")
        else:
            retyped = f", now a {plan.cell_type} cell" if plan.old_type else ""
            cleared = "; its outputs were cleared" if plan.cell_type == "code" else ""
            head = f"Updated cell {cid} in {where}{retyped}{cleared}."
        notes = [head]
        if applied.renamed:
            pairs = ", ".join(f"{a} -> {b}" for a, b in
                              list(applied.renamed.items())[:_RENAMES_SHOWN])
            more = (" (read the notebook to see the rest)"
                    if len(applied.renamed) > _RENAMES_SHOWN else "")
            notes.append(f"This notebook had no saved cell ids (nbformat 4.4), so every cell was "
                         f"given one and it was saved as nbformat 4.5: {pairs}{more}. Use these "
                         "ids from now on.")
        if modified:
            notes.append("The user edited your proposed source before approving it, so the cell "
                         "holds their version, not yours:\n```\n" + applied.source + "\n```")
        return "\n\n".join(notes)


async def read_back(doc: NotebookDocument, applied: Applied) -> str:
    """What the notebook holds for the edited cell now, read again after the edit: the model
    is told what landed, not that it was done."""
    cid = applied.cell_id
    try:
        snapshot = await doc.read()
    except Exception as err:  # noqa: BLE001  the edit was made; only its check failed
        return (f"Reading the notebook back failed ({type(err).__name__}: {err}), so the edit "
                "is not confirmed; read the cell to check it.")
    ids = snapshot.display_ids()
    if applied.plan.mode == "delete":
        return (f"Read back: cell {cid} is no longer in the notebook ({len(ids)} cells)."
                if cid not in ids else
                f"Read back: cell {cid} is still in the notebook; the delete did not land.")
    if cid not in ids:
        return f"Read back: cell {cid} is not in the notebook; the edit did not land."
    index = ids.index(cid)
    cell = snapshot.cells[index]
    where = f"cell {cid} (position {index}, a {cell.cell_type} cell)"
    if cell.source != applied.source:
        return (f"Read back: {where} does not hold what was written; it holds:\n```\n"
                f"{cell.source}\n```")
    if len(cell.source) <= _ECHO_CHARS:
        return f"Read back: {where} now holds:\n```\n{cell.source}\n```"
    lines = cell.source.splitlines()
    return (f"Read back: {where} now holds the {len(lines)} lines written, from "
            f"`{lines[0][:80]}` to `{lines[-1][:80]}`.")


def _refuse_a_fragment(plan: EditPlan) -> None:
    """Refuse a replace that makes the cell shorter while only keeping or retyping its lines,
    or keeping fewer than half of them: a small model sends the line it fixed (or kept) as the
    whole cell, which would lose the others. Applied under the compact profile, as the
    fragment rule for whole-file writes is."""
    if plan.mode != "replace" or not plan.takes_source:
        return
    old, new, kept = kept_lines(plan.original, plan.proposed)
    if not new or len(new) >= len(old):
        return
    if not _only_retyped(old, new) and kept >= KEEP_SHARE * len(old):
        return  # most of the cell kept, with new code: a deliberate rewrite
    raise NotebookError(
        ErrorCode.NOTEBOOK_EDIT_FAILURE,
        f"Not changed: cell {plan.cell_id} has {len(old)} lines and new_source only "
        f"{len(new)}, so {len(old) - kept} of its lines would be lost. new_source is the cell's "
        "whole new source: send all of its lines, with the line to fix changed.")


def _only_retyped(old: list[str], new: list[str]) -> bool:
    """Whether every line of ``new`` is a line of ``old``, kept or retyped (difflib ratio at
    least ``ALIKE``). Each changed line is compared with every old line, so past
    ``_RETYPED_PAIRS`` pairs (hundreds of changed lines: a rewrite, not a fragment) the answer
    is no, and the share of kept lines alone decides; a shrinking cell of a thousand unlike
    lines would otherwise hold the kernel's event loop for half a minute."""
    present = set(old)
    changed = [line for line in new if line not in present]
    if len(changed) * len(old) > _RETYPED_PAIRS:
        return False
    return all(any(SequenceMatcher(None, line, was).ratio() >= ALIKE for was in old)
               for line in changed)


def _path_text(value: str | None) -> str | None:
    """The notebook path as given; ``nb://`` means the current notebook, ``nb://x.ipynb`` x."""
    if value is None:
        return None
    text = value.strip()
    if text.lower().startswith("nb://"):
        text = text[len("nb://"):]
    return text or None


def plan_position(plan: EditPlan) -> int:
    """The 1-based position the edited cell has (an inserted one: where it goes)."""
    snapshot = plan.snapshot
    if plan.mode == "insert":
        anchor = snapshot.index_of(plan.anchor) if plan.anchor is not None else None
        return 1 if anchor is None else anchor + 2
    index = snapshot.index_of(plan.cell_id) if plan.cell_id is not None else None
    return 1 if index is None else index + 1


def plan_label(plan: EditPlan) -> str:
    """The edited cell as the user sees it; a new cell by where it goes and what it holds."""
    if plan.mode == "insert":
        new = CellData(id=plan.cell_id, cell_type=plan.cell_type, source=plan.proposed)
        return "new " + label_of(plan_position(plan) - 1, new)
    return cell_label(plan.snapshot, plan.cell_id)


def _verb(plan: EditPlan) -> str:
    return {"edit": "edit", "insert": "insert", "delete": "delete", "move": "move",
            "set_type": "change the type of"}[plan.action]


def _diff(plan: EditPlan, label: str) -> tuple[str, int, int]:
    if plan.mode == "move":
        ids = plan.snapshot.display_ids()
        assert plan.cell_id is not None
        after = [i for i in ids if i != plan.cell_id]
        after.insert(0 if plan.anchor is None else after.index(plan.anchor) + 1, plan.cell_id)
        return unified_diff(f"{label} (cell order)", order_lines(plan.snapshot),
                            order_lines(plan.snapshot, after))
    original = plan.original
    proposed = plan.proposed
    if plan.old_type is not None:
        original = f"[{plan.old_type}]\n{original}"
        proposed = f"[{plan.cell_type}]\n{proposed}"
    return unified_diff(label, original, proposed)
