"""Regenerate the widget screenshots in docs/images: every widget state, light and dark theme.

Run ``python -m tests.browser.screenshots`` from the repository root, or the browser test
``tests/browser/test_screenshots.py`` (needs Chromium, Playwright and the built labextension,
like the browser tests). Real JupyterLab pages: a scripted agent proposes two cell edits (one
approved, one rejected), asks a question, then makes a file edit that acceptEdits mode allows;
``%agent tools`` shows the catalogue, a project with an ``.mcp.json`` asks to be trusted, and a
first prompt with no model configured shows how to choose one. The tour shot is the
quickstart notebook itself, run as a new user runs it: its failing cell, and the demo replay's
proposed fix waiting for approval.
The card group of one step's three cell edits is shot with its first card holding the
keyboard focus.
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.browser.agent_cells import READ, setup
from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.browser.notebook_page import (
    IDLE,
    cells,
    dismiss_toasts,
    open_notebook,
    run_from,
    wait_kernel,
    write_notebook,
)
from tests.browser.server import ROOT, Server, jupyter_server

THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
IMAGES = ROOT / "docs" / "images"
#: Every state, as the file name it is saved under (``<state>-<theme>.png``).
STATES = ("confirm-diff", "confirm-approved", "confirm-rejected", "ask-user", "transcript",
          "allowed-edit", "allowed-edit-open", "tool-catalogue", "project-trust", "first-run")
EDIT = ('    call("notebook_edit", {"cell_id": "clean", "new_source": '
        '"df = df.dropna(subset=[\\"price\\"])\\ndf[\\"price\\"] = df[\\"price\\"].astype(float)\\n'
        'df.describe()"}, id="edit_clean"),')
EDIT_PLOT = ('    call("notebook_edit", {"cell_id": "plot", "new_source": '
             '"df.plot(x=\\"date\\", y=\\"price\\", kind=\\"bar\\")"}, id="edit_plot"),')
ASK = ('    call("ask_user", {"question": "Which rows should the plot show?", "options": ['
       '{"label": "Every row", "description": "All 1,204 rows, one bar each"}, '
       '{"label": "Monthly means", "description": "Group by month first"}]}),')
FILE_EDIT = ('    call("read_file", {"file_path": "prices.py"}),\n'
             '    call("edit", {"file_path": "prices.py", "old_string": "return prices.dropna()", '
             '"new_string": "return prices.fillna(prices.median())"}),')
PRICES = ('import pandas as pd\n\n\ndef clean(prices: pd.Series) -> pd.Series:\n'
          '    """Prices without gaps."""\n    return prices.dropna()\n')
MCP_JSON = '{"mcpServers": {"docs": {"command": "python", "args": ["-m", "docs_server"]}}}\n'
TIMEOUT = 60_000


def _shot(locator: Any, page: Any, out: Path, state: str, theme: str) -> Path:
    from playwright.sync_api import Error

    dismiss_toasts(page)
    page.mouse.move(0, 0)
    target = out / f"{state}-{theme}.png"
    for attempt in range(3):
        try:
            locator.scroll_into_view_if_needed()
            time.sleep(0.3)  # let focus rings and transitions settle
            locator.screenshot(path=str(target))
            return target
        except Error:  # the output area re-rendered the widget meanwhile: take it again
            if attempt == 2:
                raise
            time.sleep(0.5)
    return target


def _run(page: Any, index: int) -> None:
    """Run cell ``index`` and wait until it has started (its prompt shows a count or ``*``);
    retried once, as a Shift+Enter pressed while the page settles can be lost."""
    prompt = cells(page).nth(index).locator(".jp-InputPrompt")
    for _ in range(2):
        run_from(page, index, 1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if re.search(r"\[(\d+|\*)\]", prompt.inner_text()):
                return
            time.sleep(0.2)
    raise TimeoutError(f"cell {index} did not start")


def _done(page: Any, index: int) -> None:
    """Wait until cell ``index`` has finished (its prompt shows its count)."""
    prompt = cells(page).nth(index).locator(".jp-InputPrompt")
    deadline = time.monotonic() + TIMEOUT / 1000
    while not re.search(r"\[\d+\]", prompt.inner_text()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"cell {index} did not finish")
        time.sleep(0.2)


def _button(scope: Any, name: str) -> Any:
    return scope.get_by_role("button", name=name, exact=True)


def capture_cells(page: Any, server: Server, theme: str, out: Path) -> list[Path]:
    """The confirm states, ask_user, the transcript, an allowed edit and the catalogue."""
    name = f"widgets_{theme}.ipynb"
    (server.root / "prices.py").write_text(PRICES)
    write_notebook(server.root / name, [
        ("setup", "code", setup(READ, EDIT, EDIT_PLOT, ASK)),
        ("clean", "code", "df = df.dropna()\ndf.describe()"),
        ("plot", "code", 'df.plot(x="date", y="price")'),
        ("prompt", "code", ("%%agent\nDrop only the rows without a price, make price a float, "
                           "and plot it.")),
        ("setup2", "code", setup(FILE_EDIT) + "%agent mode acceptEdits\n"),
        ("prompt2", "code", "%%agent\nUse the median price when one is missing in prices.py."),
        ("tools", "code", "%agent tools"),
    ])
    open_notebook(page, server, name)
    saved = []
    _run(page, 0)
    _done(page, 0)
    _run(page, 3)
    first = page.locator(".ae-confirm").nth(0)
    _button(first, "Approve").wait_for(timeout=TIMEOUT)
    saved.append(_shot(first, page, out, "confirm-diff", theme))
    _button(first, "Approve").click()
    first.locator(".ae-outcome").wait_for(state="visible", timeout=TIMEOUT)
    saved.append(_shot(first, page, out, "confirm-approved", theme))

    second = page.locator(".ae-confirm").nth(1)
    second.get_by_role("button", name="Reject, with optional feedback").wait_for(timeout=TIMEOUT)
    second.get_by_role("button", name="Reject, with optional feedback").click()
    second.locator("textarea.ae-feedback").fill("Keep the line plot; bars are too busy here.")
    _button(second, "Reject").click()
    second.locator(".ae-outcome").wait_for(state="visible", timeout=TIMEOUT)
    saved.append(_shot(second, page, out, "confirm-rejected", theme))

    ask = page.locator(".ae-ask").first
    ask.wait_for(timeout=TIMEOUT)
    saved.append(_shot(ask, page, out, "ask-user", theme))
    ask.get_by_label("Monthly means").check()
    _button(ask, "Send answer").click()
    transcript = page.locator(".ae-transcript").first
    transcript.locator(".ae-run-done").wait_for(timeout=TIMEOUT)
    saved.append(_shot(transcript, page, out, "transcript", theme))

    _done(page, 3)
    _run(page, 4)
    _done(page, 4)
    _run(page, 5)
    allowed = page.locator(".ae-transcript").nth(1)
    allowed.locator(".ae-run-done").wait_for(timeout=TIMEOUT)
    allowed.locator(".ae-allowed").wait_for(timeout=TIMEOUT)
    saved.append(_shot(allowed, page, out, "allowed-edit", theme))
    allowed.locator(".ae-allowed").click()  # opens the card: the diff of what ran unasked
    allowed.locator(".ae-tool-diff").wait_for(timeout=TIMEOUT)
    saved.append(_shot(allowed, page, out, "allowed-edit-open", theme))

    _done(page, 5)
    _run(page, 6)
    catalogue = page.locator(".ae-catalogue").first
    catalogue.wait_for(timeout=TIMEOUT)
    catalogue.locator('button[data-tool="glob"]').click()
    catalogue.locator(".ae-cat-detail-head").wait_for(timeout=TIMEOUT)
    saved.append(_shot(catalogue, page, out, "tool-catalogue", theme))
    return saved


def capture_trust(page: Any, server: Server, theme: str, out: Path) -> Path:
    """The trust question of a project whose ``.mcp.json`` names a server not yet trusted."""
    folder = server.root / f"project_{theme}"
    folder.mkdir(exist_ok=True)
    (folder / ".mcp.json").write_text(MCP_JSON)
    name = f"project_{theme}/trust.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", setup()),
        ("prompt", "code", "%%agent\nSummarise this project."),
    ])
    open_notebook(page, server, name)
    _run(page, 0)
    _done(page, 0)
    _run(page, 1)
    trust = page.locator(".ae-trust").first
    _button(trust, "Don't trust").wait_for(timeout=TIMEOUT)
    shot = _shot(trust, page, out, "project-trust", theme)
    _button(trust, "Don't trust").click()
    return shot


FIRST_RUN = '''\
%load_ext agent_ext
import agent_ext
from agent_ext.models import DemoModel
from agent_ext.models.config import LOCAL_SERVERS, demo_notice
# What a new user sees when no model is configured and no local server answers.
agent = agent_ext.get_agent(model=DemoModel())
agent.model_notice = demo_notice(None, LOCAL_SERVERS)
'''


def capture_first_run(page: Any, server: Server, theme: str, out: Path) -> Path:
    """A first prompt with no model configured: the setup notice and the demo's answer."""
    name = f"first_run_{theme}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", FIRST_RUN),
        ("prompt", "code", "%%agent\nWhat is the mean price per month?"),
    ])
    open_notebook(page, server, name)
    _run(page, 0)
    _done(page, 0)
    _run(page, 1)
    transcript = page.locator(".ae-transcript").first
    transcript.locator(".ae-run-done").wait_for(timeout=TIMEOUT)
    return _shot(transcript, page, out, "first-run", theme)


