"""Context accounting and compaction, and where the agent is when a run starts.

Where the agent is (:func:`where_lines`): the id and position of the agent's own cell, the cell
above it with its output, the kernel's last error, and which cells the user changed since the
agent last read the notebook. The Jupyter host gathers the cell id and the error; this module
reads the notebook through the session's provider and says it in a few trimmed lines.

Tokens are the provider's figures when it reports usage, else an estimate (about four characters
a token, a fixed cost per image). When the next request would pass ``compact_at`` of the window,
older turns are summarised by the model itself, and large tool results that stay are replaced
by pointers to files the model can read back.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

from agent_ext.core import ImagePart, TextPart, ToolContext
from agent_ext.core.budget import SpillError, SpillStore
from agent_ext.core.budget.text import persisted_stub
from agent_ext.core.kernel import KernelError, Place
from agent_ext.models import Message, ModelRequest, ToolReturn
from agent_ext.notebook.document import CellData, NotebookSnapshot
from agent_ext.notebook.outputs import outputs_text, strip_ansi
from agent_ext.notebook.reads import CellChanges
from agent_ext.notebook.session import notebook_provider, notebook_reads

IMAGE_TOKENS = 1_500
SUMMARY_PROMPT = (
    "Summarise the conversation so far for your own later use: the user's goals and "
    "preferences, decisions made, files and notebook cells read or changed (with ids), commands "
    "run and their outcome, open problems and what remains to do. Be concise and factual; do not "
    "call tools."
)
SUMMARY_HEADER = "[agent_ext: earlier conversation, summarised to save context]\n"


@dataclass(frozen=True)
class ContextLimits:
    """The model's window and when to compact."""

    window_tokens: int = 128_000
    compact_at: float = 0.8
    #: User prompts kept verbatim (with everything after them) when compacting.
    keep_recent_prompts: int = 2
    #: Tool results longer than this are replaced by file pointers when compacting.
    pointer_chars: int = 4_000


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def estimate_message(m: Message) -> int:
    total = 4
    for p in m.parts:
        total += estimate_tokens(p.text) if isinstance(p, TextPart) else IMAGE_TOKENS
    for c in m.tool_calls:
        total += estimate_tokens(c.name + c.arguments) + 4
    for r in m.tool_returns:
        for p in r.content:
            total += estimate_tokens(p.text) if isinstance(p, TextPart) else IMAGE_TOKENS
    return total


def estimate_request(request: ModelRequest) -> int:
    tools = json.dumps([t.to_dict() for t in request.tools], ensure_ascii=False)
    return (estimate_tokens(request.system) + estimate_tokens(tools)
            + sum(estimate_message(m) for m in request.messages))


def split_for_compaction(messages: list[Message], keep_prompts: int) -> int:
    """Where the kept tail starts: at a user prompt, never between a call and its result."""
    prompts = [i for i, m in enumerate(messages) if m.role == "user" and not m.tool_returns]
    if len(prompts) <= keep_prompts:
        return 0
    return prompts[-keep_prompts]


