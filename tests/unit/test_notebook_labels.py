"""Cells named as users see them: position, prompt and first line, never the nbformat id."""

from __future__ import annotations

from agent_ext.notebook.document import CellData, NotebookSnapshot
from agent_ext.notebook.labels import cell_label, first_line, label_of


def snap(*cells: CellData) -> NotebookSnapshot:
    return NotebookSnapshot(cells=cells, metadata={}, nbformat=4, nbformat_minor=5, path=None)


def test_a_run_cell_shows_position_count_and_first_line() -> None:
    nb = snap(CellData("a1", "markdown", "# Title"),
              CellData("8c4b6d65-75f6", "code", "\n\ndf = pd.read_csv('sales-2024.csv')\n",
                       execution_count=12))
    assert cell_label(nb, "8c4b6d65-75f6") == "cell 2 · [12] · `df = pd.read_csv('sales-202…`"
    assert cell_label(nb, "a1") == "cell 1 · markdown · `# Title`"


def test_a_code_cell_never_run_and_an_empty_one() -> None:
    nb = snap(CellData("x", "code", "print(1)"), CellData("y", "code", "   \n"))
    assert cell_label(nb, "x") == "cell 1 · [ ] · `print(1)`"
    assert cell_label(nb, "y") == "cell 2 · [ ]"


def test_a_cell_no_longer_there_is_named_by_id_and_a_proposal_by_its_text() -> None:
    nb = snap(CellData("x", "code", "old", execution_count=3))
    assert cell_label(nb, "gone") == "cell gone"
    assert cell_label(nb, "x", source="new = 1") == "cell 1 · [3] · `new = 1`"
    assert label_of(4, CellData(None, "raw", "`tick`")) == "cell 5 · raw · `'tick'`"


def test_first_line_cuts_at_the_width() -> None:
    assert first_line("x" * 40, 10) == "x" * 9 + "…"
    assert first_line("short", 10) == "short"
    assert first_line("") == ""
