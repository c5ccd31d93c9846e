"""The trust store: the user's answers per project, kept in the user config dir.

``trusted_projects.json`` maps each resolved project root to the answer (``trusted`` or
``distrusted``), when it was given, and the digest of exactly what was shown. An answer holds
only for that digest: a changed file asks again. "Trust once" answers live in this process
only. The file is replaced atomically; a damaged one is reported and read as "nothing trusted",
and the next answer moves it aside (``trusted_projects.json.damaged``) rather than losing it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_ext.fs.atomic import atomic_write
from agent_ext.settings import user_config_dir

from .project import ProjectAsk, TrustItem

STORE_NAME = "trusted_projects.json"
Answer = Literal["trusted", "distrusted"]
_VERSION = 1
# "Trust once": (root, digest) pairs trusted for the life of this process (the kernel session).
_once: set[tuple[str, str]] = set()
_once_lock = threading.Lock()


@dataclass(frozen=True)
class TrustRecord:
    """A kept answer: what was answered, for which digest, and when (ISO 8601, UTC)."""

    answer: Answer
    digest: str
    at: str
    shown: tuple[str, ...] = ()

    @property
    def date(self) -> str:
        """The day of the answer, ``2026-12-01``."""
        return self.at[:10]


class TrustStore:
    """Reads and writes ``trusted_projects.json`` (see the module docstring)."""

    def __init__(self, path: str | Path | None = None, *,
                 environ: Mapping[str, str] | None = None) -> None:
        self.path = Path(path) if path is not None else user_config_dir(environ) / STORE_NAME
        self.problems: list[str] = []

    # -- kept answers ---------------------------------------------------------------------------

    def lookup(self, root: str | Path) -> TrustRecord | None:
        """The kept answer for ``root`` (any digest), or None."""
        entry = self._read().get(_key(root))
        if not isinstance(entry, dict):
            return None
        answer, digest, at = entry.get("answer"), entry.get("digest"), entry.get("at")
        if answer not in ("trusted", "distrusted") or not isinstance(digest, str):
            return None
        shown = entry.get("shown")
        return TrustRecord(answer, digest, str(at or ""),
                           tuple(str(s) for s in shown) if isinstance(shown, list) else ())

    def record(self, ask: ProjectAsk, answer: Answer) -> TrustRecord:
        """Keep ``answer`` for what ``ask`` showed; replaces any earlier answer for the root."""
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        record = TrustRecord(answer, ask.digest, at, tuple(i.render() for i in ask.items))
        projects = self._read(for_update=True)
        entry = projects.setdefault(_key(ask.root), {})
        entry.update({"answer": answer, "digest": record.digest, "at": at,
                      "shown": list(record.shown)})
        self._write(projects)
        forget_once(ask.root)
        return record

    def own(self, root: str | Path) -> frozenset[str]:
        """The ``key_text()`` of the items the user added to ``root`` through agent_ext."""
        entry = self._read().get(_key(root))
        listed = entry.get("own") if isinstance(entry, dict) else None
        return frozenset(str(k) for k in listed) if isinstance(listed, list) else frozenset()

    def add_own(self, root: str | Path, items: list[TrustItem]) -> None:
        """Keep ``items`` as the user's own for ``root`` (they apply without asking)."""
        if not items:
            return
        projects = self._read(for_update=True)
        entry = projects.setdefault(_key(root), {})
        listed = entry.get("own") if isinstance(entry.get("own"), list) else []
        entry["own"] = [*listed, *(k for k in (i.key_text() for i in items) if k not in listed)]
        self._write(projects)

    def forget(self, root: str | Path) -> bool:
        """Drop the kept answer for ``root`` (and any "once"); whether one was kept."""
        forget_once(root)
        projects = self._read(for_update=True)
        entry = projects.get(_key(root))
        if not isinstance(entry, dict) or "answer" not in entry:
            return False
        for key in ("answer", "digest", "at", "shown"):
            entry.pop(key, None)
        self._write(projects)
        return True

    # -- the file -------------------------------------------------------------------------------

    def _read(self, *, for_update: bool = False) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            return self._damaged(f"cannot be read ({exc})", for_update)
        try:
            data = json.loads(text) if text.strip() else {"version": _VERSION, "projects": {}}
        except json.JSONDecodeError as exc:
            return self._damaged(f"is not valid JSON (line {exc.lineno}: {exc.msg})", for_update)
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return self._damaged('has no "projects" object', for_update)
        return projects

    def _damaged(self, what: str, for_update: bool) -> dict[str, Any]:
        aside = self.path.with_name(self.path.name + ".damaged")
        if for_update:
            if aside.exists():
                aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
            self.path.replace(aside)
            note = (f"{self.path} {what}; it was moved to {aside} and a new one started, so "
                    "earlier answers there need to be given again.")
        else:
            note = (f"{self.path} {what}, so agent_ext treats every project as not trusted; "
                    "fix or remove it, or type `%agent trust` to start a new one (the damaged "
                    f"file is kept as {aside.name}).")
        if note not in self.problems:
            self.problems.append(note)
        return {}

    def _write(self, projects: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": _VERSION, "projects": projects}, indent=2,
                          ensure_ascii=False, sort_keys=True)
        atomic_write(self.path, (text + "\n").encode("utf-8"), mode=0o600)


# -- "trust once" -------------------------------------------------------------------------------


def trust_once(ask: ProjectAsk) -> None:
    """Trust what ``ask`` shows until this process ends (it is not written anywhere)."""
    with _once_lock:
        _once.add((_key(ask.root), ask.digest))


def trusted_once(ask: ProjectAsk) -> bool:
    with _once_lock:
        return (_key(ask.root), ask.digest) in _once


def forget_once(root: str | Path | None = None) -> None:
    """Forget "trust once" answers for ``root`` (None: for every project)."""
    with _once_lock:
        if root is None:
            _once.clear()
        else:
            key = _key(root)
            _once.difference_update({p for p in _once if p[0] == key})


def _key(root: str | Path) -> str:
    return str(Path(root).expanduser().resolve())
