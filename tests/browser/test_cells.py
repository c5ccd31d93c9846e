"""Cells as users see them, in JupyterLab and Notebook 7: the tour's cell fix lands on Approve
and `%agent undo` takes it back; the card names the cell "cell N · [count]" and its link
scrolls the notebook to it; one Ctrl+Z in the cell's editor reverts an agent replace.
"""

from __future__ import annotations

import shutil
import time
from typing import Any

import pytest

from tests.browser.agent_cells import READ, REPLACE, setup
from tests.browser.notebook_page import (
    IDLE,
    cells,
    dom_cells,
    open_notebook,
    run_from,
    wait_kernel,
    write_notebook,
)
from tests.browser.server import ROOT, Server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
TOUR = ROOT / "notebooks" / "quickstart.ipynb"
#: Positions (from 0) of the tour's failing cell, its %%agent fix and its %agent undo.
BUGGY, FIX, UNDO = 9, 10, 12
BUGGY_SOURCE = ('prices = [3.50, 4.25, 2.00]\naverage = sum(prices) / len(price)\n'
                'print(f"average price: {average:.2f}")')


def output_text(page: Any, index: int) -> str:
    area = cells(page).nth(index).locator(".jp-OutputArea")
    return str(area.inner_text()) if area.count() else ""


def wait_output(page: Any, index: int, text: str, timeout: float = 60) -> str:
    """The text of cell ``index``'s outputs once it contains ``text``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = output_text(page, index)
        if text in found:
            return found
        time.sleep(0.3)
    raise TimeoutError(f"cell {index} never showed {text!r}; it shows {output_text(page, index)!r}")


def wait_source(page: Any, index: int, text: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while dom_cells(page)[index][1] != text:
        if time.monotonic() > deadline:
            raise TimeoutError(f"cell {index} holds {dom_cells(page)[index][1]!r}, not {text!r}")
        time.sleep(0.2)


def wait_prompt(page: Any, index: int, prompt: str, timeout: float = 60) -> None:
    """Wait until cell ``index`` shows execution prompt ``prompt`` (e.g. ``[2]``)."""
    locator = cells(page).nth(index).locator(".jp-InputPrompt")
    deadline = time.monotonic() + timeout
    while prompt not in locator.inner_text():
        if time.monotonic() > deadline:
            raise TimeoutError(f"cell {index} shows {locator.inner_text()!r}, not {prompt}")
        time.sleep(0.2)


def open_ready(page: Any, server: Server, name: str) -> None:
    """Open ``name`` and wait until its kernel is connected and idle."""
    open_notebook(page, server, name)
    wait_kernel(page)


def wait_idle(page: Any) -> None:
    time.sleep(0.5)
    page.wait_for_selector(IDLE, timeout=60_000)


def in_view(page: Any, index: int) -> bool:
    """Whether cell ``index`` is inside the visible part of the notebook's scroll area."""
    return bool(cells(page).nth(index).evaluate("""cell => {
        let scroller = cell.parentElement;
        while (scroller && !(scroller.scrollHeight > scroller.clientHeight + 4 &&
                             getComputedStyle(scroller).overflowY !== 'visible')) {
            scroller = scroller.parentElement;
        }
        const box = cell.getBoundingClientRect();
        const view = scroller ? scroller.getBoundingClientRect()
                              : {top: 0, bottom: window.innerHeight};
        return box.bottom > view.top + 10 && box.top < view.bottom - 10;
    }"""))


