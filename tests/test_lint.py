"""The code gates run with the tests: ruff on everything, mypy strict on the package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_ruff() -> None:
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "agent_ext", "tests", "scripts"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_mypy_strict() -> None:
    out = subprocess.run([sys.executable, "-m", "mypy", "agent_ext"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