def capture(page: Any, server: Server, theme: str, out: Path) -> list[Path]:
    """Every state of ``STATES`` in ``theme`` into ``out``."""
    server.set_theme(THEMES[theme])
    out.mkdir(parents=True, exist_ok=True)
    return [*capture_cells(page, server, theme, out), capture_trust(page, server, theme, out),
            capture_first_run(page, server, theme, out)]


def capture_tour(page: Any, server: Server, theme: str, out: Path) -> Path:
    """Run the quickstart up to its cell fix's approval; save the failing cell and the card."""
    server.set_theme(THEMES[theme])
    name = f"{theme}/quickstart.ipynb"  # a folder per theme: each run keeps its kernel busy
    (server.root / theme).mkdir(exist_ok=True)
    shutil.copy(ROOT / "notebooks" / "quickstart.ipynb", server.root / name)
    open_notebook(page, server, name)
    wait_kernel(page)
    run_from(page, 1, 9)  # up to the cell that fails on purpose (the tenth)
    buggy = page.locator(".jp-Notebook .jp-Cell").nth(9)
    buggy.locator(".jp-OutputArea-output").first.wait_for(timeout=60_000)
    page.wait_for_selector(IDLE, timeout=60_000)
    run_from(page, 10, 1)
    card = page.locator(".ae-confirm").last
    card.get_by_role("button", name="Approve", exact=True).wait_for(timeout=60_000)
    dismiss_toasts(page)
    page.mouse.move(0, 0)
    buggy.scroll_into_view_if_needed()
    time.sleep(0.5)
    top, bottom = buggy.bounding_box(), card.bounding_box()
    area = page.locator(".jp-Notebook").first.bounding_box()
    assert top is not None and bottom is not None and area is not None
    target = out / f"tour-cell-fix-{theme}.png"
    page.screenshot(path=str(target), clip={
        "x": area["x"], "y": top["y"] - 8, "width": min(area["width"], 900),
        "height": bottom["y"] + bottom["height"] - top["y"] + 16})
    return target


