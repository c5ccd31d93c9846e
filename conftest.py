"""Test-session isolation that must hold before any kernel starts (kernels inherit it), and a
clean stop on SIGTERM.

Kernels started by the tests and by nbval for ``notebooks/`` see a temporary HOME and config
folder and no installed plugins, never the developer's own. Temporary files of the tests and of
every process they start go to a folder inside that HOME, removed when the run ends, so a kernel
that is killed rather than shut down leaves nothing in the system's temporary folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"stopped by signal {signum}")


def pytest_configure(config: pytest.Config) -> None:
    # A run ended by SIGTERM (a CI time limit, ``kill``) stops like Ctrl+C: the fixtures' teardown
    # runs and stops every server and kernel they started, instead of leaving them running.
    signal.signal(signal.SIGTERM, _interrupt)
    home = Path(tempfile.mkdtemp(prefix="agent_ext-test-home-"))
    config.add_cleanup(functools.partial(shutil.rmtree, home, ignore_errors=True))
    scratch = home / "tmp"
    scratch.mkdir()
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = None  # read TMPDIR again
    os.environ["HOME"] = str(home)
    os.environ["AGENT_EXT_CONFIG_DIR"] = str(home / ".agent_ext")
    os.environ["AGENT_EXT_PLUGINS"] = "none"
    for var in ("AGENT_EXT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL"):
        os.environ.pop(var, None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the browser tests last.

    Playwright's sync API keeps an event loop running in the main thread while its browser is
    open (a session fixture), and asyncio tests cannot start their own loop inside it.
    """
    items.sort(key=lambda item: "tests/browser/" in item.nodeid)
