"""How much disk ``pip install -e '.[test]'`` takes.

By default it adds up, from the installed distributions' own file lists, every distribution
that ``agent-ext[test]`` pulls in according to this checkout's ``pyproject.toml`` (offline and
quick; a distribution that is not installed here is listed as missing). With ``--fresh`` it
makes a new virtualenv in a temporary folder, runs ``pip install -e '.[test]'`` there, measures
the folder and deletes it (this downloads what pip's cache lacks). Target: under 1 GB.

Run: ``python tests/bench/bench_install_size.py [--fresh]``
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
TARGET_BYTES = 1_000_000_000


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _wanted(req: Requirement, extras: set[str]) -> bool:
    if req.marker is None:
        return True
    return any(req.marker.evaluate({"extra": e}) for e in extras or {""})


def closure(extra: str = "test") -> tuple[dict[str, int], list[str]]:
    """Bytes per installed distribution that ``agent-ext[extra]`` needs, and the names of
    those not installed in this environment."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    own = _norm(project["name"])
    optional = project["optional-dependencies"]
    todo: list[str] = []

    def add_own(extras: set[str]) -> None:
        todo.extend(project["dependencies"])
        for e in extras:
            for r in optional.get(e, []):
                req = Requirement(r)
                if _norm(req.name) == own:
                    add_own(set(req.extras))
                else:
                    todo.append(r)

    add_own({extra})
    sizes: dict[str, int] = {}
    missing: list[str] = []
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        text = todo.pop()
        req = Requirement(text)
        key = (_norm(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            missing.append(req.name)
            continue
        name = _norm(dist.metadata["Name"])
        if name not in sizes:
            sizes[name] = sum(p.stat().st_size for f in dist.files or []
                              if (p := Path(str(f.locate()))).is_file())
        for dep in dist.requires or []:
            dreq = Requirement(dep)
            if _wanted(dreq, set(req.extras)):
                todo.append(dep)
    sizes[own] = sum(p.stat().st_size for p in (ROOT / "agent_ext").rglob("*") if p.is_file())
    return sizes, sorted(set(missing))


def fresh() -> int:
    """Bytes of a new virtualenv after ``pip install -e '.[test]'`` (the folder is removed)."""
    with tempfile.TemporaryDirectory(prefix="agent-ext-size-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-e", f"{ROOT}[test]"],
                       check=True, timeout=3600)
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(venv)
                   for f in fs if not os.path.islink(os.path.join(d, f)))


def report(sizes: dict[str, int], missing: list[str]) -> str:
    total = sum(sizes.values())
    biggest = sorted(sizes.items(), key=lambda kv: -kv[1])[:8]
    lines = [(f"agent-ext[test] needs {len(sizes)} distributions, {total / 1e6:.0f} MB "
              f"installed (target < {TARGET_BYTES / 1e9:.0f} GB); largest:")]
    lines += [f"  {name:<24}{size / 1e6:8.1f} MB" for name, size in biggest]
    if missing:
        lines.append(f"  not installed here, not counted: {', '.join(missing)}")
    return "\n".join(lines)


if __name__ == "__main__":
    if "--fresh" in sys.argv:
        print(f"fresh virtualenv with pip install -e '.[test]': {fresh() / 1e6:.0f} MB "
              f"(target < {TARGET_BYTES / 1e9:.0f} GB)")
    else:
        print(report(*closure()))