def test_the_tours_cell_fix_lands_on_approve_and_undo_reverts_it(server: Server,
                                                                  page: Any) -> None:
    name = f"tour_{server.app}.ipynb"
    shutil.copy(TOUR, server.root / name)
    open_ready(page, server, name)
    run_from(page, 1, BUGGY)  # every cell up to the one that fails on purpose
    assert "NameError" in wait_output(page, BUGGY, "NameError")
    wait_idle(page)
    run_from(page, FIX, 1)
    card = page.locator(".ae-confirm").last
    approve = card.get_by_role("button", name="Approve", exact=True)
    approve.wait_for(state="visible", timeout=60_000)
    assert card.locator(".ae-target").inner_text() == "cell 10 · [5] · `prices = [3.50, 4.25, 2.00]`"
    title = card.locator(".ae-confirm-title").inner_text()
    assert title == f"Edit cell 10 · [5] · `prices = [3.50, 4.25, 2.00]` in {name}"
    assert "average-price" not in card.inner_text()  # the id stays out of sight
    assert "len(prices)" in card.inner_text()  # the cell diff
    approve.click()

    fixed = BUGGY_SOURCE.replace("len(price)", "len(prices)")
    wait_source(page, BUGGY, fixed)
    page.wait_for_function(
        f"document.querySelectorAll('.jp-Notebook .jp-Cell')[{BUGGY}]"
        ".classList.contains('ae-agent-marked')", timeout=5_000)
    assert "NameError" not in output_text(page, BUGGY)  # the edit cleared the stale error
    wait_output(page, FIX, "Fixed: the cell now divides by len(prices)")
    wait_idle(page)

    run_from(page, UNDO, 1)
    said = wait_output(page, UNDO, "Undone:")
    assert f"Undone: cell 10 · [5] · `prices = [3.50, 4.25, 2.00]` in {name} is as it was" in said
    wait_source(page, BUGGY, BUGGY_SOURCE)
    wait_output(page, BUGGY, "NameError")  # its error output is back too


def scroll_notebook(server: Server, name: str, steps: str) -> None:
    """A notebook whose target cell is far above the agent cell."""
    filler = [(f"note{i}", "markdown", f"## Section {i}\n\n" + "Some notes.\n\n" * 6)
              for i in range(14)]
    write_notebook(server.root / name, [
        ("setup", "code", setup(READ, steps)),
        ("target", "code", "total = 1 + 1"),
        *filler,
        ("prompt", "code", "%%agent\nMake the total 42."),
    ])


def test_the_card_names_the_cell_and_its_link_scrolls_to_it(server: Server, page: Any) -> None:
    name = f"scroll_{server.app}.ipynb"
    scroll_notebook(server, name, REPLACE)
    open_ready(page, server, name)
    run_from(page, 0, 2)
    wait_prompt(page, 1, "[2]")
    wait_idle(page)
    prompt = len(dom_cells(page)) - 1
    run_from(page, prompt, 1)
    card = page.locator(".ae-confirm").last
    card.get_by_role("button", name="Approve", exact=True).wait_for(state="visible",
                                                                    timeout=60_000)
    assert card.locator(".ae-target").inner_text() == "cell 2 · [2] · `total = 1 + 1`"
    card.scroll_into_view_if_needed()
    assert not in_view(page, 1), "the target cell should start out of view"
    card.get_by_role("link", name="show cell").click()
    page.wait_for_function(
        "document.querySelectorAll('.jp-Notebook .jp-Cell')[1]"
        ".classList.contains('ae-agent-marked')", timeout=5_000)
    deadline = time.monotonic() + 5
    while not in_view(page, 1):
        assert time.monotonic() < deadline, "show cell did not bring the cell into view"
        time.sleep(0.2)
    # Showing a cell moves neither the selection nor the focus, so the card's keys still work.
    assert "jp-mod-active" not in (cells(page).nth(1).get_attribute("class") or "")
    assert page.evaluate("document.activeElement.textContent") == "show cell"


def test_one_ctrl_z_in_the_cell_reverts_an_agent_replace(server: Server, page: Any) -> None:
    name = f"ctrlz_{server.app}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", setup(READ, REPLACE)),
        ("target", "code", "total = 1 + 1\ntotal"),
        ("prompt", "code", "%%agent\nMake the total 42."),
    ])
    open_ready(page, server, name)
    run_from(page, 0, 2)
    wait_output(page, 1, "2")
    wait_idle(page)
    run_from(page, 2, 1)
    card = page.locator(".ae-confirm").last
    card.get_by_role("button", name="Approve", exact=True).click(timeout=60_000)
    wait_source(page, 1, "total = 40 + 2\nprint(total)")
    wait_idle(page)
    assert output_text(page, 1).strip() == ""

    cells(page).nth(1).locator(".cm-content").click()
    page.keyboard.press("Control+z")
    wait_source(page, 1, "total = 1 + 1\ntotal")
    assert "2" in output_text(page, 1)  # its output came back with the source
    time.sleep(0.5)
    assert dom_cells(page)[1] == ("code", "total = 1 + 1\ntotal")  # one step, not two
