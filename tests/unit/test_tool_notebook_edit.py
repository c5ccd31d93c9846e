"""notebook_edit end to end: every mode, [12] / cell-N addressing, the strict read rule, 4.4
notebooks, approval with the user's changes, and each error, on real files and a live stand-in."""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import ErrorCode, ExecControl, Kind, Permission, Tier, ToolContext, ToolResult
from agent_ext.notebook import NotebookProvider, NotebookView, notebook_read_result
from agent_ext.notebook.document import CellData
from agent_ext.tools.notebook_edit import NotebookEditInvocation, NotebookEditTool

from .test_notebook_file import (
    MemoryNotebook,
    Provider,
    code,
    md,
    notebook,
    sample,
    sample44,
    stream,
    write_nb,
)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def read(ctx: ToolContext, path: str | Path, **kw: Any) -> ToolResult:
    result = await notebook_read_result(ctx, ctx.resolve(path), **kw)
    assert not result.is_error, result.text
    return result


async def edit(ctx: ToolContext, args: dict[str, Any], *,
               during_approval: Callable[[], object] | None = None,
               modified: str | None = None) -> ToolResult:
    """One call the way the pipeline runs it: build, preflight, diff shown, approved, executed."""
    built = NotebookEditTool().build(args, ctx)
    if isinstance(built, ToolResult):
        return built
    assert isinstance(built, NotebookEditInvocation)
    early = await built.preflight()
    if early is not None:
        return early
    await built.confirmation_details()
    if during_approval is not None:
        during_approval()
    chosen = built.with_modification(modified) if modified is not None else built
    assert chosen is not None
    return await chosen.execute(ExecControl())


def cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["cells"]


def code_of(result: ToolResult) -> str | None:
    return result.error.code if result.error else None


# -- the tool ---------------------------------------------------------------------------------------

def test_declaration_and_kind(ctx: ToolContext, tmp_path: Path) -> None:
    tool = NotebookEditTool()
    assert tool.problems() == []
    props = tool.declaration().parameters["properties"]
    assert set(props) == {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode",
                          "after_cell_id"}
    built = tool.build({"notebook_path": "nb.ipynb", "cell_id": "a", "new_source": "x"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    assert tool.kind == Kind.EDIT
    assert built.tier() == Tier.WRITE
    assert built.default_permission() == Permission.ASK
    assert built.locations() == [tmp_path / "nb.ipynb"]
    via_url = tool.build({"notebook_path": "nb://nb.ipynb", "cell_id": "a", "new_source": "x"},
                         ctx)
    assert isinstance(via_url, NotebookEditInvocation)
    assert via_url.path == tmp_path / "nb.ipynb"
    current = tool.build({"notebook_path": "nb://", "cell_id": "a", "new_source": "x"}, ctx)
    assert isinstance(current, NotebookEditInvocation) and current.path is None


@pytest.mark.parametrize(("args", "needle"), [
    ({"notebook_path": "a.py", "cell_id": "a", "new_source": "x"}, "not a .ipynb"),
    ({"new_source": "x"}, "needs `cell_id`"),
    ({"edit_mode": "delete"}, "needs `cell_id`"),
    ({"edit_mode": "move"}, "needs `cell_id`"),
    ({"edit_mode": "insert"}, "needs `new_source`"),
    ({"cell_id": "a"}, "needs `new_source`"),
    ({"cell_id": "a", "new_source": "x", "after_cell_id": "b"}, "only applies to move"),
    ({"edit_mode": "insert", "cell_id": "a", "after_cell_id": "b", "new_source": "x"},
     "give it once"),
    ({"cell_id": "a", "new_source": "x", "edit_mode": "append"}, "edit_mode"),
    ({"cell_id": "a", "new_source": "x", "cell_type": "python"}, "cell_type"),
])
def test_bad_arguments(ctx: ToolContext, args: dict[str, Any], needle: str) -> None:
    built = NotebookEditTool().build(args, ctx)
    assert isinstance(built, ToolResult)
    assert code_of(built) == ErrorCode.INVALID_TOOL_PARAMS
    assert needle in built.text


# -- modes on a file --------------------------------------------------------------------------------

async def test_replace_after_a_full_read(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "print(round(x, 2))"})
    assert not result.is_error, result.text
    assert result.text == ("Updated cell show in nb.ipynb; its outputs were cleared.\n\n"
                           "Read back: cell show (position 2, a code cell) now holds:\n```\n"
                           "print(round(x, 2))\n```")
    cell = cells(path)[2]
    assert cell["source"] == ["print(round(x, 2))"]
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert "+print(round(x, 2))" in str(result.display)
    again = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                             "new_source": "print(x)"})
    assert not again.is_error, again.text


