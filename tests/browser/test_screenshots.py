"""The screenshot script runs end to end (into the artifacts folder, not docs/images)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS
from tests.browser.screenshots import capture, capture_tour
from tests.browser.server import Server


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_confirm_diff_screenshot(lab: Server, page: Any, theme: str) -> None:
    saved = capture(page, lab, theme, ARTIFACTS)
    assert saved.stat().st_size > 5_000
    lab.set_theme("JupyterLab Light")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_tour_screenshot_is_of_the_real_notebook(lab: Server, page: Any) -> None:
    page.set_viewport_size({"width": 1100, "height": 1600})
    saved = capture_tour(page, lab, "light", ARTIFACTS)
    assert saved.stat().st_size > 20_000
    card = page.locator(".ae-confirm").last
    assert card.locator(".ae-target").inner_text().startswith("cell 10 · [5] · `prices")
