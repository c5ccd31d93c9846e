"""A sandbox for consent tests: a project, an outside folder and a home, with marked secrets.

Every secret holds the text ``SECRET-`` followed by where it lives, so a result that leaks any
protected content is found by one substring test. Every file is fingerprinted (content, mode,
mtime, inode) before a call so that any change the call made, however small, is seen.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

LEAK = "SECRET-"

NOTEBOOK_CELL_ID = "c0ffee00"


def notebook_json(marker: str) -> str:
    """A small nbformat 4.5 notebook whose only cell and output hold ``marker``."""
    return json.dumps({
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"language_info": {"name": "python"}},
        "cells": [{
            "id": NOTEBOOK_CELL_ID, "cell_type": "code", "execution_count": 1, "metadata": {},
            "source": f"token = '{marker}'",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": marker + "\n"}],
        }],
    })


@dataclass(frozen=True)
class Sandbox:
    root: Path
    project: Path
    outside: Path
    home: Path

    def fill(self, text: str) -> str:
        """Replace ``{project}``, ``{outside}`` and ``{home}`` by this sandbox's folders."""
        for key in ("project", "outside", "home"):
            text = text.replace("{" + key + "}", str(getattr(self, key)))
        return text

    def fingerprint(self) -> dict[str, tuple[object, ...]]:
        """Every file and folder under the sandbox, with what a change would alter."""
        found: dict[str, tuple[object, ...]] = {}
        for base, dirs, files in os.walk(self.root):
            for name in dirs + files:
                path = Path(base) / name
                rel = str(path.relative_to(self.root))
                if "/__pycache__" in rel or (rel.startswith("home/.agent_ext/")
                                               and rel != "home/.agent_ext/settings.json"):
                    continue
                info = path.lstat()
                digest = ""
                if path.is_file() and not path.is_symlink():
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[rel] = (digest, info.st_mode, info.st_mtime_ns, info.st_ino,
                              os.readlink(path) if path.is_symlink() else "")
        return found


def make_sandbox(root: Path, *, git: bool = False) -> Sandbox:
    """The standard layout the corpus names with placeholders."""
    project, outside, home = root / "project", root / "outside", root / "home"
    files = {
        project / "secrets" / "key.txt": "SECRET-key VALUE=1\n",
        project / "secrets" / "sub" / "deep.txt": "SECRET-deep\n",
        project / "secrets" / "nb.ipynb": notebook_json("SECRET-nb"),
        project / "src" / "app.py": "print('app')\n",
        project / "README.md": "# project\n",
        project / "victim": "VICTIM\n",
        project / "victimdir" / "keep.txt": "VICTIM\n",
        project / "notebook.ipynb": notebook_json("plain"),
        project / "script.sed": "w victim\n",
        outside / "passwd": "SECRET-outside\n",
        outside / "victim": "VICTIM\n",
        outside / "other.ipynb": notebook_json("SECRET-outside-nb"),
        home / ".ssh" / "id_rsa": "SECRET-ssh-key\n",
        home / "notes.txt": "SECRET-home-notes\n",
        home / "victim": "VICTIM\n",
        home / ".agent_ext" / "settings.json": "{}\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if git:
        subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
        subprocess.run(["git", "-C", str(project), "add", "README.md", "src"], check=True,
                       timeout=30)
        subprocess.run(["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t",
                        "commit", "-qm", "init"], check=True, timeout=30)
    else:
        (project / ".git").mkdir()
        (project / ".git" / "config").write_text("[core]\n")
        (project / ".git" / "hooks").mkdir()
    return Sandbox(root, project.resolve(), outside.resolve(), home.resolve())
