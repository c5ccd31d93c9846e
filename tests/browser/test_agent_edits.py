"""An agent cell edits the live notebook in JupyterLab and Notebook 7, after the user approves.

The scripted agent reads the notebook, replaces a cell and inserts one; the test clicks Approve
in the diff widget each time. Then the live model (read through the bridge), the page and the
saved .ipynb must agree. A cell the user changes while the approval is pending is not
overwritten.
"""

from __future__ import annotations

from typing import Any

import nbformat
import pytest

from tests.browser.agent_cells import CHECK, INSERT, READ, REPLACE, setup
from tests.browser.notebook_page import (
    dom_cells,
    open_notebook,
    run_from,
    type_into,
    wait_file,
    write_notebook,
)
from tests.browser.server import Server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def approve(page: Any, nth: int) -> None:
    """Click Approve in the ``nth`` approval widget once it shows."""
    widget = page.locator(".ae-confirm").nth(nth)
    button = widget.get_by_role("button", name="Approve", exact=True)
    button.wait_for(state="visible", timeout=60_000)
    # Only the main actions show while pending; the edit, reject and always panels wait.
    for panel in ("Edit, then approve", "Reject", "Always allow"):
        assert not widget.get_by_role("group", name=panel, exact=True).is_visible(), panel
    button.click()


def notebook(server: Server, name: str, *steps: str) -> None:
    write_notebook(server.root / name, [
        ("setup", "code", setup(*steps)),
        ("target", "code", "total = 1 + 1"),
        ("prompt", "code", "%%agent\nMake the total 42 and say so above it."),
        ("check", "code", CHECK),
    ])


def test_approved_edits_land_in_the_live_notebook(server: Server, page: Any) -> None:
    name = f"edits_{server.app}.ipynb"
    notebook(server, name, READ, REPLACE, INSERT)
    (server.root / "live.json").unlink(missing_ok=True)
    open_notebook(page, server, name)
    run_from(page, 0, 4)
    approve(page, 0)
    approve(page, 1)
    live = wait_file(server.root / "live.json")

    assert live["live"] is True
    assert [c[:2] for c in live["cells"]][:3] == [["setup", "code"], ["target", "code"],
                                                  [live["cells"][2][0], "markdown"]]
    assert live["cells"][1][2] == "total = 40 + 2\nprint(total)"
    assert live["cells"][2][2] == "## Fixed by the agent"
    assert live["path"] == str(server.root / name)

    saved = nbformat.read(server.root / name, as_version=4)
    assert [[c.id, c.cell_type, c.source] for c in saved.cells] == live["cells"]

    shown = dom_cells(page)
    assert [kind for kind, _ in shown] == [c[1] for c in live["cells"]]
    assert shown[1][1] == "total = 40 + 2\nprint(total)"
    assert shown[2][1] == "Fixed by the agent"


def test_a_cell_changed_while_approval_is_pending_is_not_overwritten(server: Server,
                                                                     page: Any) -> None:
    name = f"stale_{server.app}.ipynb"
    notebook(server, name, READ, REPLACE)
    (server.root / "live.json").unlink(missing_ok=True)
    open_notebook(page, server, name)
    run_from(page, 0, 4)
    page.get_by_role("button", name="Approve", exact=True).wait_for(timeout=60_000)
    type_into(page, 1, "  # mine")
    approve(page, 0)
    live = wait_file(server.root / "live.json")

    assert live["cells"][1] == ["target", "code", "total = 1 + 1  # mine"]
    saved = nbformat.read(server.root / name, as_version=4)
    assert saved.cells[1].source == "total = 1 + 1  # mine"
    assert dom_cells(page)[1] == ("code", "total = 1 + 1  # mine")
    prompt = page.locator(".jp-Notebook .jp-Cell").nth(2)
    assert "approved by the user" in prompt.inner_text()


def test_one_undo_takes_back_one_agent_edit(lab: Server, page: Any) -> None:
    name = "undo.ipynb"
    notebook(lab, name, READ, REPLACE, INSERT)
    (lab.root / "live.json").unlink(missing_ok=True)
    open_notebook(page, lab, name)
    run_from(page, 0, 4)
    approve(page, 0)
    approve(page, 1)
    wait_file(lab.root / "live.json")
    before = len(dom_cells(page))
    page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    page.wait_for_function(f"document.querySelectorAll('.jp-Notebook .jp-Cell').length < {before}")
    assert dom_cells(page)[1] == ("code", "total = 40 + 2\nprint(total)")
    # A replaced source is the cell's own undo step: Ctrl+Z in its editor takes it back.
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content").click()
    page.keyboard.press("Control+z")
    page.wait_for_function("document.querySelectorAll('.jp-Notebook .jp-Cell')[1]"
                           ".innerText.includes('1 + 1')")
    assert dom_cells(page)[1] == ("code", "total = 1 + 1")