async def test_confirmation_details(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    built = NotebookEditTool().build({"notebook_path": str(path), "cell_id": "load",
                                      "new_source": "import math\nx = math.e"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    details = await built.confirmation_details()
    assert details.kind == "edit"
    assert details.file_path == str(path)
    assert details.original == "import math\nx = math.pi"
    assert details.proposed == "import math\nx = math.e"
    assert details.extra["cell_id"] == "load" and details.extra["action"] == "edit"
    assert details.extra["cell_type"] == "code" and details.extra["language"] == "python"
    assert details.extra["notebook"] == str(path)
    assert details.diff is not None and "-x = math.pi" in details.diff
    assert "+x = math.e" in details.diff and "nb.ipynb cell 2 · [1]" in details.diff
    assert details.title == "Edit cell 2 · [1] · `import math` in nb.ipynb"
    assert details.extra["cell_label"] == "cell 2 · [1] · `import math`"
    assert details.extra["cell_position"] == 2 and "load" not in details.title


async def test_insert_after_and_at_top(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "insert",
                              "cell_id": "load", "new_source": "## Next", "cell_type": "markdown"})
    assert not result.is_error, result.text
    new_id = re.search(r"Inserted markdown cell ([0-9a-f]{8}) after cell load", result.text)
    assert new_id is not None
    assert cells(path)[2] == {"cell_type": "markdown", "id": new_id[1], "metadata": {},
                              "source": ["## Next"]}
    top = await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "insert",
                           "new_source": "import os"})
    assert "at the top" in top.text
    first = cells(path)[0]
    assert first["cell_type"] == "code" and first["source"] == ["import os"]
    # its own new cells count as read: edit one straight away
    again = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": new_id[1],
                             "new_source": "## Then"})
    assert not again.is_error, again.text
    via_after = await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "insert",
                                 "after_cell_id": "boom", "new_source": "end"})
    assert "after cell boom" in via_after.text
    assert cells(path)[-1]["source"] == ["end"]


async def test_insert_confirmation_shows_the_new_id(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    built = NotebookEditTool().build({"notebook_path": "nb.ipynb", "edit_mode": "insert",
                                      "new_source": "x = 1"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    details = await built.confirmation_details()
    assert details.extra["action"] == "insert" and details.original == ""
    new_id = details.extra["cell_id"]
    result = await built.execute(ExecControl())
    assert new_id in result.text and cells(path)[0]["id"] == new_id


async def test_delete(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    built = NotebookEditTool().build({"notebook_path": "nb.ipynb", "edit_mode": "delete",
                                      "cell_id": "boom"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    details = await built.confirmation_details()
    assert details.extra["action"] == "delete" and details.proposed is None
    assert built.with_modification("nope") is None
    result = await built.execute(ExecControl())
    assert result.text == ("Deleted cell boom from nb.ipynb.\n\nRead back: cell boom is no "
                           "longer in the notebook (4 cells).")
    assert [c["id"] for c in cells(path)] == ["intro", "load", "show", "plot"]


async def test_move(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    built = NotebookEditTool().build({"notebook_path": "nb.ipynb", "edit_mode": "move",
                                      "cell_id": "boom", "after_cell_id": "intro"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    details = await built.confirmation_details()
    assert details.diff is not None and "cell order" in details.diff
    assert "+boom  [code] 1/0" in details.diff
    result = await built.execute(ExecControl())
    assert result.text.startswith("Moved cell boom after cell intro in nb.ipynb.\n\nRead back: "
                                  "cell boom (position 1, a code cell) now holds:")
    assert [c["id"] for c in cells(path)] == ["intro", "boom", "load", "show", "plot"]
    top = await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "move", "cell_id": "plot"})
    assert "to the top" in top.text
    assert cells(path)[0]["id"] == "plot"
    same = await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "move", "cell_id": "plot"})
    assert code_of(same) == ErrorCode.EDIT_NO_CHANGE
    itself = await edit(ctx, {"notebook_path": "nb.ipynb", "edit_mode": "move",
                              "cell_id": "plot", "after_cell_id": "plot"})
    assert code_of(itself) == ErrorCode.EDIT_NO_CHANGE


async def test_change_type_keeps_the_id(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    built = NotebookEditTool().build({"notebook_path": "nb.ipynb", "cell_id": "intro",
                                      "cell_type": "code"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    details = await built.confirmation_details()
    assert details.extra["action"] == "set_type"
    assert details.extra["previous_cell_type"] == "markdown"
    result = await built.execute(ExecControl())
    assert result.text.startswith("Changed cell intro in nb.ipynb from markdown to code; it keeps "
                                  "its id.\n\nRead back: cell intro (position 0, a code cell)")
    cell = cells(path)[0]
    assert cell["id"] == "intro" and cell["cell_type"] == "code" and cell["outputs"] == []
    both = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                            "cell_type": "markdown", "new_source": "Shows x."})
    assert "now a markdown cell" in both.text
    show = cells(path)[2]
    assert show["id"] == "show" and show["cell_type"] == "markdown" and "outputs" not in show


async def test_no_change_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "print(x)"})
    assert code_of(result) == ErrorCode.EDIT_NO_CHANGE


# -- addressing -------------------------------------------------------------------------------------

async def test_execution_count_addressing(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "[2]",
                              "new_source": "print(x * 2)"})
    assert "Updated cell show" in result.text
    missing = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "[99]",
                               "new_source": "y"})
    assert code_of(missing) == ErrorCode.NOTEBOOK_CELL_NOT_FOUND
    assert "[99]" in missing.text


async def test_ambiguous_execution_count_lists_candidates(ctx: ToolContext,
                                                          tmp_path: Path) -> None:
    path = write_nb(tmp_path / "dup.ipynb", notebook([
        code("a = 1", cid="one", count=12), code("b = 2", cid="two", count=12)]))
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "dup.ipynb", "cell_id": "[12]",
                              "new_source": "c"})
    assert code_of(result) == ErrorCode.INVALID_TOOL_PARAMS
    assert "ambiguous" in result.text
    assert "one ('a = 1')" in result.text and "two ('b = 2')" in result.text


