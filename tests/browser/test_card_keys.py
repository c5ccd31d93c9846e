"""Approval cards and the notebook's keyboard, in JupyterLab and Notebook 7, typed as a user types.

Right after Shift+Enter on the %%agent cell the card takes focus; its hinted keys (a, r, e,
Esc) act on the card and never reach the notebook's command-mode shortcuts (a inserts a cell
above, b below...), so the cell count stays as it was; Enter makes a new line in its text boxes.
After the decision the notebook has focus again on the cell after the agent cell, so the next
Shift+Enter runs that cell. Several proposals of one step come as one group: Shift+A approves
them all, and all three edits land.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.browser.agent_cells import CHECK, READ, REPLACE, setup
from tests.browser.conftest import ARTIFACTS
from tests.browser.notebook_page import cells, open_notebook, run_from, wait_file, write_notebook
from tests.browser.server import Server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

NEXT = "print('next cell ran', 6 * 7)"
THREE = ('    ModelResponse(text="", tool_calls=tuple(ToolCall.of(f"edit_{name}", "notebook_edit", '
         '{"cell_id": name, "new_source": f"{name} = 42"}) for name in ("a", "b", "c"))),')
FOCUS_IN_CARD = "document.activeElement && document.activeElement.closest('.ae-confirm') !== null"


def active_index(page: Any) -> int:
    """The position of the notebook's active cell."""
    found: int = page.evaluate(
        "Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'))"
        ".findIndex((c) => c.classList.contains('jp-mod-active'))")
    return found


def count(page: Any) -> int:
    return int(cells(page).count())


def wait_card(page: Any, nth: int = 0) -> Any:
    """The ``nth`` approval widget, once it shows and holds the keyboard focus."""
    widget = page.locator(".ae-confirm").nth(nth)
    widget.get_by_role("button", name="Approve", exact=True).first.wait_for(
        state="visible", timeout=60_000)
    page.wait_for_function(FOCUS_IN_CARD, timeout=10_000)
    return widget


def wait_output(page: Any, index: int, text: str, timeout: float = 60) -> str:
    """The output text of cell ``index`` once it holds ``text``."""
    output = cells(page).nth(index).locator(".jp-OutputArea")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = output.inner_text() if output.count() else ""
        if text in shown:
            return str(shown)
        time.sleep(0.2)
    raise TimeoutError(f"cell {index} never showed {text!r}")


def prompt_count(page: Any, index: int) -> str:
    """The execution count of cell ``index`` as its prompt shows it ("" when never run)."""
    found = re.search(r"\[(\d*)\]", cells(page).nth(index).locator(".jp-InputPrompt").inner_text())
    return found.group(1) if found else ""


def test_card_keys_act_on_the_card_and_focus_returns_to_the_next_cell(server: Server,
                                                                      page: Any) -> None:
    name = f"keys_{server.app}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", setup(READ, REPLACE)),
        ("target", "code", "total = 1 + 1"),
        ("prompt", "code", "%%agent\nMake the total 42."),
        ("next", "code", NEXT),
    ])
    open_notebook(page, server, name)
    run_from(page, 0, 2)
    page.wait_for_function("document.querySelectorAll('.jp-Notebook .jp-Cell')[2]"
                           ".classList.contains('jp-mod-active')")
    before = count(page)
    page.keyboard.press("Shift+Enter")  # the %%agent cell, from command mode
    card = wait_card(page)
    assert count(page) == before

    page.keyboard.press("r")
    feedback = card.locator("textarea.ae-feedback")
    feedback.wait_for(state="visible")
    assert page.evaluate("document.activeElement.classList.contains('ae-feedback')")
    page.keyboard.type("first line")
    page.keyboard.press("Enter")
    page.keyboard.type("second line")
    assert feedback.input_value() == "first line\nsecond line"
    page.keyboard.press("Escape")
    assert not feedback.is_visible()

    page.keyboard.press("e")
    editor = card.locator("textarea.ae-editor")
    editor.wait_for(state="visible")
    assert editor.input_value() == "total = 40 + 2\nprint(total)"
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type("# checked")
    assert editor.input_value() == "total = 40 + 2\nprint(total)\n# checked"
    page.keyboard.press("Escape")
    # b, d d, x, m: notebook shortcuts that must not act while the card has the keys.
    for key in ("b", "d", "d", "x", "m"):
        page.keyboard.press(key)
    assert count(page) == before
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"card-focus-{server.app}.png"))

    page.keyboard.press("a")
    card.locator(".ae-outcome").wait_for(state="visible")
    assert "You approved this." in card.locator(".ae-outcome").inner_text()
    wait_output(page, 2, "approved by the user")
    page.wait_for_function(f"!({FOCUS_IN_CARD})")
    assert active_index(page) == 3, "the cell after the agent cell is active"
    assert count(page) == before
    page.keyboard.press("Shift+Enter")
    assert "next cell ran 42" in wait_output(page, 3, "next cell ran")
    # setup [1], target [2], the agent cell [3] once, then the next cell [4].
    assert (prompt_count(page, 2), prompt_count(page, 3)) == ("3", "4")
    assert cells(page).nth(1).locator(".cm-content").inner_text() == "total = 40 + 2\nprint(total)"


