"""Browser tests: real JupyterLab and Notebook 7 servers driven by Playwright in Debian's Chromium.

They run when Chromium, Playwright and the built extension are available and are skipped with
the reason otherwise; under CI (``CI=true``) a missing piece fails them instead. Screenshots of
every test go to ``tests/browser/artifacts/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.server import BUILT, Server, jupyter_server

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _unavailable(why: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"browser tests cannot run under CI: {why}", pytrace=False)
    pytest.skip(f"browser tests skipped: {why}")


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def install_chromium() -> str | None:
    """Install Debian's Chromium where this user can (root with apt-get); its path, or None."""
    apt = shutil.which("apt-get")
    if apt is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    print("\nbrowser tests: installing Chromium from the system's packages (apt-get)...")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium"]):
        try:
            subprocess.run(args, env=env, check=True, timeout=900, capture_output=True)
        except (OSError, subprocess.SubprocessError):
            return None
    return chromium_path()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright (Playwright's own browser download is not used)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright)")
    executable = chromium_path() or install_chromium()
    if executable is None:
        _unavailable("Chromium is not installed and could not be installed here "
                     "(as root: apt-get install chromium)")
    if not (BUILT / "package.json").is_file():
        _unavailable("the labextension is not built (cd labextension && jlpm install && "
                     "jlpm build:prod)")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def lab(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with jupyter_server("lab", tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="session")
def notebook7(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with jupyter_server("notebook", tmp_path_factory.mktemp("nb7")) as server:
        yield server


@pytest.fixture(params=["lab", "notebook7"])
def server(request: pytest.FixtureRequest) -> Server:
    """Each test that takes ``server`` runs in JupyterLab and in Notebook 7."""
    found: Server = request.getfixturevalue(request.param)
    return found


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh page; its last screen is saved as an artifact whatever the outcome."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    opened = context.new_page()
    try:
        yield opened
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        name = request.node.name.replace("[", "-").replace("]", "").replace("/", "_")
        try:
            opened.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        finally:
            context.close()