async def test_cell_n_only_without_ids(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "cell-2",
                              "new_source": "x"})
    assert code_of(result) == ErrorCode.NOTEBOOK_CELL_NOT_FOUND
    assert "has cell ids" in result.text and "'show'" in result.text


async def test_unknown_id(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "nope",
                              "new_source": "x"})
    assert code_of(result) == ErrorCode.NOTEBOOK_CELL_NOT_FOUND
    assert "intro, load, show, plot, boom" in result.text


# -- the strict rule --------------------------------------------------------------------------------

async def test_edit_without_a_read_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = path.read_bytes()
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "y"})
    assert code_of(result) == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "read_file" in result.text
    assert path.read_bytes() == before


async def test_partial_read_is_not_enough_until_pages_cover_all(ctx: ToolContext,
                                                                 tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path, offset=0, limit=3)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "y"})
    assert code_of(result) == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "seen 3 of 5 cells" in result.text and "cells=3-4" in result.text
    page = await read(ctx, path, view=NotebookView(("3-",), sources_only=True))
    assert "You have now seen every cell" in page.text
    ok = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show", "new_source": "y"})
    assert not ok.is_error, ok.text


async def test_concurrent_change_between_read_and_edit(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    nb = json.loads(path.read_text())
    nb["cells"].insert(1, code("user_cell()", cid="usernew"))
    del nb["cells"][-1]
    write_nb(path, nb)
    before = path.read_bytes()
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "y"})
    assert code_of(result) == ErrorCode.FILE_CHANGED_SINCE_READ
    assert "added: usernew" in result.text and "removed: boom" in result.text
    assert "Read it again" in result.text
    assert path.read_bytes() == before


async def test_target_source_changed_since_read(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    nb = json.loads(path.read_text())
    nb["cells"][2]["source"] = "print('user')"
    write_nb(path, nb)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "y"})
    assert code_of(result) == ErrorCode.FILE_CHANGED_SINCE_READ
    assert "Cell show" in result.text
    other = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "load",
                             "new_source": "x = 0"})
    assert not other.is_error, other.text
    assert cells(path)[2]["source"] == "print('user')"


async def test_change_during_approval_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)

    def user_edits() -> None:
        nb = json.loads(path.read_text())
        nb["cells"][2]["source"] = ["print('mine')"]
        write_nb(path, nb)

    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "y"}, during_approval=user_edits)
    assert code_of(result) == ErrorCode.FILE_CHANGED_SINCE_READ
    assert cells(path)[2]["source"] == ["print('mine')"]


async def test_user_modified_proposal(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample(tmp_path)
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                              "new_source": "print(x)  # model"},
                        modified="print(x)  # user")
    assert not result.is_error, result.text
    assert "The user edited your proposed source" in result.text
    assert "print(x)  # user" in result.text
    assert cells(path)[2]["source"] == ["print(x)  # user"]
    again = await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show",
                             "new_source": "print(x)"})
    assert not again.is_error, again.text