def test_approve_all_lands_three_edits_of_one_step(server: Server, page: Any) -> None:
    name = f"group_{server.app}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", setup(READ, THREE)),
        ("a", "code", "a = 1"),
        ("b", "code", "b = 2"),
        ("c", "code", "c = 3"),
        ("prompt", "code", "%%agent\nSet a, b and c to 42."),
        ("check", "code", CHECK),
        # Shift+Enter on a last cell adds a cell, which would change the notebook mid-run.
        ("end", "markdown", "The end."),
    ])
    (server.root / "live.json").unlink(missing_ok=True)
    open_notebook(page, server, name)
    run_from(page, 0, 5)
    group = wait_card(page)
    assert group.locator(".ae-card").count() == 3
    assert "The agent proposes 3 changes" in group.inner_text()
    before = count(page)
    ARTIFACTS.mkdir(exist_ok=True)
    group.screenshot(path=str(ARTIFACTS / f"card-group-{server.app}.png"))

    page.keyboard.press("Shift+A")
    page.wait_for_function("document.querySelectorAll('.ae-card.ae-decided-approve').length === 3")
    wait_output(page, 4, "approved by the user")
    page.wait_for_function(f"!({FOCUS_IN_CARD})")
    assert active_index(page) == 5
    page.keyboard.press("Shift+Enter")  # the check cell writes what the live notebook holds
    live = wait_file(server.root / "live.json")
    sources = {c[0]: c[2] for c in live["cells"]}
    assert [sources["a"], sources["b"], sources["c"]] == ["a = 42", "b = 42", "c = 42"]
    assert count(page) == before


ASK = '    call("ask_user", {"question": "What should the note say?"}),'
RESULTS = ("msgs = agent_ext.get_agent().messages\n"
           "print('ANSWER', repr([r.content[0].text for m in msgs for r in m.tool_returns]))")


def test_enter_makes_a_new_line_in_a_question_answer(server: Server, page: Any) -> None:
    name = f"ask_{server.app}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", setup(ASK)),
        ("prompt", "code", "%%agent\nWrite a note."),
        ("results", "code", RESULTS),
        ("end", "markdown", "The end."),
    ])
    open_notebook(page, server, name)
    run_from(page, 0, 2)
    box = page.locator(".ae-ask textarea")
    box.wait_for(state="visible", timeout=60_000)
    page.wait_for_function("document.activeElement && document.activeElement.closest('.ae-ask')")
    page.keyboard.type("line one")
    page.keyboard.press("Enter")
    page.keyboard.type("line two")
    assert box.input_value() == "line one\nline two"
    page.keyboard.press("Control+Enter")
    page.locator(".ae-ask-answer").wait_for(state="visible")
    page.wait_for_function("!document.activeElement || !document.activeElement.closest('.ae-ask')")
    assert active_index(page) == 2
    page.keyboard.press("Shift+Enter")
    assert "line one\\nline two" in wait_output(page, 2, "ANSWER")
