"""Undo of the agent's cell changes: replace, insert, delete and move taken back with outputs,
refused when the cell changed since, on .ipynb files and on a live stand-in; and the history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import ToolContext
from agent_ext.fs.history import EditHistory
from agent_ext.jupyter.history import changes
from agent_ext.notebook import NotebookProvider
from agent_ext.notebook.changes import NotebookChanges
from agent_ext.notebook.document import CellData, NotebookSnapshot
from agent_ext.notebook.session import notebook_changes, notebook_reads

from .test_notebook_file import MemoryNotebook, Provider, sample, stream
from .test_tool_notebook_edit import edit, read


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def cells(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["cells"])


def joined(value: Any) -> Any:
    """nbformat's multiline strings as one string (a file may store either form)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "".join(value)
    if isinstance(value, dict):
        return {k: joined(v) for k, v in value.items()}
    if isinstance(value, list):
        return [joined(v) for v in value]
    return value


def plain(cell: dict[str, Any]) -> tuple[str, str, Any, Any]:
    return (cell["id"], joined(cell["source"]), joined(cell.get("outputs")),
            cell.get("execution_count"))


async def undo(ctx: ToolContext) -> Any:
    return await notebook_changes(ctx).undo(notebook_reads(ctx))


async def test_undo_of_a_replace_restores_source_outputs_and_count(ctx: ToolContext,
                                                                    tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = [plain(c) for c in cells(path)]
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "print(x * 2)"})
    assert not result.is_error, result.text
    assert plain(cells(path)[2]) == ("show", "print(x * 2)", [], None)
    done = await undo(ctx)
    assert not done.refused, done.message
    assert done.message == ("Undone: cell 3 · [2] · `print(x)` in nb.ipynb is as it was before "
                            "the agent's edit, with its outputs.")
    assert [plain(c) for c in cells(path)] == before
    again = await undo(ctx)
    assert again.change is None and again.message.startswith("Nothing to undo")


async def test_the_session_may_edit_the_restored_cell_without_reading_again(
        ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "load", "new_source": "x = 1"})
    assert not (await undo(ctx)).refused
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "load",
                              "new_source": "x = 2"})
    assert not result.is_error, result.text


async def test_undo_of_an_insert_removes_the_cell(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = cells(path)
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "insert",
                              "cell_id": "load", "new_source": "y = 2"})
    assert not result.is_error and len(cells(path)) == 6
    done = await undo(ctx)
    assert done.message == ("Undone: removed cell 3 · [ ] · `y = 2`, which the agent inserted in "
                            "nb.ipynb.")
    assert cells(path) == before


async def test_undo_of_a_delete_puts_the_cell_back_with_its_outputs(ctx: ToolContext,
                                                                    tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = [plain(c) for c in cells(path)]
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "delete",
                              "cell_id": "show"})
    assert not result.is_error and len(cells(path)) == 4
    done = await undo(ctx)
    assert done.message == "Undone: cell 3 · [2] · `print(x)` is back in nb.ipynb, with its outputs."
    assert [plain(c) for c in cells(path)] == before
    assert joined(cells(path)[2]["outputs"]) == [stream("3.14159\n")]


async def test_undo_of_a_delete_at_the_top_and_of_a_move(ctx: ToolContext,
                                                         tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = [c["id"] for c in cells(path)]
    await read(ctx, path)
    await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "move", "cell_id": "boom",
                     "after_cell_id": "intro"})
    await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "delete", "cell_id": "intro"})
    assert [c["id"] for c in cells(path)] == ["boom", "load", "show", "plot"]
    assert not (await undo(ctx)).refused
    assert [c["id"] for c in cells(path)] == ["intro", "boom", "load", "show", "plot"]
    moved = await undo(ctx)
    assert moved.message == "Undone: cell 5 · [4] · `1/0` is back where it was in nb.ipynb."
    assert [c["id"] for c in cells(path)] == before