# -- 4.4 notebooks and bad files --------------------------------------------------------------------

async def test_44_notebook_gets_persistent_ids_first(ctx: ToolContext, tmp_path: Path) -> None:
    path = sample44(tmp_path)
    rendered = await read(ctx, path)
    assert "--- Code Cell cell-1 [1] ---" in rendered.text
    built = NotebookEditTool().build({"notebook_path": "old.ipynb", "cell_id": "cell-1",
                                      "new_source": "a = 10\n"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    details = await built.confirmation_details()
    assert "nbformat 4.4" in details.summary and details.extra["adds_cell_ids"] is True
    result = await built.execute(ExecControl())
    assert not result.is_error, result.text
    nb = json.loads(path.read_text())
    assert nb["nbformat_minor"] == 5
    ids = [c["id"] for c in nb["cells"]]
    assert f"Updated cell {ids[1]}" in result.text
    assert f"cell-0 -> {ids[0]}, cell-1 -> {ids[1]}, cell-2 -> {ids[2]}" in result.text
    assert nb["cells"][1]["source"] == "a = 10\n"
    follow = await edit(ctx, {"notebook_path": "old.ipynb", "cell_id": ids[2],
                              "new_source": "b = a * 2"})
    assert not follow.is_error, follow.text


async def test_a_notebook_never_read_is_refused_without_opening_it(ctx: ToolContext,
                                                                    tmp_path: Path) -> None:
    """Before the session has read it, nothing of the file (not even its errors) is shown."""
    (tmp_path / "bad.ipynb").write_text('{"oops": "SECRET-IN-FILE"')
    result = await edit(ctx, {"notebook_path": "bad.ipynb", "cell_id": "a", "new_source": "x"})
    assert code_of(result) == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "SECRET" not in result.text and "read_file" in result.text
    missing = await edit(ctx, {"notebook_path": "gone.ipynb", "cell_id": "a",
                               "new_source": "x"})
    assert code_of(missing) == ErrorCode.EDIT_REQUIRES_PRIOR_READ


async def test_an_ambiguous_cell_is_named_only_after_every_cell_was_read(
        ctx: ToolContext, tmp_path: Path) -> None:
    """``[n]`` matching two cells quotes their first lines: only once the session saw them."""
    nb = notebook([code("secret_one = 1", cid="a1", count=3),
                   code("secret_two = 2", cid="b2", count=3), code("x = 0", cid="c3")])
    write_nb(tmp_path / "n.ipynb", nb)
    await read(ctx, "n.ipynb", view=NotebookView(("c3",)))
    partial = await edit(ctx, {"notebook_path": "n.ipynb", "cell_id": "[3]", "new_source": "y"})
    assert code_of(partial) == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "secret_" not in partial.text
    await read(ctx, "n.ipynb")
    whole = await edit(ctx, {"notebook_path": "n.ipynb", "cell_id": "[3]", "new_source": "y"})
    assert "ambiguous" in whole.text and "secret_one" in whole.text


# -- the notebook it runs in ------------------------------------------------------------------------

def live(ctx: ToolContext) -> MemoryNotebook:
    doc = MemoryNotebook([CellData("m1", "markdown", "# Hi"),
                          CellData("c1", "code", "x = 1", {}, [stream("out")], 1)])
    ctx.services[NotebookProvider] = Provider(doc, ctx.cwd)
    return doc


async def test_default_is_the_current_live_notebook(ctx: ToolContext) -> None:
    doc = live(ctx)
    await read(ctx, "/nb/live.ipynb")
    built = NotebookEditTool().build({"cell_id": "c1", "new_source": "x = 2"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    assert built.locations() == [Path("/nb/live.ipynb")]
    result = await built.execute(ExecControl())
    assert not result.is_error, result.text
    assert doc.cells[1].source == "x = 2" and doc.cells[1].outputs == []
    assert doc.saves == 0
    assert result.file_paths == ["/nb/live.ipynb"]


async def test_live_44_notebook_keeps_its_ids(ctx: ToolContext) -> None:
    doc = live(ctx)
    doc.minor = 4
    await read(ctx, "/nb/live.ipynb")
    result = await edit(ctx, {"cell_id": "m1", "new_source": "# Hello"})
    assert not result.is_error, result.text
    assert doc.minor == 5 and "nbformat 4.4" not in result.text


async def test_no_notebook_open(ctx: ToolContext) -> None:
    ctx.services[NotebookProvider] = Provider(None, ctx.cwd)
    result = await edit(ctx, {"cell_id": "c1", "new_source": "x"})
    assert code_of(result) == "notebook_not_open"
    assert "notebook_path" in result.text
    built = NotebookEditTool().build({"cell_id": "c1", "new_source": "x"}, ctx)
    assert isinstance(built, NotebookEditInvocation)
    assert built.locations() == [Path("nb://")]  # unknown: the permission layer asks


async def test_other_notebooks_open_as_files(ctx: ToolContext, tmp_path: Path) -> None:
    live(ctx)
    path = write_nb(tmp_path / "other.ipynb", notebook([md("# Other", cid="o1")]))
    await read(ctx, path)
    result = await edit(ctx, {"notebook_path": "other.ipynb", "cell_id": "o1",
                              "new_source": "# Changed"})
    assert not result.is_error, result.text
    assert cells(path)[0]["source"] == "# Changed"


async def test_read_cache_stays_fresh_and_non_text(ctx: ToolContext, tmp_path: Path) -> None:
    from agent_ext.fs import ReadCache, check_prior_read

    ctx.services[ReadCache] = cache = ReadCache()
    path = sample(tmp_path)
    await read(ctx, path)
    await edit(ctx, {"notebook_path": "nb.ipynb", "cell_id": "show", "new_source": "y"})
    assert cache.check(path) == "fresh"
    answer = check_prior_read(cache, path, "editing")
    assert not answer.ok and "notebook_edit" in answer.message



class _Mangling(MemoryNotebook):
    """A live notebook whose frontend stores something else than it was sent (a collaborator
    typing in the cell at the same moment, a frontend that rewrites the text)."""

    async def replace_source(self, cell_id: str, source: str, *, clear_outputs: bool) -> None:
        await super().replace_source(cell_id, source.upper(), clear_outputs=clear_outputs)


async def test_the_result_says_what_the_notebook_holds_not_what_was_sent(
        ctx: ToolContext) -> None:
    doc = _Mangling([CellData("c1", "code", "x = 1", {}, [], 1)])
    ctx.services[NotebookProvider] = Provider(doc, ctx.cwd)
    await read(ctx, "/nb/live.ipynb")
    result = await edit(ctx, {"cell_id": "c1", "new_source": "x = 2"})
    assert result.text.endswith("Read back: cell c1 (position 0, a code cell) does not hold "
                                "what was written; it holds:\n```\nX = 2\n```"), result.text


async def test_a_long_cell_read_back_is_named_by_its_ends(ctx: ToolContext) -> None:
    live(ctx)
    await read(ctx, "/nb/live.ipynb")
    source = "\n".join(f"line_{n} = {n}" for n in range(200))
    result = await edit(ctx, {"cell_id": "c1", "new_source": source})
    assert result.text.endswith("Read back: cell c1 (position 1, a code cell) now holds the 200 "
                                "lines written, from `line_0 = 0` to `line_199 = 199`.")


class _Watched(Provider):
    """The live stand-in, noting each time a tool opens a document or reads one."""

    def __init__(self, cells: list[CellData], cwd: Path) -> None:
        self.opened: list[str] = []
        super().__init__(_ReadNoted(cells, self.opened), cwd)

    def current(self) -> Any:
        self.opened.append("current")
        return super().current()

    def open(self, path: str) -> Any:
        self.opened.append(f"open {path}")
        return super().open(path)


class _ReadNoted(MemoryNotebook):
    def __init__(self, cells: list[CellData], log: list[str]) -> None:
        super().__init__(cells)
        self.log = log

    async def read(self) -> Any:
        self.log.append("read")
        return await super().read()


@pytest.mark.parametrize("args", [
    {"cell_id": "c1", "new_source": "x = 2"},
    {"cell_id": "m1", "edit_mode": "delete"},
    {"edit_mode": "insert", "new_source": "y = 1"},
    {"notebook_path": "/nb/live.ipynb", "cell_id": "c1", "new_source": "x = 2"},
])
async def test_what_the_permission_check_asks_opens_nothing(ctx: ToolContext,
                                                           args: dict[str, Any]) -> None:
    """description() and locations() run before the permission decision: they look up where
    the notebook is and open nothing; preflight, after the decision, does the reading."""
    provider = _Watched([CellData("m1", "markdown", "# Hi"), CellData("c1", "code", "x = 1")],
                        ctx.cwd)
    ctx.services[NotebookProvider] = provider
    await read(ctx, "/nb/live.ipynb")
    provider.opened.clear()
    built = NotebookEditTool().build(args, ctx)
    assert isinstance(built, NotebookEditInvocation)
    assert built.locations() == [Path("/nb/live.ipynb")]
    assert built.description().endswith("live.ipynb")
    assert provider.opened == []
    assert await built.preflight() is None
    assert "read" in provider.opened


async def test_a_scheme_s_locations_open_nothing(ctx: ToolContext) -> None:
    from agent_ext.notebook.schemes import notebook_schemes
    from agent_ext.urls import parse_url

    provider = _Watched([CellData("c1", "code", "x = 1")], ctx.cwd)
    ctx.services[NotebookProvider] = provider
    for scheme in notebook_schemes(ctx):
        url = parse_url("nb://" if scheme.name == "nb" else f"{scheme.name}://c1")
        assert scheme.locations(url) == ["/nb/live.ipynb"]  # type: ignore[attr-defined]
    assert provider.opened == []


async def test_run_cell_s_locations_open_nothing(ctx: ToolContext) -> None:
    from agent_ext.tools.run_cell import RunCellTool

    provider = _Watched([CellData("c1", "code", "x = 1")], ctx.cwd)
    ctx.services[NotebookProvider] = provider
    built = RunCellTool().build({"cell_id": "c1"}, ctx)
    assert not isinstance(built, ToolResult)
    assert built.locations() == [Path("/nb/live.ipynb")]
    assert provider.opened == []


def test_the_host_provider_says_where_without_opening_the_bridge(tmp_path: Path) -> None:
    """In a kernel the provider opens the bridge comm on first use; asking where is no use."""
    from types import SimpleNamespace

    from agent_ext.jupyter import bridge

    path = tmp_path / "work.ipynb"
    shell = SimpleNamespace(user_ns={"__session__": str(path)}, kernel=object())
    try:
        provider = bridge.bridge_provider(shell, notify=print)
        assert isinstance(provider, bridge.BridgeProvider)
        assert provider.current_path() == str(path)
        assert not provider.started
        assert bridge.bridge_provider(shell) is provider
    finally:
        bridge.uninstall_bridge(shell)


async def test_an_edit_of_a_notebook_never_read_reads_it_for_the_model(tmp_path: Path) -> None:
    """Where a read would run unasked, the refused edit reads the notebook (recorded, so the
    next try lands) and the model remembers the call as that read; a notebook under a deny
    rule stays unread and unshown."""
    from agent_ext import Agent
    from agent_ext.models import ScriptedModel, call

    path = write_nb(tmp_path / "shop.ipynb", notebook([
        code("prices = [2, 3]", cid="prices", count=1),
        code("total = sum(prices)\nprint(totl)", cid="total", count=2)]))
    write_nb(tmp_path / "secret.ipynb", notebook([code("key = 'SECRET-VALUE'", cid="k")]))
    fix = {"notebook_path": "shop.ipynb", "cell_id": "total",
           "new_source": "total = sum(prices)\nprint(total)"}
    hidden = {"notebook_path": "secret.ipynb", "cell_id": "k", "new_source": "key = ''"}
    model = ScriptedModel([call("notebook_edit", fix, id="1"), call("notebook_edit", fix, id="2"),
                           call("notebook_edit", hidden, id="3"), "done"])
    agent = Agent(model, cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False,
                  rules={"deny": ["Read(./secret.ipynb)"]})
    try:
        run = await agent.run("fix the total cell")
    finally:
        await agent.aclose()
    first, second, third = (r for _, r in run.tool_calls)
    assert code_of(first) == ErrorCode.EDIT_REQUIRES_PRIOR_READ and "It is read now" in first.text
    assert ("had not been read in this session, so nothing was changed. It is read now: here is "
            "all of it. Make the change again against these cells.\n\n") in first.text
    assert first.remembered_as is not None and first.remembered_as.name == "read_file"
    assert "print(totl)" in str(first.remembered_as.content)
    sent = model.requests[1].messages
    assert [c.name for c in sent[-2].tool_calls] == ["read_file"]
    assert not sent[-1].tool_returns[0].is_error
    assert not second.is_error, second.text
    assert [c["source"] for c in cells(path)][1] == "total = sum(prices)\nprint(total)"
    assert code_of(third) == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert third.remembered_as is None and "SECRET" not in third.text


async def test_a_text_edit_of_a_notebook_never_read_points_to_notebook_edit(
        tmp_path: Path) -> None:
    """Its JSON is neither what the model means to change nor what it is shown."""
    from agent_ext import Agent

    path = write_nb(tmp_path / "w.ipynb", notebook([code("print(a)", cid="b")]))
    agent = Agent("demo", cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False)
    try:
        result = await agent.call_tool("edit", {"file_path": "w.ipynb", "old_string": "print(a)",
                                                "new_string": "print(1)"})
        assert code_of(result) == ErrorCode.EDIT_REQUIRES_PRIOR_READ
        assert "notebook_edit" in result.text and ":raw" in result.text
        assert result.remembered_as is None and '"cell_type"' not in result.text
        raw = await agent.call_tool("read_file", {"file_path": "w.ipynb:raw"})
        assert not raw.is_error and '"cell_type"' in raw.text
        done = await agent.call_tool("edit", {"file_path": "w.ipynb", "old_string": "print(a)",
                                              "new_string": "print(1)"})
        assert not done.is_error, done.text
    finally:
        await agent.aclose()
    assert "print(1)" in path.read_text()


@pytest.mark.parametrize(("profile", "source", "lands"), [
    ("compact", "print(avg)", False),                                # only leaves lines out
    ("compact", "avg = sum(nums) / len(nums)\nprint(avg)", True),    # the fixed cell, whole
    ("compact", "avg = sum(nums) / len(nums)", False),               # the fixed line alone
    ("compact", "print(sum(nums) / 3)", False),                      # shorter, keeps nothing
    ("default", "print(avg)", True),                                 # larger models: as asked
])
async def test_a_cell_sent_as_the_lines_it_keeps_is_refused_for_small_models(
        tmp_path: Path, profile: str, source: str, lands: bool) -> None:
    from agent_ext import Agent

    before = "avg = sum(nums) / len(num)\nprint(avg)"
    path = write_nb(tmp_path / "a.ipynb", notebook([code(before, cid="average")]))
    agent = Agent("demo", cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False,
                  tool_profile=profile)
    try:
        await agent.call_tool("read_file", {"file_path": "a.ipynb"})
        result = await agent.call_tool("notebook_edit", {"notebook_path": "a.ipynb",
                                                         "cell_id": "average",
                                                         "new_source": source})
    finally:
        await agent.aclose()
    assert result.is_error is not lands, result.text
    assert [c["source"] for c in cells(path)] == [source if lands else before]
    if not lands:
        assert "cell average has 2 lines and new_source only 1" in result.text
        assert "whole new source" in result.text and "delete" not in result.text



async def test_a_shorter_cell_that_keeps_most_of_it_is_a_rewrite(tmp_path: Path) -> None:
    from agent_ext import Agent

    before = "a = 1\nb = 2\nc = 3\nprint(a, b, c)"
    path = write_nb(tmp_path / "a.ipynb", notebook([code(before, cid="x")]))
    agent = Agent("demo", cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False,
                  tool_profile="compact")
    try:
        await agent.call_tool("read_file", {"file_path": "a.ipynb"})
        result = await agent.call_tool("notebook_edit", {
            "notebook_path": "a.ipynb", "cell_id": "x",
            "new_source": "a = 1\nb = 2\ntotal = sum((a, b))"})
    finally:
        await agent.aclose()
    assert not result.is_error, result.text
    assert cells(path)[0]["source"] == "a = 1\nb = 2\ntotal = sum((a, b))"


def _unlike_lines(n: int) -> list[str]:
    """``n`` lines that share little with one another (no two are alike to difflib)."""
    rng = random.Random(n)
    return ["".join(rng.choice(string.ascii_letters) for _ in range(50)) + " = 1"
            for _ in range(n)]


async def _compact_replace(tmp_path: Path, before: list[str], after: list[str]) -> tuple[
        bool, str]:
    from agent_ext import Agent

    path = write_nb(tmp_path / "a.ipynb", notebook([code("\n".join(before), cid="big")]))
    agent = Agent("demo", cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False,
                  tool_profile="compact")
    try:
        await agent.call_tool("read_file", {"file_path": "a.ipynb"})
        result = await agent.call_tool("notebook_edit", {
            "notebook_path": "a.ipynb", "cell_id": "big", "new_source": "\n".join(after)})
    finally:
        await agent.aclose()
    return result.is_error, cells(path)[0]["source"]


async def test_a_long_cell_that_loses_two_lines_is_judged_without_comparing_kept_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines kept as they were are not compared with the others, so the work grows with the
    changed lines only: two lines dropped and one retyped is still a fragment, found with one
    comparison per old line at the most."""
    import difflib

    import agent_ext.tools.notebook_edit as module

    compared = []

    def counted(*args: Any) -> difflib.SequenceMatcher[str]:
        compared.append(args)
        return difflib.SequenceMatcher(*args)

    monkeypatch.setattr(module, "SequenceMatcher", counted)
    before = _unlike_lines(300)
    after = [*before[:100], before[100] + "  # checked", *before[103:]]
    refused, source = await _compact_replace(tmp_path, before, after)
    assert refused and source == "\n".join(before)
    assert 0 < len(compared) <= len(before)


async def test_hundreds_of_changed_lines_are_a_rewrite_judged_by_what_they_keep(
        tmp_path: Path) -> None:
    """Past the pairs the rule compares, a shorter cell that keeps most of its lines lands as a
    rewrite, and one that keeps few is still refused."""
    before = _unlike_lines(400)
    changed = [line.replace("= 1", "= 2") for line in before[300:340]]
    kept_most = before[:300] + changed
    refused, source = await _compact_replace(tmp_path, before, kept_most)
    assert not refused and source == "\n".join(kept_most)
    (tmp_path / "second").mkdir()
    refused, source = await _compact_replace(tmp_path / "second", before, before[:100] + changed)
    assert refused and source == "\n".join(before)


async def test_a_text_edit_of_a_read_notebook_is_given_as_the_cell_edit_it_means(
        tmp_path: Path) -> None:
    """After a read of the notebook, an edit whose old_string is in one cell is answered with
    the notebook_edit call that makes it (nothing is applied); in two cells, with their ids."""
    from agent_ext import Agent

    path = write_nb(tmp_path / "w.ipynb", notebook([
        code("nums = [3, 5]", cid="data"), code("avg = sum(nums) / len(num)\nprint(avg)",
                                               cid="average"), code("print(avg)", cid="show")]))
    before = path.read_bytes()
    agent = Agent("demo", cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False)
    try:
        await agent.call_tool("read_file", {"file_path": "w.ipynb"})
        one = await agent.call_tool("edit", {"file_path": "w.ipynb", "old_string": "len(num)",
                                             "new_string": "len(nums)"})
        two = await agent.call_tool("edit", {"file_path": "w.ipynb", "old_string": "print(avg)",
                                             "new_string": "print(round(avg))"})
    finally:
        await agent.aclose()
    assert code_of(one) == ErrorCode.EDIT_REQUIRES_PRIOR_READ
    assert "old_string is in cell average" in one.text
    proposed = json.loads(one.text.split("```json\n", 1)[1].split("\n```", 1)[0])
    assert proposed == {"name": "notebook_edit", "arguments": {
        "notebook_path": "w.ipynb", "cell_id": "average",
        "new_source": "avg = sum(nums) / len(nums)\nprint(avg)"}}
    assert "cells average, show" in two.text and "```" not in two.text
    assert path.read_bytes() == before


@pytest.mark.parametrize("rules", [
    {"ask": ["Read(./private/**)"]},          # asked before any read: never read on its behalf
    {"deny": ["Read(**/*.ipynb)"]},           # a pattern, not the path as written
    {"deny": ["Read(./private/notes.ipynb)"]},
])
async def test_a_notebook_a_read_would_ask_about_or_deny_is_not_read_for_the_model(
        tmp_path: Path, rules: dict[str, list[str]]) -> None:
    from agent_ext import Agent

    (tmp_path / "private").mkdir()
    write_nb(tmp_path / "private" / "notes.ipynb", notebook([code("key = 'SECRET'", cid="k")]))
    agent = Agent("demo", cwd=tmp_path, mode="acceptEdits", plugins=False, mcp=False,
                  rules=rules)
    try:
        result = await agent.call_tool("notebook_edit", {"notebook_path": "private/notes.ipynb",
                                                         "cell_id": "k", "new_source": "k = 1"})
    finally:
        await agent.aclose()
    assert result.is_error and result.remembered_as is None and "SECRET" not in result.text


async def test_a_notebook_outside_the_project_through_a_link_is_not_read_for_the_model(
        tmp_path: Path) -> None:
    from agent_ext import Agent

    outside = tmp_path / "outside"
    outside.mkdir()
    write_nb(outside / "far.ipynb", notebook([code("key = 'SECRET'", cid="k")]))
    project = tmp_path / "project"
    project.mkdir()
    (project / "near.ipynb").symlink_to(outside / "far.ipynb")
    agent = Agent("demo", cwd=project, mode="acceptEdits", plugins=False, mcp=False)
    try:
        result = await agent.call_tool("notebook_edit", {"notebook_path": "near.ipynb",
                                                         "cell_id": "k", "new_source": "k = 1"})
    finally:
        await agent.aclose()
    assert result.is_error and result.remembered_as is None and "SECRET" not in result.text