GROUP = ('    ModelResponse(text="", tool_calls=tuple(ToolCall.of(f"edit_{n}", "notebook_edit", '
         '{"cell_id": n, "new_source": s}) for n, s in (("load", "df = pd.read_csv(\\"sales.csv\\", '
         'parse_dates=[\\"date\\"])"), ("clean", "df = df.dropna(subset=[\\"price\\"])"), '
         '("plot", "df.plot(x=\\"date\\", y=\\"price\\")")))),')


def capture_group(page: Any, server: Server, theme: str, out: Path) -> Path:
    """The card group of one step's three cell edits, the first card holding the keys."""
    server.set_theme(THEMES[theme])
    name = f"group_{theme}.ipynb"
    write_notebook(server.root / name, [
        ("setup", "code", setup(READ, GROUP)),
        ("load", "code", "df = pd.read_csv(\"sales.csv\")"),
        ("clean", "code", "df = df.dropna()"),
        ("plot", "code", "df.plot()"),
        ("prompt", "code", "%%agent\nParse the dates, drop only rows without a price, plot price."),
        ("next", "code", "df.describe()"),
    ])
    open_notebook(page, server, name)
    run_from(page, 0, 1)
    run_from(page, 4, 1)
    widget = page.locator(".ae-confirm").first
    widget.locator(".ae-card").first.wait_for(timeout=60_000)
    page.wait_for_function("document.activeElement && document.activeElement.closest('.ae-confirm')")
    dismiss_toasts(page)
    page.mouse.move(0, 0)
    target = out / f"confirm-group-{theme}.png"
    widget.screenshot(path=str(target))
    return target


def main(out: Path) -> list[Path]:
    """Every screenshot into ``out``."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise SystemExit("Chromium is not installed: apt-get install chromium")
    saved = []
    with tempfile.TemporaryDirectory() as base, jupyter_server("lab", Path(base)) as server, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            for theme in THEMES:
                page = browser.new_page(viewport={"width": 1100, "height": 1000})
                saved += capture(page, server, theme, out)
                page.close()
                page = browser.new_page(viewport={"width": 1100, "height": 1600})
                saved.append(capture_tour(page, server, theme, out))
                page.close()
                page = browser.new_page(viewport={"width": 1100, "height": 1400})
                saved.append(capture_group(page, server, theme, out))
                page.close()
        finally:
            browser.close()
    return saved


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=IMAGES)
    for path in main(parser.parse_args().out):
        print(path)