def pointerize(messages: list[Message], store: SpillStore, limit: int) -> list[Message]:
    """Replace tool results over ``limit`` characters by pointers to saved copies."""
    out = []
    for m in messages:
        if not m.tool_returns:
            out.append(m)
            continue
        returns = []
        for r in m.tool_returns:
            text = "\n".join(p.text for p in r.content if isinstance(p, TextPart))
            if len(text) <= limit or text.startswith("<persisted-output>"):
                returns.append(r)
                continue
            try:
                record = store.persist(f"{r.call_id}-compacted", text)
            except SpillError:
                returns.append(r)
                continue
            stub = persisted_stub(text, size=record.bytes, sha256=record.sha256,
                                  preview_chars=min(2_000, limit // 2), path=record.path)
            images = tuple(p for p in r.content if isinstance(p, ImagePart))
            returns.append(ToolReturn(r.call_id, r.name, (TextPart(stub), *images), r.is_error))
        out.append(replace(m, tool_returns=tuple(returns)))
    return out


# -- where the agent is -------------------------------------------------------------------------

#: Characters kept of the cell above's source, its output, and the last error's traceback.
ABOVE_SOURCE_CHARS = 1_500
ABOVE_OUTPUT_CHARS = 1_200
TRACEBACK_CHARS = 2_000
#: Seconds the notebook may take to answer the start-of-run read.
WHERE_READ_TIMEOUT = 5.0
_LISTED = 12


def trim(text: str, limit: int, *, tail: float = 0.7) -> str:
    """``text`` cut to about ``limit`` characters, keeping its start and (mostly) its end."""
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    back = int(limit * tail)
    front = limit - back
    return f"{text[:front]}\n[… {len(text) - limit:,} characters cut …]\n{text[-back:]}"


async def where_lines(ctx: ToolContext, place: Place) -> list[str]:
    """The lines of the per-run context (see the module docstring); [] when nothing is known."""
    snapshot, problem = (await _read_current(ctx)) if place.cell_id else (None, None)
    lines: list[str] = []
    index = None
    if snapshot is not None:
        ids = snapshot.display_ids()
        index = ids.index(place.cell_id) if place.cell_id in ids else None
        lines += _cell_lines(snapshot, index, place.cell_id, _shown(snapshot.path, ctx))
    elif problem:
        lines.append(f"Your cell is {place.cell_id}; the notebook could not be read for this "
                     f"summary ({problem}).")
    if place.error is not None:
        lines.append(_error_line(place.error, snapshot, index))
        if snapshot is not None and index and _shows_error(snapshot.cells[index - 1]) and \
                place.error.cell_id == snapshot.display_ids()[index - 1]:
            head = lines[-1].split("\nTraceback:", 1)[0]
            lines[-1] = head + " (its traceback is the output above)"
    if snapshot is not None:
        lines.append(_changes_line(notebook_reads(ctx).changes(snapshot), snapshot, index))
    return lines


async def _read_current(ctx: ToolContext) -> tuple[NotebookSnapshot | None, str | None]:
    try:
        doc = notebook_provider(ctx).current()
        if doc is None:
            return None, "no notebook is known to be open"
        return await asyncio.wait_for(doc.read(), WHERE_READ_TIMEOUT), None
    except asyncio.TimeoutError:
        return None, f"it did not answer within {WHERE_READ_TIMEOUT:g} s"
    except Exception as exc:  # noqa: BLE001  the run goes on without the summary, saying why
        return None, f"{type(exc).__name__}: {exc}"


def _shows_error(cell: CellData) -> bool:
    return any(isinstance(o, dict) and o.get("output_type") == "error" for o in cell.outputs)


def cell_name(index: int, cell: CellData, cell_id: str) -> str:
    """``cell 5 [12] (id abc)``: the position counted from 1, the execution count, the id."""
    count = f" [{cell.execution_count}]" if cell.execution_count is not None else ""
    return f"cell {index + 1}{count} (id {cell_id})"


def _shown(path: str | None, ctx: ToolContext) -> str:
    """The notebook's path relative to the working directory when it is inside it."""
    if not path:
        return "the current notebook"
    full = Path(path)
    try:
        return str(full.resolve().relative_to(ctx.cwd.resolve()))
    except (ValueError, OSError):
        return path


def _cell_lines(snapshot: NotebookSnapshot, index: int | None, cell_id: str | None,
                name: str) -> list[str]:
    total = len(snapshot.cells)
    if index is None:
        return [(f"Your cell (id {cell_id}) is not among the {total} cells of {name} as it was "
                 "read now (a notebook file is read as last saved).")]
    ids = snapshot.display_ids()
    lines = [(f"Your cell, the %%agent cell running this prompt, is cell {index + 1} of {total} "
              f"(id {ids[index]}) in {name}. Cells are counted from 1 at the top here; "
              "read_file's cells= counts from 0.")]
    if index == 0:
        lines.append("Your cell is the first one: there is no cell above it.")
        return lines
    above = snapshot.cells[index - 1]
    source = trim(above.source, ABOVE_SOURCE_CHARS) or "(empty)"
    name_above = cell_name(index - 1, above, ids[index - 1])
    text = [f"The cell above, {name_above}, a {above.cell_type} cell:\n```\n{source}\n```"]
    if above.cell_type == "code":
        shown = strip_ansi(outputs_text(above.outputs))
        text.append(f"Its output:\n```\n{trim(shown, ABOVE_OUTPUT_CHARS)}\n```" if shown.strip()
                    else "It has no output.")
    lines.append("\n".join(text))
    return lines


def _error_line(error: KernelError, snapshot: NotebookSnapshot | None,
                index: int | None) -> str:
    where = f"In [{error.execution_count}]" if error.execution_count is not None else "a cell"
    if error.cell_id and snapshot is not None:
        ids = snapshot.display_ids()
        if error.cell_id in ids:
            at = ids.index(error.cell_id)
            where = cell_name(at, snapshot.cells[at], error.cell_id)
            if index is not None and at == index - 1:
                where += ", the cell above"
        else:
            where += f" (cell id {error.cell_id}, no longer in the notebook)"
    head = f"The last error in this kernel, from {where}: {error.ename}: {error.evalue}"
    trace = trim(strip_ansi(error.traceback), TRACEBACK_CHARS)
    return f"{head}\nTraceback:\n```\n{trace}\n```" if trace.strip() else head


def _changes_line(changes: CellChanges | None, snapshot: NotebookSnapshot,
                  index: int | None) -> str:
    read = 'read_file {"file_path": "nb://"}'
    if changes is None:
        return (f"You have not read this notebook in this session. To change a cell, read it "
                f"once with {read} (edits need every cell read), then call notebook_edit with "
                "the cell's id.")
    own = snapshot.display_ids()[index] if index is not None else None
    changed = [c for c in changes.changed if c[1] != own]
    added = [c for c in changes.added if c[1] != own]
    if not (changed or added or changes.deleted):
        return "No cell changed since your last read of this notebook."
    said = []
    for verb, items in (("changed", changed), ("added", added)):
        if items:
            said.append(f"{verb}: " + _listing([f"cell {i + 1} (id {cid})" for i, cid in items]))
    if changes.deleted:
        said.append("deleted: " + _listing([f"id {cid} (was cell {i + 1})"
                                            for i, cid in changes.deleted]))
    return (f"The user changed the notebook since your last read: {'; '.join(said)}. Read "
            f"those cells again (or the notebook, {read}) before editing them.")


def _listing(items: list[str]) -> str:
    more = f" and {len(items) - _LISTED} more" if len(items) > _LISTED else ""
    return ", ".join(items[:_LISTED]) + more
