"""The widgets' JavaScript: vitest (jsdom) and tsc in widgets/, run through npm.

``npm ci`` runs first when widgets/node_modules is missing. Skipped only when Node is not
installed; a missing npm or a failing install is a failure, not a skip.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

WIDGETS = Path(__file__).resolve().parent.parent / "widgets"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None,
                       reason="Node.js is not on PATH; the widget JavaScript tests need it"),
]


def npm(*args: str, timeout: float) -> None:
    exe = shutil.which("npm")
    assert exe is not None, "node is installed but npm is not on PATH"
    out = subprocess.run([exe, *args], cwd=WIDGETS, capture_output=True, text=True,
                         timeout=timeout, check=False)
    assert out.returncode == 0, f"npm {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}"


@pytest.fixture(scope="module")
def installed() -> None:
    if not (WIDGETS / "node_modules").is_dir():
        npm("ci", "--no-audit", "--no-fund", timeout=600)


@pytest.mark.timeout(900)
def test_widget_javascript_tests_pass(installed: None) -> None:
    npm("test", timeout=300)


@pytest.mark.timeout(900)
def test_widget_javascript_typechecks(installed: None) -> None:
    npm("run", "typecheck", timeout=300)
