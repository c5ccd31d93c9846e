"""The screenshot script runs end to end (into the artifacts folder, not docs/images)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS
from tests.browser.screenshots import capture
from tests.browser.server import Server


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_confirm_diff_screenshot(lab: Server, page: Any, theme: str) -> None:
    saved = capture(page, lab, theme, ARTIFACTS)
    assert saved.stat().st_size > 5_000
    lab.set_theme("JupyterLab Light")
