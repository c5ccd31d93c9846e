"""Packaging: the wheel carries the prebuilt extension; a source install works without Node.

The wheel is built here (with Node), then installed into a fresh venv whose PATH has no Node:
``jupyter labextension list`` must show agent-ext enabled (JupyterLab and Notebook 7 load the
same federated extensions). A copy of the sources without any built extension installs on a
PATH without Node too, warning that the extension was skipped.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache",
             ".hypothesis", ".pytest_cache", "artifacts", "build", "dist"}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False,
                          timeout=540)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout + done.stderr


def fresh_venv(where: Path) -> tuple[Path, dict[str, str]]:
    """A venv that also sees this environment's packages, and a PATH without Node."""
    run([sys.executable, "-m", "venv", str(where)])
    purelib = subprocess.run([str(where / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "_parent_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHON"))}
    env["PATH"] = str(where / "bin")
    env["HOME"] = str(where / "home")
    assert shutil.which("node", path=env["PATH"]) is None
    return where / "bin" / "python", env


def test_wheel_ships_the_extension(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("building the wheel's extension needs Node.js")
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(ROOT)])
    wheel = next(wheels.glob("agent_ext-*.whl"))
    python, env = fresh_venv(tmp_path / "venv")
    run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)], env=env)
    listing = run([str(python), "-c", ("from jupyterlab.labextensions import LabExtensionApp; "
                   "LabExtensionApp.launch_instance()"), "list"], env=env)
    share = tmp_path / "venv" / "share" / "jupyter" / "labextensions"
    assert (share / "agent-ext" / "package.json").is_file()
    assert (share / "agent-ext" / "install.json").is_file()
    line = next(x for x in listing.splitlines() if "agent-ext" in x)
    assert "enabled" in line and "OK" in line, listing


def _ignore(folder: str, names: list[str]) -> set[str]:
    skipped = {n for n in names if n in SKIP_DIRS}
    if Path(folder).name == "agent_ext":
        skipped.add("labextension")
    if Path(folder).name == "labextension":
        skipped.add("lib")
    return skipped


def test_source_install_without_node_skips_the_extension(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=_ignore, symlinks=True)
    python, env = fresh_venv(tmp_path / "venv")
    out = run([str(python), "-m", "pip", "install", "-v", "--no-deps", str(source)], env=env)
    assert "Node.js was not found" in out
    share = tmp_path / "venv" / "share" / "jupyter" / "labextensions" / "agent-ext"
    assert not share.exists()
    run([str(python), "-c", "import agent_ext.jupyter.bridge"], env=env, cwd=tmp_path)
