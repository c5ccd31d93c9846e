"""FileNotebook on real .ipynb files: reads, every edit, the file's JSON style kept, 4.4 -> 4.5
ids, changed-on-disk refusals, failed writes that keep the old file, and finding the notebook.

The builders and the in-memory documents here are shared by the other notebook tests.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import ErrorCode
from agent_ext.core.kernel import KernelProvider, RunOutput
from agent_ext.notebook import FileNotebook, NotebookError, NotebookSnapshot, find_notebook_path
from agent_ext.notebook import file as file_mod
from agent_ext.notebook.document import CellData, NotebookDocument, NotebookProvider
from agent_ext.notebook.provider import FileNotebookProvider

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40


# -- builders ---------------------------------------------------------------------------------------

def code(source: str | list[str], *, cid: str | None = None, count: int | None = None,
         outputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": "code", "execution_count": count}
    if cid is not None:
        cell["id"] = cid
    cell.update(metadata={}, outputs=outputs or [], source=source)
    return cell


def md(source: str | list[str], *, cid: str | None = None) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": "markdown"}
    if cid is not None:
        cell["id"] = cid
    cell.update(metadata={}, source=source)
    return cell


def stream(text: str, name: str = "stdout") -> dict[str, Any]:
    return {"output_type": "stream", "name": name, "text": text}


def image(data: bytes = PNG, text: str = "<Figure size 640x480 with 1 Axes>") -> dict[str, Any]:
    return {"output_type": "display_data", "metadata": {},
            "data": {"image/png": base64.b64encode(data).decode(), "text/plain": text}}


def error(ename: str = "ValueError", evalue: str = "bad") -> dict[str, Any]:
    return {"output_type": "error", "ename": ename, "evalue": evalue,
            "traceback": ["\x1b[0;31m---------\x1b[0m", f"\x1b[0;31m{ename}\x1b[0m: {evalue}"]}


def notebook(cells: list[dict[str, Any]], *, minor: int = 5) -> dict[str, Any]:
    return {"cells": cells,
            "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                        "display_name": "Python 3"},
                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": minor}


def write_nb(path: Path, nb: Mapping[str, Any], *, indent: int | str | None = 1,
             newline: bool = True) -> Path:
    text = json.dumps(nb, indent=indent, ensure_ascii=False)
    path.write_text(text + ("\n" if newline else ""), encoding="utf-8")
    return path


def sample(tmp_path: Path, name: str = "nb.ipynb") -> Path:
    """A 4.5 notebook with ids, line-array sources and text, error and image outputs."""
    return write_nb(tmp_path / name, notebook([
        md(["# Load\n", "Read the data."], cid="intro"),
        code(["import math\n", "x = math.pi"], cid="load", count=1),
        code(["print(x)"], cid="show", count=2, outputs=[stream("3.14159\n")]),
        code(["plot(x)"], cid="plot", count=3, outputs=[image()]),
        code(["1/0"], cid="boom", count=4, outputs=[error("ZeroDivisionError", "division by zero")]),
    ]))


def sample44(tmp_path: Path, name: str = "old.ipynb") -> Path:
    """A 4.4 notebook: no ids."""
    return write_nb(tmp_path / name, notebook([
        md("# Old\n"), code("a = 1\n", count=1), code("b = a + 1", count=2),
    ], minor=4))


# -- in-memory documents, providers and kernels ----------------------------------------------------

class MemoryNotebook:
    """A NotebookDocument held in memory, standing in for the live browser bridge."""

    def __init__(self, cells: list[CellData], *, path: str | None = "/nb/live.ipynb",
                 live: bool = True, minor: int = 5) -> None:
        self.path = path
        self.live = live
        self.cells = list(cells)
        self.minor = minor
        self.saves = 0
        self.selected: str | None = None

    async def read(self) -> NotebookSnapshot:
        return NotebookSnapshot(tuple(self.cells), {"language_info": {"name": "python"}}, 4,
                                self.minor, self.path)

    def _at(self, cell_id: str) -> int:
        for i, c in enumerate(self.cells):
            if (c.id or f"cell-{i}") == cell_id:
                return i
        raise NotebookError(ErrorCode.NOTEBOOK_CELL_NOT_FOUND, f"no cell {cell_id}")

    async def replace_source(self, cell_id: str, source: str, *, clear_outputs: bool) -> None:
        i = self._at(cell_id)
        c = self.cells[i]
        outputs, count = ([], None) if clear_outputs and c.cell_type == "code" else (
            c.outputs, c.execution_count)
        self.cells[i] = CellData(c.id, c.cell_type, source, c.metadata, outputs, count)

    async def insert(self, after_cell_id: str | None, cell_type: str, source: str,
                     cell_id: str) -> None:
        at = 0 if after_cell_id is None else self._at(after_cell_id) + 1
        self.cells.insert(at, CellData(cell_id, cell_type, source))

    async def delete(self, cell_id: str) -> None:
        del self.cells[self._at(cell_id)]

    async def move(self, cell_id: str, after_cell_id: str | None) -> None:
        cell = self.cells.pop(self._at(cell_id))
        at = 0 if after_cell_id is None else self._at(after_cell_id) + 1
        self.cells.insert(at, cell)

    async def set_type(self, cell_id: str, cell_type: str) -> None:
        i = self._at(cell_id)
        c = self.cells[i]
        self.cells[i] = CellData(c.id, cell_type, c.source, c.metadata)

    async def set_outputs(self, cell_id: str, outputs: list[dict[str, Any]],
                          execution_count: int | None) -> None:
        i = self._at(cell_id)
        c = self.cells[i]
        self.cells[i] = CellData(c.id, c.cell_type, c.source, c.metadata, outputs,
                                 execution_count)

    async def save(self) -> None:
        self.saves += 1

    async def ensure_persistent_ids(self) -> bool:
        changed = self.minor < 5
        self.minor = 5
        return changed

    async def selection(self) -> str | None:
        return self.selected


class Provider:
    """A NotebookProvider with a chosen current document; other paths open as files."""

    def __init__(self, current: NotebookDocument | None, cwd: Path | None = None) -> None:
        self.doc = current
        self.files = FileNotebookProvider(cwd or Path.cwd(), environ={})

    def current(self) -> NotebookDocument | None:
        return self.doc

    def current_path(self) -> str | None:
        return self.doc.path if self.doc is not None else None

    def open(self, path: str) -> NotebookDocument:
        if self.doc is not None and self.doc.path == path:
            return self.doc
        return self.files.open(path)


class FakeKernel:
    """A KernelProvider over a plain dict, with canned history and run results."""

    def __init__(self, ns: dict[str, object] | None = None,
                 history: list[tuple[int, str]] | None = None,
                 results: list[RunOutput] | None = None) -> None:
        self.ns = ns if ns is not None else {}
        self.history = history or []
        self.results = list(results or [])
        self.ran: list[str] = []

    def user_namespace(self) -> Mapping[str, object]:
        return self.ns

    def input_history(self, last: int | None = None) -> list[tuple[int, str]]:
        return self.history[-last:] if last else list(self.history)

    async def run_code(self, code: str) -> RunOutput:
        self.ran.append(code)
        return self.results.pop(0) if self.results else RunOutput([], len(self.ran), None)


def test_fakes_satisfy_the_protocols() -> None:
    assert isinstance(MemoryNotebook([]), NotebookDocument)
    assert isinstance(FileNotebook("/x.ipynb"), NotebookDocument)
    assert isinstance(Provider(None), NotebookProvider)
    assert isinstance(FileNotebookProvider("/"), NotebookProvider)
    assert isinstance(FakeKernel(), KernelProvider)


# -- reading ----------------------------------------------------------------------------------------

async def test_reads_cells_ids_outputs_and_format(tmp_path: Path) -> None:
    snap = await FileNotebook(sample(tmp_path)).read()
    assert [c.id for c in snap.cells] == ["intro", "load", "show", "plot", "boom"]
    assert snap.cells[1].source == "import math\nx = math.pi"
    assert snap.cells[0].outputs == [] and snap.cells[0].execution_count is None
    assert snap.cells[2].outputs[0]["text"] == "3.14159\n"
    assert (snap.nbformat, snap.nbformat_minor, snap.language) == (4, 5, "python")
    assert snap.persistent_ids and snap.path == str(tmp_path / "nb.ipynb")


async def test_44_notebook_has_positional_display_ids(tmp_path: Path) -> None:
    snap = await FileNotebook(sample44(tmp_path)).read()
    assert [c.id for c in snap.cells] == [None, None, None]
    assert snap.display_ids() == ["cell-0", "cell-1", "cell-2"]
    assert not snap.has_ids and not snap.persistent_ids


async def test_unchanged_file_is_not_parsed_again(tmp_path: Path) -> None:
    doc = FileNotebook(sample(tmp_path))
    first = await doc.read()
    assert await doc.read() is first


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"cells": 3}',
                                     '{"cells": [{"source": "x"}]}'])
async def test_invalid_notebooks_are_refused_with_a_code(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.ipynb"
    path.write_text(content)
    with pytest.raises(NotebookError) as caught:
        await FileNotebook(path).read()
    assert caught.value.code == ErrorCode.NOTEBOOK_INVALID_JSON
    assert ":raw" in caught.value.message


async def test_missing_notebook(tmp_path: Path) -> None:
    with pytest.raises(NotebookError) as caught:
        await FileNotebook(tmp_path / "nope.ipynb").read()
    assert caught.value.code == ErrorCode.FILE_NOT_FOUND


async def test_nbformat3_is_read_as_v4(tmp_path: Path) -> None:
    v3 = {"nbformat": 3, "nbformat_minor": 0, "metadata": {},
          "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 1", "outputs": [],
                                     "language": "python", "prompt_number": 1}]}]}
    path = write_nb(tmp_path / "v3.ipynb", v3)
    snap = await FileNotebook(path).read()
    assert snap.nbformat == 4
    assert [c.source for c in snap.cells] == ["x = 1"]


# -- editing ----------------------------------------------------------------------------------------

def raw(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


async def test_replace_keeps_line_arrays_and_clears_outputs(tmp_path: Path) -> None:
    path = sample(tmp_path)
    doc = FileNotebook(path)
    await doc.read()
    await doc.replace_source("show", "print(x)\nprint(2 * x)\n", clear_outputs=True)
    cell = raw(path)["cells"][2]
    assert cell["source"] == ["print(x)\n", "print(2 * x)\n"]
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert cell["id"] == "show"
    assert (await doc.read()).cells[2].source == "print(x)\nprint(2 * x)\n"


async def test_replace_keeps_string_sources_and_outputs_when_asked(tmp_path: Path) -> None:
    path = write_nb(tmp_path / "s.ipynb", notebook([code("a = 1", cid="a", count=1,
                                                         outputs=[stream("hi\n")])]))
    doc = FileNotebook(path)
    await doc.read()
    await doc.replace_source("a", "a = 2\nb = 3", clear_outputs=False)
    cell = raw(path)["cells"][0]
    assert cell["source"] == "a = 2\nb = 3"
    assert cell["outputs"] == [stream("hi\n")] and cell["execution_count"] == 1


async def test_only_the_changed_cell_differs_in_the_file(tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = path.read_text().splitlines()
    doc = FileNotebook(path)
    await doc.read()
    await doc.replace_source("load", "import math\nx = math.tau", clear_outputs=True)
    after = path.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [('   "execution_count": 1,', '   "execution_count": null,'),
                       ('    "x = math.pi"', '    "x = math.tau"')]


@pytest.mark.parametrize(("indent", "newline"), [(2, False), ("\t", True), (4, True), (None, False)])
async def test_indent_and_trailing_newline_are_kept(tmp_path: Path, indent: int | str | None,
                                                    newline: bool) -> None:
    nb = notebook([code("x = 1", cid="a")])
    path = write_nb(tmp_path / "i.ipynb", nb, indent=indent, newline=newline)
    doc = FileNotebook(path)
    await doc.read()
    await doc.replace_source("a", "x = 2", clear_outputs=True)
    nb["cells"][0]["source"] = "x = 2"
    expected = json.dumps(nb, indent=indent, ensure_ascii=False) + ("\n" if newline else "")
    if indent is None:
        expected = json.dumps(nb, separators=(",", ":"), ensure_ascii=False)
    assert path.read_text() == expected


async def test_bom_crlf_and_ascii_escapes_are_kept(tmp_path: Path) -> None:
    nb = notebook([code("s = 'é'", cid="a")])
    text = json.dumps(nb, indent=1, ensure_ascii=True).replace("\n", "\r\n") + "\r\n"
    path = tmp_path / "w.ipynb"
    path.write_bytes(("\ufeff" + text).encode())
    doc = FileNotebook(path)
    await doc.read()
    await doc.replace_source("a", "s = 'ü'", clear_outputs=True)
    data = path.read_bytes().decode()
    assert data.startswith("\ufeff{\r\n")
    assert "\\u00fc" in data and "ü" not in data
    assert data.endswith("}\r\n")


async def test_insert_delete_move_and_set_type(tmp_path: Path) -> None:
    path = sample(tmp_path)
    doc = FileNotebook(path)
    await doc.read()
    await doc.insert("load", "markdown", "## Plot\nBelow.", "newcell1")
    await doc.insert(None, "code", "import os", "top00001")
    ids = [c["id"] for c in raw(path)["cells"]]
    assert ids == ["top00001", "intro", "load", "newcell1", "show", "plot", "boom"]
    inserted = raw(path)["cells"][3]
    assert inserted == {"cell_type": "markdown", "id": "newcell1", "metadata": {},
                        "source": ["## Plot\n", "Below."]}
    await doc.move("boom", None)
    await doc.move("top00001", "plot")
    await doc.delete("intro")
    assert [c["id"] for c in raw(path)["cells"]] == ["boom", "load", "newcell1", "show", "plot",
                                                     "top00001"]
    await doc.set_type("show", "markdown")
    show = raw(path)["cells"][3]
    assert show["cell_type"] == "markdown" and show["id"] == "show"
    assert "outputs" not in show and "execution_count" not in show
    await doc.set_type("show", "code")
    show = raw(path)["cells"][3]
    assert show["outputs"] == [] and show["execution_count"] is None and show["id"] == "show"


async def test_insert_into_string_style_notebook_uses_strings(tmp_path: Path) -> None:
    path = write_nb(tmp_path / "s.ipynb", notebook([code("a = 1\nb = 2", cid="a")]))
    doc = FileNotebook(path)
    await doc.read()
    await doc.insert("a", "code", "c = 3\nd = 4", "b0000000")
    cell = raw(path)["cells"][1]
    assert cell["source"] == "c = 3\nd = 4"
    assert cell["outputs"] == [] and cell["execution_count"] is None


async def test_insert_refuses_a_taken_or_invalid_id(tmp_path: Path) -> None:
    doc = FileNotebook(sample(tmp_path))
    await doc.read()
    for bad in ("load", "no spaces", ""):
        with pytest.raises(NotebookError) as caught:
            await doc.insert(None, "code", "x", bad)
        assert caught.value.code == ErrorCode.NOTEBOOK_EDIT_FAILURE


async def test_unknown_cell_and_bad_type(tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = path.read_bytes()
    doc = FileNotebook(path)
    await doc.read()
    with pytest.raises(NotebookError) as caught:
        await doc.replace_source("nope", "x", clear_outputs=True)
    assert caught.value.code == ErrorCode.NOTEBOOK_CELL_NOT_FOUND
    with pytest.raises(NotebookError):
        await doc.set_type("load", "python")
    with pytest.raises(NotebookError):
        await doc.set_outputs("intro", [], None)
    assert path.read_bytes() == before


async def test_set_outputs_splits_text_like_the_file(tmp_path: Path) -> None:
    path = sample(tmp_path)
    doc = FileNotebook(path)
    await doc.read()
    outputs = [stream("a\nb\n"), image(text="fig\nure")]
    await doc.set_outputs("load", outputs, 7)
    cell = raw(path)["cells"][1]
    assert cell["execution_count"] == 7
    assert cell["outputs"][0]["text"] == ["a\n", "b\n"]
    assert cell["outputs"][1]["data"]["text/plain"] == ["fig\n", "ure"]
    assert cell["outputs"][1]["data"]["image/png"] == base64.b64encode(PNG).decode()
    snap = await doc.read()
    assert snap.cells[1].execution_count == 7


async def test_a_file_changed_on_disk_is_not_overwritten(tmp_path: Path) -> None:
    path = sample(tmp_path)
    doc = FileNotebook(path)
    await doc.read()
    nb = raw(path)
    nb["cells"][0]["source"] = "# Changed by the user"
    write_nb(path, nb)
    os.utime(path, ns=(1, 1))
    with pytest.raises(NotebookError) as caught:
        await doc.replace_source("load", "x = 0", clear_outputs=True)
    assert caught.value.code == ErrorCode.FILE_CHANGED_SINCE_READ
    assert raw(path)["cells"][0]["source"] == "# Changed by the user"
    snap = await doc.read()
    await doc.replace_source("load", "x = 0", clear_outputs=True)
    assert raw(path)["cells"][0]["source"] == "# Changed by the user"
    assert snap.cells[0].source == "# Changed by the user"


async def test_a_failed_write_leaves_the_old_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = sample(tmp_path)
    before = path.read_bytes()
    doc = FileNotebook(path)
    await doc.read()

    def broken(*_: object, **__: object) -> os.stat_result:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(file_mod, "atomic_write", broken)
    with pytest.raises(NotebookError) as caught:
        await doc.delete("load")
    assert caught.value.code == ErrorCode.NOTEBOOK_EDIT_FAILURE
    assert path.read_bytes() == before
    assert [c.id for c in (await doc.read()).cells] == ["intro", "load", "show", "plot", "boom"]


async def test_ensure_persistent_ids_on_44(tmp_path: Path) -> None:
    path = sample44(tmp_path)
    doc = FileNotebook(path)
    await doc.read()
    assert await doc.ensure_persistent_ids() is True
    nb = raw(path)
    assert nb["nbformat_minor"] == 5
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == 3 and all(len(i) == 8 and int(i, 16) >= 0 for i in ids)
    assert [c["source"] for c in nb["cells"]] == ["# Old\n", "a = 1\n", "b = a + 1"]
    snap = await doc.read()
    assert snap.persistent_ids and snap.display_ids() == ids
    assert await doc.ensure_persistent_ids() is False
    assert raw(path) == nb


async def test_ensure_persistent_ids_repairs_duplicates(tmp_path: Path) -> None:
    path = write_nb(tmp_path / "d.ipynb", notebook([code("a", cid="same"), code("b", cid="same")]))
    doc = FileNotebook(path)
    assert await doc.ensure_persistent_ids() is True
    ids = [c["id"] for c in raw(path)["cells"]]
    assert ids[0] == "same" and ids[1] != "same"


async def test_ensure_persistent_ids_untouched_45(tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = path.read_bytes()
    assert await FileNotebook(path).ensure_persistent_ids() is False
    assert path.read_bytes() == before


async def test_selection_and_save_are_harmless(tmp_path: Path) -> None:
    doc = FileNotebook(sample(tmp_path))
    assert await doc.selection() is None
    await doc.save()
    assert doc.live is False


# -- finding the notebook ---------------------------------------------------------------------------

def test_find_notebook_path_sources(tmp_path: Path) -> None:
    folder = tmp_path / "proj" / "sub"
    folder.mkdir(parents=True)
    (folder / "a.ipynb").write_text("{}")
    assert find_notebook_path({}, {}, cwd=folder) is None
    assert find_notebook_path({"JPY_SESSION_NAME": str(folder / "a.ipynb")}, cwd=tmp_path) == \
        str(folder / "a.ipynb")
    # relative to the server root, with the kernel running in the notebook's folder
    assert find_notebook_path({"JPY_SESSION_NAME": "proj/sub/a.ipynb"}, cwd=folder) == \
        str(folder / "a.ipynb")
    assert find_notebook_path({}, {"__session__": "sub/a.ipynb"}, cwd=folder) == \
        str(folder / "a.ipynb")
    vsc = {"__vsc_ipynb_file__": str(tmp_path / "v.ipynb"), "__session__": "x.ipynb"}
    assert find_notebook_path({}, vsc, cwd=folder) == str(tmp_path / "v.ipynb")
    assert find_notebook_path({}, vsc, cwd=folder, explicit="/e/x.ipynb") == "/e/x.ipynb"
    assert find_notebook_path({"JPY_SESSION_NAME": "console-1"}, cwd=folder) is None


def test_file_provider_finds_and_reuses_documents(tmp_path: Path) -> None:
    path = sample(tmp_path)
    provider = FileNotebookProvider(tmp_path, user_ns=lambda: {"__session__": "nb.ipynb"},
                                    environ={})
    current = provider.current()
    assert current is not None and current.path == str(path)
    assert provider.open("nb.ipynb") is current
    assert FileNotebookProvider(tmp_path, environ={}).current() is None


async def test_outputs_that_are_not_json_are_refused(tmp_path: Path) -> None:
    path = sample(tmp_path)
    before = path.read_bytes()
    doc = FileNotebook(path)
    await doc.read()
    with pytest.raises(NotebookError) as caught:
        await doc.set_outputs("load", [{"output_type": "stream", "text": object()}], 1)
    assert caught.value.code == ErrorCode.NOTEBOOK_EDIT_FAILURE
    assert path.read_bytes() == before


def test_duplicate_ids_are_not_persistent() -> None:
    cells = (CellData("a", "code", "x"), CellData("a", "code", "y"))
    assert not NotebookSnapshot(cells, {}, 4, 5, None).persistent_ids
