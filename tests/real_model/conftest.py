"""The real-model tier: llama.cpp's ``llama-server`` with a small Qwen2.5-Coder, on 127.0.0.1.

``scripts/setup_real_model.py`` builds the server and installs the model into a cache folder and
prints the two variables read here (``AGENT_EXT_LLAMA_SERVER``, ``AGENT_EXT_GGUF``); without
them the cache's default paths are tried, and the tier is skipped, saying what to run, when
neither is there. One server serves the whole session at temperature 0 with a fixed seed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

CACHE = Path(os.environ.get("AGENT_EXT_CACHE") or Path.home() / ".cache" / "agent_ext")
CONTEXT = 8192


@dataclass(frozen=True)
class LlamaServer:
    url: str
    model: Path
    log: Path

    @property
    def base_url(self) -> str:
        return self.url + "/v1"


def _paths() -> tuple[Path, Path]:
    binary = Path(os.environ.get("AGENT_EXT_LLAMA_SERVER")
                  or CACHE / "llama.cpp" / "build" / "bin" / "llama-server")
    gguf = Path(os.environ.get("AGENT_EXT_GGUF")
                or CACHE / "models" / "qwen2.5-coder-1.5b-q4.gguf")
    return binary, gguf


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    binary, gguf = _paths()
    if not binary.exists() or not gguf.exists():
        pytest.skip(f"no llama-server at {binary} or no model at {gguf}: run "
                    "`python3 scripts/setup_real_model.py` first")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(binary), "-m", str(gguf), "--jinja", "-c", str(CONTEXT), "--host", "127.0.0.1",
             "--port", str(port), "--temp", "0", "--seed", "1", "-t", str(os.cpu_count() or 2),
             "--parallel", "1", "--no-webui"],
            stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama-server exited with {proc.returncode}: "
                            f"{log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama-server did not become healthy within 180 s")
            time.sleep(0.5)
        yield LlamaServer(url, gguf, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
