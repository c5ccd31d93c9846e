"""run_cell: run a notebook cell (or a snippet) in the kernel and see its outputs.

With ``cell_id`` the cell's current source runs in the user's namespace, its outputs are written
into that cell of the notebook (live in the browser, or into the .ipynb), and they come back to
the model: text capped, images as image parts within a budget. With ``code`` the snippet runs
the same way but its outputs go into no cell. The user approves the exact code first (exec tier).

How the host must run the code. The agent itself runs inside a notebook cell that is awaiting
on the kernel's event loop, so the shell channel is busy with that cell's execute_request: a new
execute_request (from the frontend, or a client of this kernel) would queue behind the agent's
own cell and never start while the agent waits for it. So ``KernelProvider.run_code`` runs the
code in-process from the awaiting cell: ``await shell.run_cell_async(code, store_history=True)``
(or compile + ``exec``/``eval`` in ``user_ns`` for a plain snippet) with stdout, stderr and the
display publisher captured for the duration of the call, and returns the captured outputs as
nbformat dicts with the execution count and the error output. The code runs on the kernel's own
thread and loop, sees the user's variables, and gets Kernel -> Interrupt like any cell.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from agent_ext.core import (
    ConfirmationDetails,
    ErrorCode,
    ExecControl,
    Kind,
    Params,
    Part,
    TextPart,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.core.kernel import RunOutput, kernel_of
from agent_ext.core.result import ImagePart
from agent_ext.notebook.document import NotebookDocument, NotebookError
from agent_ext.notebook.ids import resolve_cell
from agent_ext.notebook.outputs import ImageBudget, output_pieces
from agent_ext.notebook.reading import sync_read_cache
from agent_ext.notebook.session import current_notebook, notebook_provider

from ._render import shown

HEAD_CHARS = 6_000
TAIL_CHARS = 14_000


class RunCellParams(Params):
    cell_id: str | None = Field(
        default=None, description="The id read_file shows, or [12] for execution count 12.")
    code: str | None = Field(default=None, description="Python to run instead of a cell.")


class RunCellTool(Tool[RunCellParams]):
    name = "run_cell"
    description = (
        "Run a cell of this notebook, or Python code, in the user's kernel and return the "
        "output. To inspect a variable without running code, read var://<name>.")
    kind = Kind.EXECUTE
    params_model = RunCellParams
    search_hint = "execute run cell jupyter kernel python evaluate code"
    max_output_chars = math.inf  # bounded here: head and tail of the text, an image budget

    def check(self, params: RunCellParams, ctx: ToolContext) -> str | None:
        if (params.cell_id is None) == (params.code is None):
            return "give exactly one of `cell_id` (a cell to run) or `code` (a snippet)"
        if params.code is not None and not params.code.strip():
            return "`code` is empty"
        return None

    def invocation(self, params: RunCellParams, ctx: ToolContext) -> RunCellInvocation:
        return RunCellInvocation(self, params, ctx)


@dataclass(frozen=True)
class _Target:
    """What will run: the code and, for a cell, the document, its id and the source approved."""

    code: str
    doc: NotebookDocument | None = None
    cell_id: str | None = None


class RunCellInvocation(ToolInvocation[RunCellParams]):
    """One run: the code fixed when the user is asked, checked unchanged right before running."""

    def __init__(self, tool: Tool[RunCellParams], params: RunCellParams,
                 ctx: ToolContext) -> None:
        super().__init__(tool, params, ctx)
        self._target: _Target | NotebookError | None = None

    def description(self) -> str:
        return (f"run_cell {self.params.cell_id}" if self.params.cell_id is not None
                else "run_cell (code)")

    def locations(self) -> list[Path]:
        if self.params.cell_id is None:
            return []
        try:  # looked up, never opened: the permission check asks before anything is read
            found = notebook_provider(self.ctx).current_path()
        except Exception:  # noqa: BLE001  no current notebook: nothing to match rules on
            return []
        return [Path(found)] if found else []

    def classifier_input(self) -> str:
        return self.params.code or f"run notebook cell {self.params.cell_id}"

    async def target(self) -> _Target:
        """What this call runs, resolved once; raises NotebookError."""
        if self._target is None:
            try:
                self._target = await self._resolve()
            except NotebookError as err:
                self._target = err
        if isinstance(self._target, NotebookError):
            raise self._target
        return self._target

    async def _resolve(self) -> _Target:
        if self.params.code is not None:
            return _Target(self.params.code)
        assert self.params.cell_id is not None
        doc = current_notebook(self.ctx)
        snapshot = await doc.read()
        found = resolve_cell(snapshot, self.params.cell_id, where="the current notebook")
        if found.index is None:
            raise NotebookError(found.error or ErrorCode.NOTEBOOK_CELL_NOT_FOUND, found.message)
        cell = snapshot.cells[found.index]
        if cell.cell_type != "code":
            raise NotebookError(ErrorCode.INVALID_TOOL_PARAMS,
                                f"Cell {found.cell_id} is a {cell.cell_type} cell; only code cells "
                                "run. Change its type with notebook_edit first if you mean to.")
        return _Target(cell.source, doc, found.cell_id)

    async def preflight(self) -> ToolResult | None:
        try:
            await self.target()
        except NotebookError as err:
            return ToolResult.fail(err.code, err.message)
        if kernel_of(self.ctx.services) is None:
            return _no_kernel()
        return None

    async def confirmation_details(self) -> ConfirmationDetails:
        try:
            target = await self.target()
        except NotebookError as err:
            return ConfirmationDetails(kind="info", title="run_cell will fail",
                                       summary=err.message, tool_name=self.tool.name)
        where = self._notebook_name(target)
        title = (f"Run cell {target.cell_id} in {where}" if target.cell_id
                 else "Run code in the kernel")
        return ConfirmationDetails(
            kind="exec", title=title, summary=title, tool_name=self.tool.name,
            command=target.code, file_path=target.doc.path if target.doc else None,
            extra={"cell_id": target.cell_id, "notebook": target.doc.path if target.doc else None,
                   "language": "python"})

    async def execute(self, control: ExecControl) -> ToolResult:
        kernel = kernel_of(self.ctx.services)
        if kernel is None:
            return _no_kernel()
        try:
            target = await self.target()
            if target.doc is not None and target.cell_id is not None:
                await self._still_same(target)
        except NotebookError as err:
            return ToolResult.fail(err.code, err.message)
        out = await kernel.run_code(target.code)
        note = await self._store(target, out)
        return _result(target, out, note)

    async def _still_same(self, target: _Target) -> None:
        assert target.doc is not None
        assert target.cell_id is not None
        snapshot = await target.doc.read()
        index = snapshot.index_of(target.cell_id)
        if index is None or snapshot.cells[index].source != target.code:
            raise NotebookError(ErrorCode.FILE_CHANGED_SINCE_READ,
                                f"Cell {target.cell_id} changed (or went away) while this run "
                                "waited for approval; nothing was run. Read it again with "
                                "read_file, then retry.")

    async def _store(self, target: _Target, out: RunOutput) -> str:
        """Write the outputs into the cell; a note for the model when that was not possible."""
        if target.doc is None or target.cell_id is None:
            return ""
        try:
            await self._still_same(target)
            await target.doc.set_outputs(target.cell_id, out.outputs, out.execution_count)
            if not target.doc.live:
                await target.doc.save()
        except NotebookError as err:
            return f"[The outputs were not written into the notebook: {err.message}]"
        except Exception as err:  # noqa: BLE001  the run happened; report, don't fail it
            return (f"[The outputs were not written into the notebook: "
                    f"{type(err).__name__}: {err}]")
        sync_read_cache(self.ctx, target.doc)
        return ""

    def _notebook_name(self, target: _Target) -> str:
        if target.doc is None or not target.doc.path:
            return "the current notebook"
        return shown(Path(target.doc.path), self.ctx.cwd)


def _no_kernel() -> ToolResult:
    return ToolResult.fail(ErrorCode.EXECUTION_FAILED,
                           "run_cell needs a kernel, and this session has none (the agent is not "
                           "running inside a notebook). Use the shell tool to run Python instead.")


def _result(target: _Target, out: RunOutput, note: str) -> ToolResult:
    where = f"out://{target.cell_id}" if target.cell_id else ""
    pieces = output_pieces(out.outputs, ImageBudget(), where=where)
    text = _head_tail("\n".join(p for p in pieces if isinstance(p, str)), where)
    count = f" [{out.execution_count}]" if out.execution_count is not None else ""
    what = f"Ran cell {target.cell_id}{count}" if target.cell_id else f"Ran the code{count}"
    if out.error is not None:
        ename = out.error.get("ename", "an error")
        head = f"{what}; it raised {ename}: {out.error.get('evalue', '')}".rstrip(": ")
    else:
        head = f"{what}."
    body = f"{head}\nOutput:\n{text}" if text else f"{head} It printed nothing."
    if note:
        body += f"\n{note}"
    parts: list[Part] = [TextPart(body), *(p for p in pieces if isinstance(p, ImagePart))]
    display = body if len(parts) == 1 else f"{body}\n[{len(parts) - 1} image(s)]"
    file_paths = [os.fspath(target.doc.path)] if target.doc is not None and target.doc.path else []
    return ToolResult(llm_content=body if len(parts) == 1 else parts, display=display,
                      file_paths=file_paths)


def _head_tail(text: str, where: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    left = len(text) - HEAD_CHARS - TAIL_CHARS
    how = f" Read all of it with read_file {where}." if where else ""
    return (f"{text[:HEAD_CHARS]}\n... [{left:,} characters of output left out.{how}] ...\n"
            f"{text[-TAIL_CHARS:]}")
