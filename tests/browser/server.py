"""A real Jupyter server (JupyterLab or Notebook 7) for browser tests, on 127.0.0.1 only.

Each server gets a random token, a free port, its own root folder, settings (news and update
checks off, so no toast covers the page), and a data path whose ``labextensions/agent-ext`` is
the extension built from this checkout. Kernels run this checkout's ``agent_ext``.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILT = ROOT / "agent_ext" / "labextension"


@dataclass
class Server:
    """A running server: where it is and how to reach a notebook in it."""

    app: str
    port: int
    token: str
    root: Path
    settings: Path
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def notebook_url(self, name: str) -> str:
        """The page of notebook ``name`` (relative to the root) in this server's app.

        JupyterLab gets a workspace of its own, so no tab of an earlier test is restored.
        """
        if self.app == "lab":
            workspace = name.replace("/", "-").removesuffix(".ipynb")
            return f"{self.base}/lab/workspaces/{workspace}/tree/{name}?token={self.token}"
        return f"{self.base}/notebooks/{name}?token={self.token}"

    def set_theme(self, theme: str) -> None:
        """Use ``theme`` (e.g. "JupyterLab Dark") from the next page load on."""
        _write_settings(self.settings, "@jupyterlab/apputils-extension", "themes",
                        {"theme": theme})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_settings(folder: Path, plugin: str, name: str, values: dict[str, object]) -> None:
    target = folder / plugin / f"{name}.jupyterlab-settings"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(values))


def server_env(base: Path) -> dict[str, str]:
    """The server's (and so its kernels') environment: scratch home, this checkout, no keys."""
    data = base / "data"
    (data / "labextensions").mkdir(parents=True, exist_ok=True)
    link = data / "labextensions" / "agent-ext"
    if not link.exists():
        link.symlink_to(BUILT, target_is_directory=True)
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_BASE_URL"))
           and k not in ("AGENT_EXT_MODEL", "JPY_SESSION_NAME", "JUPYTER_PATH")}
    home = base / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), AGENT_EXT_CONFIG_DIR=str(home / ".agent_ext"),
               AGENT_EXT_PLUGINS="none", PYTHONPATH=str(ROOT), JUPYTER_PATH=str(data),
               JUPYTER_CONFIG_DIR=str(base / "config"), JUPYTER_RUNTIME_DIR=str(base / "rt"),
               JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env


@contextmanager
def jupyter_server(app: str, base: Path, *, timeout: float = 60) -> Iterator[Server]:
    """Run ``jupyter lab`` or ``jupyter notebook`` until the block ends (always stopped)."""
    root = base / "root"
    root.mkdir(parents=True, exist_ok=True)
    server = Server(app=app, port=free_port(), token=secrets.token_hex(16), root=root,
                    settings=base / "settings", log=base / f"{app}.log")
    _write_settings(server.settings, "@jupyterlab/apputils-extension", "notification",
                    {"fetchNews": "false", "checkForUpdates": False})
    cmd = [sys.executable, "-m", "jupyter", app, "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--IdentityProvider.token={server.token}", f"--port={server.port}",
           "--ServerApp.port_retries=0", "--allow-root", f"--ServerApp.root_dir={root}"]
    with open(server.log, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=server_env(base),
                                cwd=root)
    try:
        _wait_ready(server, proc, timeout)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def _wait_ready(server: Server, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(f"{server.base}/api/status",
                                     headers={"Authorization": f"token {server.token}"})
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter {server.app} exited:\n{server.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(request, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"jupyter {server.app} did not start in {timeout} s:\n"
                       f"{server.log.read_text()[-3000:]}")
