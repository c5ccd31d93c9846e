"""The per-run lines that say where the agent is, read from a notebook the test holds."""

from __future__ import annotations

from pathlib import Path

from agent_ext.agent.context import trim, where_lines
from agent_ext.core import ToolContext
from agent_ext.core.kernel import KernelError, Place
from agent_ext.notebook import NotebookProvider
from agent_ext.notebook.document import CellData, NotebookSnapshot

from .test_notebook_file import MemoryNotebook, Provider, stream


def ctx_with(doc: object, tmp_path: Path) -> ToolContext:
    ctx = ToolContext(cwd=tmp_path)
    ctx.services[NotebookProvider] = Provider(doc, tmp_path)  # type: ignore[arg-type]
    return ctx


async def test_the_first_cell_has_none_above(tmp_path: Path) -> None:
    doc = MemoryNotebook([CellData("me", "code", "%%agent\nhi"), CellData("x", "code", "1")])
    lines = await where_lines(ctx_with(doc, tmp_path), Place("me"))
    assert lines[0].startswith("Your cell, the %%agent cell running this prompt, is cell 1 of 2")
    assert lines[1] == "Your cell is the first one: there is no cell above it."
    assert lines[2].startswith("You have not read this notebook in this session.")


async def test_a_markdown_cell_above_has_no_output_line(tmp_path: Path) -> None:
    doc = MemoryNotebook([CellData("m", "markdown", "# Plan"),
                          CellData("me", "code", "%%agent\nhi")])
    lines = await where_lines(ctx_with(doc, tmp_path), Place("me"))
    assert lines[1] == "The cell above, cell 1 (id m), a markdown cell:\n```\n# Plan\n```"


async def test_a_code_cell_above_shows_its_output(tmp_path: Path) -> None:
    doc = MemoryNotebook([CellData("c", "code", "print(2)", {}, [stream("2\n")], 7),
                          CellData("me", "code", "%%agent\nhi")])
    lines = await where_lines(ctx_with(doc, tmp_path), Place("me"))
    assert lines[1].endswith("Its output:\n```\n2\n```") and "cell 1 [7] (id c)" in lines[1]


class _Broken(MemoryNotebook):
    async def read(self) -> NotebookSnapshot:
        raise OSError("the tab went away")


async def test_an_unreadable_notebook_is_said_and_the_error_still_told(tmp_path: Path) -> None:
    error = KernelError("ValueError", "bad", "Traceback …\nValueError: bad", "gone", 3)
    lines = await where_lines(ctx_with(_Broken([]), tmp_path), Place("me", error))
    assert lines[0] == ("Your cell is me; the notebook could not be read for this summary "
                        "(OSError: the tab went away).")
    assert lines[1].startswith("The last error in this kernel, from In [3]: ValueError: bad")


async def test_without_a_cell_id_only_the_error_is_told(tmp_path: Path) -> None:
    error = KernelError("KeyError", "'x'", "")
    lines = await where_lines(ctx_with(_Broken([]), tmp_path), Place(None, error))
    assert lines == ["The last error in this kernel, from a cell: KeyError: 'x'"]
    assert await where_lines(ctx_with(_Broken([]), tmp_path), Place()) == []


def test_trim_keeps_the_start_and_more_of_the_end() -> None:
    text = "".join(f"line {n}\n" for n in range(1000))
    cut = trim(text, 200)
    assert cut.startswith("line 0\n") and cut.endswith("line 999")
    assert "characters cut" in cut and len(cut) < 260
    assert trim("short", 200) == "short"
