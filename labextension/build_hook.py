"""Hatch build hook: build the JupyterLab extension into the wheel when Node.js is there.

Users install a wheel that already holds the built extension and never need Node. A source
install on a machine without Node still installs the Python package: the extension is skipped
with a warning (the kernel then edits notebooks as .ipynb files). An extension built before
(a checkout's earlier build, or an sdist) is shipped as it is when Node is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

NAME = "agent-ext"
BUILT = "agent_ext/labextension"
SHARE = f"share/jupyter/labextensions/{NAME}"


class LabextensionBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Runs ``jlpm install`` and ``jlpm build:prod`` in labextension/ (see the module docstring)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        built = root / BUILT
        if os.environ.get("AGENT_EXT_SKIP_LABEXTENSION") != "1":
            if shutil.which("node") is not None:
                _build(root / "labextension")
            elif not (built / "package.json").is_file():
                warnings.warn(
                    "Node.js was not found, so agent-ext's JupyterLab extension was not built: "
                    "the agent will edit notebooks as .ipynb files instead of live in the "
                    "browser. Install a wheel of agent-ext, or install Node.js 20 or newer and "
                    "install again from source.", stacklevel=1)
        if not (built / "package.json").is_file():
            return
        build_data["artifacts"].append(BUILT)
        if self.target_name == "wheel":
            build_data["shared_data"][BUILT] = SHARE
            build_data["shared_data"]["labextension/install.json"] = f"{SHARE}/install.json"


def _build(folder: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("YARN_ENABLE_TELEMETRY", "0")
    jlpm = [sys.executable, "-c", "from jupyter_builder.jlpm import main; main()"]
    if not (folder / "node_modules" / "@jupyter" / "builder").is_dir():
        subprocess.run([*jlpm, "install", "--immutable"], cwd=folder, env=env, check=True)
    subprocess.run([*jlpm, "build:prod"], cwd=folder, env=env, check=True)