async def test_undo_refuses_when_the_user_changed_the_cell_since(ctx: ToolContext,
                                                                 tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "plot", "new_source": "plot(x, y)"})
    raw = json.loads(path.read_text())
    raw["cells"][3]["source"] = ["plot(x, y)  # mine"]
    path.write_text(json.dumps(raw))
    done = await undo(ctx)
    assert done.refused
    assert done.message == ("Cell 4 · [ ] changed since the agent's edit; not undone (undoing "
                            "would lose that later work).")
    assert "".join(cells(path)[3]["source"]) == "plot(x, y)  # mine"
    assert notebook_changes(ctx).newest() is done.change  # kept: undoable once put back
    raw["cells"][3]["source"] = ["plot(x, y)"]
    path.write_text(json.dumps(raw))
    assert not (await undo(ctx)).refused
    assert "".join(cells(path)[3]["source"]) == "plot(x)"


async def test_undo_refuses_an_inserted_cell_the_user_deleted(
        ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "insert", "new_source": "z = 0"})
    raw = json.loads(path.read_text())
    del raw["cells"][0]
    path.write_text(json.dumps(raw))
    done = await undo(ctx)
    assert done.refused and done.message == ("Cell 1 · [ ] · `z = 0` is no longer in "
                                             "nb.ipynb; not undone.")
    assert len(cells(path)) == 5


async def test_undo_on_the_live_notebook(tmp_path: Path) -> None:
    doc = MemoryNotebook([CellData("a", "code", "x = 1", outputs=[stream("1\n")],
                                   execution_count=7),
                          CellData("b", "markdown", "# Notes")])
    ctx = ToolContext(cwd=tmp_path)
    ctx.services[NotebookProvider] = Provider(doc, tmp_path)
    await read(ctx, "/nb/live.ipynb")
    result = await edit(ctx, {"cell_id": "a", "new_source": "x = 2"})
    assert not result.is_error, result.text
    assert doc.cells[0].source == "x = 2" and doc.cells[0].outputs == []
    done = await undo(ctx)
    assert not done.refused, done.message
    assert doc.cells[0] == CellData("a", "code", "x = 1", outputs=[stream("1\n")],
                                    execution_count=7)
    assert doc.saves == 0


def test_history_lists_file_and_cell_changes_in_order(tmp_path: Path) -> None:
    files = EditHistory()
    first = files.record(tmp_path / "a.py", None, b"x", tool="write_file", call_id="c1")
    nb = MemoryNotebook([CellData("a", "code", "x = 1", execution_count=3)])
    cells_seen = notebook_changes(ToolContext(cwd=tmp_path))
    snap = NotebookSnapshot(tuple(nb.cells), {}, 4, 5, nb.path)
    change = cells_seen.record(nb, snap, mode="replace", cell_id="a",
                               after=CellData("a", "code", "x = 2"), after_index=0,
                               notebook="live.ipynb")
    assert change.time >= first.time
    text = changes(files.entries(), cells_seen.entries(), tmp_path)
    lines = text.splitlines()
    assert lines[0].startswith("changes, oldest first")
    assert lines[1].endswith("created a.py (write_file)")
    assert lines[2].endswith("edited cell 1 · [ ] · `x = 2` in live.ipynb  ← next to undo")
    assert changes([], [], tmp_path).startswith("changes: none yet")


def test_the_record_stays_within_its_count_and_memory_bounds(tmp_path: Path) -> None:
    nb = MemoryNotebook([CellData("a", "code", "x = 1",
                                  outputs=[stream("y" * 10_000)], execution_count=1)])
    snap = NotebookSnapshot(tuple(nb.cells), {}, 4, 5, nb.path)
    kept = NotebookChanges(max_changes=5, memory_budget=35_000)
    for n in range(8):
        kept.record(nb, snap, mode="replace", cell_id="a",
                    after=CellData("a", "code", f"x = {n}"), after_index=0, notebook="nb")
    entries = kept.entries()
    assert [e.label for e in entries] == [f"cell 1 · [ ] · `x = {n}`" for n in (5, 6, 7)]
    assert 30_000 < kept.bytes_held <= 35_000
    kept.clear()
    assert kept.bytes_held == 0 and kept.newest() is None
