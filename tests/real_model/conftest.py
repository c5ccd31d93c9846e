"""A real llama.cpp server for the ``real_model`` tier, shared by the whole session.

``scripts/setup_real_model.py`` builds ``llama-server`` and installs a small Qwen2.5-Coder into a
cache folder (``$AGENT_EXT_CACHE``, default ``~/.cache/agent_ext`` of the real home) and prints
``$AGENT_EXT_LLAMA_SERVER`` and ``$AGENT_EXT_GGUF``; without them the cache's default paths are
tried, and without either the tests are skipped, saying what to run. The server listens on
127.0.0.1 only, at temperature 0 with a fixed seed, and is stopped by its pid when the session
ends.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes import free_port

# The tests run with a temporary HOME: the cache is under the user's real one.
CACHE = Path(os.environ.get("AGENT_EXT_CACHE")
             or Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "agent_ext")
SERVER_ENV, GGUF_ENV = "AGENT_EXT_LLAMA_SERVER", "AGENT_EXT_GGUF"
DEFAULT_SERVER = CACHE / "llama.cpp" / "build" / "bin" / "llama-server"
DEFAULT_GGUF = CACHE / "models" / "qwen2.5-coder-1.5b-q4.gguf"
N_CTX = CONTEXT = 8192
STARTUP_SECONDS = 180


@dataclass(frozen=True)
class LlamaServer:
    url: str
    n_ctx: int
    pid: int
    log: Path

    @property
    def base_url(self) -> str:
        return self.url + "/v1"


def _healthy(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url + "/health", timeout=2) as response:
            return json.loads(response.read()).get("status") == "ok"  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return False


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    binary = Path(os.environ.get(SERVER_ENV) or DEFAULT_SERVER)
    gguf = Path(os.environ.get(GGUF_ENV) or DEFAULT_GGUF)
    if not binary.is_file() or not gguf.is_file():
        pytest.skip(f"real_model tier: needs llama-server at {binary} (${SERVER_ENV}) and a GGUF "
                    f"model at {gguf} (${GGUF_ENV}); run `python3 scripts/setup_real_model.py`")
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    threads = str(min(2, os.cpu_count() or 1))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(binary), "-m", str(gguf), "--jinja", "-c", str(N_CTX), "--host", "127.0.0.1",
             "--port", str(port), "--temp", "0", "--seed", "1", "-t", threads, "-np", "1"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"llama-server exited with {proc.returncode}; see {log}:\n"
                            + log.read_text(errors="replace")[-2000:])
            if time.monotonic() > deadline:
                pytest.fail(f"llama-server was not healthy after {STARTUP_SECONDS} s; see {log}")
            time.sleep(0.5)
        yield LlamaServer(url, N_CTX, proc.pid, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
