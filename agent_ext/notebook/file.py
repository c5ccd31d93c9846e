"""FileNotebook: a notebook as an .ipynb file on disk, edited by cell id.

Used where there is no browser to talk to (VS Code, nbclient, papermill, notebooks other than
the open one). Every edit is written at once with ``atomic_write``, so a failed write leaves the
old file whole and no cell is ever lost. The write keeps the file's JSON spelling (indent,
trailing newline, line-array sources) so a diff shows only the changed cells. A file changed on
disk since this document last read it is refused, like any file the agent edits.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_ext.core.errors import ErrorCode
from agent_ext.fs import atomic_write
from agent_ext.fs.cache import content_digest
from agent_ext.fs.lock import file_lock

from .document import CellData, NotebookError, NotebookSnapshot
from .ids import is_valid_id, new_cell_id
from .jsonstyle import JsonStyle, join_source, spell_outputs, spell_source, uses_lines

CELL_TYPES = ("code", "markdown", "raw")
_Cells = list[dict[str, Any]]


@dataclass(frozen=True)
class _Loaded:
    """The file as last read or written by this document."""

    raw: dict[str, Any]
    style: JsonStyle
    st: os.stat_result
    snapshot: NotebookSnapshot
    #: sha-256 of the bytes, so a change that keeps size and mtime is still seen.
    digest: str = ""


class FileNotebook:
    """A NotebookDocument backed by an .ipynb file. Thread-safe; edits are atomic writes."""

    live = False

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path: str | None = os.fspath(Path(path).absolute())
        self._file = Path(os.fspath(path)).absolute()
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    @property
    def last_stat(self) -> os.stat_result | None:
        """The stat of the file as this document last read or wrote it."""
        return self._loaded.st if self._loaded is not None else None

    async def read(self) -> NotebookSnapshot:
        return await asyncio.to_thread(self.read_sync)

    def read_sync(self) -> NotebookSnapshot:
        """``read`` without the event loop (benchmarks, threads)."""
        with self._lock:
            return self._load().snapshot

    async def replace_source(self, cell_id: str, source: str, *, clear_outputs: bool) -> None:
        def change(cells: _Cells, _: dict[str, Any]) -> None:
            i = self._index(cells, cell_id)
            cell = dict(cells[i])
            cell["source"] = spell_source(source, uses_lines(cell.get("source")))
            if clear_outputs and cell.get("cell_type") == "code":
                cell["outputs"], cell["execution_count"] = [], None
            cells[i] = cell
        await self._edit(change)

    async def insert(self, after_cell_id: str | None, cell_type: str, source: str,
                     cell_id: str) -> None:
        _check_type(cell_type)

        def change(cells: _Cells, raw: dict[str, Any]) -> None:
            at = 0 if after_cell_id is None else self._index(cells, after_cell_id) + 1
            with_ids = _version(raw) >= (4, 5)
            if with_ids and (not is_valid_id(cell_id) or cell_id in _ids(cells)):
                raise NotebookError(ErrorCode.NOTEBOOK_EDIT_FAILURE,
                                    f"Cannot insert a cell with id {cell_id!r}: it is not a valid "
                                    "unused cell id. Choose another id.")
            cells.insert(at, _new_cell(cell_type, source, cell_id if with_ids else None,
                                       _line_style(cells, at)))
        await self._edit(change)

    async def delete(self, cell_id: str) -> None:
        def change(cells: _Cells, _: dict[str, Any]) -> None:
            del cells[self._index(cells, cell_id)]
        await self._edit(change)

    async def move(self, cell_id: str, after_cell_id: str | None) -> None:
        def change(cells: _Cells, _: dict[str, Any]) -> None:
            if after_cell_id == cell_id:
                raise NotebookError(ErrorCode.NOTEBOOK_EDIT_FAILURE,
                                    f"Cannot move cell {cell_id} after itself.")
            cell = cells.pop(self._index(cells, cell_id))
            at = 0 if after_cell_id is None else self._index(cells, after_cell_id) + 1
            cells.insert(at, cell)
        await self._edit(change)

    async def set_type(self, cell_id: str, cell_type: str) -> None:
        _check_type(cell_type)

        def change(cells: _Cells, _: dict[str, Any]) -> None:
            i = self._index(cells, cell_id)
            cells[i] = _retyped(cells[i], cell_type)
        await self._edit(change)

    async def set_outputs(self, cell_id: str, outputs: list[dict[str, Any]],
                          execution_count: int | None) -> None:
        def change(cells: _Cells, _: dict[str, Any]) -> None:
            i = self._index(cells, cell_id)
            cell = dict(cells[i])
            if cell.get("cell_type") != "code":
                raise NotebookError(ErrorCode.NOTEBOOK_EDIT_FAILURE,
                                    f"Cell {cell_id} is a {cell.get('cell_type')} cell; only code "
                                    "cells have outputs.")
            cell["outputs"] = spell_outputs(outputs, uses_lines(cell.get("source")))
            cell["execution_count"] = execution_count
            cells[i] = cell
        await self._edit(change)

    async def save(self) -> None:
        """Nothing to do: every edit was written when it was made."""

    async def ensure_persistent_ids(self) -> bool:
        changed = False

        def change(cells: _Cells, raw: dict[str, Any]) -> None:
            nonlocal changed
            taken: set[str] = set()
            for i, cell in enumerate(cells):
                found = cell.get("id")
                if isinstance(found, str) and is_valid_id(found) and found not in taken:
                    taken.add(found)
                    continue
                fresh = new_cell_id(taken | _ids(cells))
                cells[i] = {**cell, "id": fresh}
                taken.add(fresh)
                changed = True
            if _version(raw) < (4, 5):
                raw["nbformat"], raw["nbformat_minor"] = 4, 5
                changed = True
            if not changed:
                raise _NoChangeError

        try:
            await self._edit(change)
        except _NoChangeError:
            return False
        return changed

    async def selection(self) -> str | None:
        return None

    # -- internals ------------------------------------------------------------------------------

    def _load(self) -> _Loaded:
        """The file's content, parsed again only when its fingerprint changed. Lock held."""
        try:
            st = self._file.stat()
        except FileNotFoundError:
            raise NotebookError(ErrorCode.FILE_NOT_FOUND,
                                f"Notebook not found: {self._file}. Check the path (ls or glob "
                                "find .ipynb files).") from None
        except OSError as err:
            raise NotebookError(ErrorCode.READ_CONTENT_FAILURE,
                                f"Could not read {self._file}: {err.strerror or err}.") from None
        if self._loaded is not None and _same(self._loaded.st, st):
            return self._loaded
        try:
            with open(self._file, "rb") as f:
                st = os.fstat(f.fileno())
                data = f.read()
        except OSError as err:
            raise NotebookError(ErrorCode.READ_CONTENT_FAILURE,
                                f"Could not read {self._file}: {err.strerror or err}.") from None
        text, raw = parse_notebook_bytes(data, self._file)
        self._loaded = _Loaded(raw, JsonStyle.detect(text), st, _snapshot(raw, self.path),
                               content_digest(data))
        return self._loaded

    def _unchanged_on_disk(self, loaded: _Loaded) -> bool:
        """Whether the file still holds the bytes ``loaded`` came from (lock held)."""
        try:
            return content_digest(self._file.read_bytes()) == loaded.digest
        except OSError:
            return False

    async def _edit(self, change: Callable[[_Cells, dict[str, Any]], None]) -> None:
        await asyncio.to_thread(self._edit_sync, change)

    def _edit_sync(self, change: Callable[[_Cells, dict[str, Any]], None]) -> None:
        # The file lock keeps another agent's write (another document, another process) from
        # landing between this check and this write.
        with self._lock, file_lock(self._file):
            before = self._loaded
            loaded = self._load()
            if before is not None and (loaded is not before
                                       or not self._unchanged_on_disk(loaded)):
                raise NotebookError(
                    ErrorCode.FILE_CHANGED_SINCE_READ,
                    f"{self._file} changed on disk since it was read (saved by the user or another "
                    "program); nothing was written. Read the notebook again with read_file, "
                    "then retry.")
            raw = dict(loaded.raw)
            cells: _Cells = list(raw.get("cells") or [])
            change(cells, raw)
            raw["cells"] = cells
            try:
                data = loaded.style.dumps(raw)
            except (TypeError, ValueError) as err:
                raise NotebookError(ErrorCode.NOTEBOOK_EDIT_FAILURE,
                                    f"Could not write {self._file}: the new content is not JSON "
                                    f"({err}); nothing was written.") from None
            try:
                st = atomic_write(self._file, data)
            except OSError as err:
                raise NotebookError(ErrorCode.NOTEBOOK_EDIT_FAILURE,
                                    f"Could not write {self._file}: {err}") from None
            self._loaded = _Loaded(raw, loaded.style, st, _snapshot(raw, self.path),
                                   content_digest(data))

    def _index(self, cells: _Cells, cell_id: str) -> int:
        for i, cell in enumerate(cells):
            found = cell.get("id")
            shown = found if isinstance(found, str) and found else f"cell-{i}"
            if shown == cell_id:
                return i
        raise NotebookError(ErrorCode.NOTEBOOK_CELL_NOT_FOUND,
                            f"No cell {cell_id!r} in {self._file}. Read the notebook again with "
                            "read_file to see its cells and their ids.")


class _NoChangeError(Exception):
    """Raised inside an edit that turns out to change nothing, so nothing is written."""


def parse_notebook_bytes(data: bytes, where: object) -> tuple[str, dict[str, Any]]:
    """Decode and parse .ipynb bytes into a v4 notebook dict; raises NotebookError."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _invalid(where, f"it is not UTF-8 text ({err.reason} at byte {err.start})") from None
    try:
        raw = json.loads(text.removeprefix("\ufeff"))
    except ValueError as err:
        raise _invalid(where, f"it is not valid JSON ({err})") from None
    if not isinstance(raw, dict):
        raise _invalid(where, "its JSON is not an object")
    if isinstance(raw.get("nbformat"), int) and raw["nbformat"] < 4:
        raw = _upgrade(text, where)
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise _invalid(where, "it has no `cells` array")
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise _invalid(where, f"cell {i} is not an object with a cell_type")
    return text, raw


def _upgrade(text: str, where: object) -> dict[str, Any]:
    """An nbformat 3 notebook converted to v4 (it is written back as v4)."""
    import nbformat  # noqa: PLC0415  only old notebooks pay for importing nbformat

    reads: Callable[..., Any] = nbformat.reads
    try:
        node = reads(text.removeprefix("\ufeff"), as_version=4)
    except Exception as err:  # noqa: BLE001  nbformat raises many kinds for a bad notebook
        raise _invalid(where, f"nbformat could not convert it ({err})") from None
    converted = json.loads(json.dumps(node))
    assert isinstance(converted, dict)
    return converted


def _invalid(where: object, why: str) -> NotebookError:
    return NotebookError(ErrorCode.NOTEBOOK_INVALID_JSON,
                         f"{where} is not a valid notebook: {why}. Read its text with read_file "
                         f"{where}:raw, or fix it by hand.")


def _snapshot(raw: Mapping[str, Any], path: str | None) -> NotebookSnapshot:
    cells = tuple(_cell(c) for c in raw.get("cells") or [])
    meta = raw.get("metadata")
    major, minor = _version(raw)
    return NotebookSnapshot(cells=cells, metadata=meta if isinstance(meta, dict) else {},
                            nbformat=major, nbformat_minor=minor, path=path)


def _cell(raw: Mapping[str, Any]) -> CellData:
    found = raw.get("id")
    code = raw.get("cell_type") == "code"
    outputs = raw.get("outputs") if code else None
    count = raw.get("execution_count") if code else None
    return CellData(id=found if isinstance(found, str) and found else None,
                    cell_type=str(raw.get("cell_type")), source=join_source(raw.get("source")),
                    metadata=raw["metadata"] if isinstance(raw.get("metadata"), dict) else {},
                    outputs=outputs if isinstance(outputs, list) else [],
                    execution_count=count if isinstance(count, int) else None)


def _version(raw: Mapping[str, Any]) -> tuple[int, int]:
    major, minor = raw.get("nbformat"), raw.get("nbformat_minor")
    return (major if isinstance(major, int) else 4, minor if isinstance(minor, int) else 0)


def _ids(cells: _Cells) -> set[str]:
    return {c["id"] for c in cells if isinstance(c.get("id"), str)}


def _line_style(cells: _Cells, at: int) -> bool:
    """Line arrays or strings for a cell inserted at ``at``: as the previous, next or first cell."""
    for neighbour in (at - 1, at, 0):
        if 0 <= neighbour < len(cells) and "source" in cells[neighbour]:
            return uses_lines(cells[neighbour]["source"])
    return True


def _new_cell(cell_type: str, source: str, cell_id: str | None, as_lines: bool) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": cell_type}
    if cell_type == "code":
        cell["execution_count"] = None
    if cell_id is not None:
        cell["id"] = cell_id
    cell["metadata"] = {}
    if cell_type == "code":
        cell["outputs"] = []
    cell["source"] = spell_source(source, as_lines)
    return cell


def _retyped(cell: Mapping[str, Any], cell_type: str) -> dict[str, Any]:
    """``cell`` as ``cell_type``: same id, source and metadata; outputs only on code cells."""
    new = {k: v for k, v in cell.items() if k not in ("outputs", "execution_count")}
    new["cell_type"] = cell_type
    if cell_type == "code":
        new.pop("attachments", None)
        new["execution_count"] = cell.get("execution_count") if cell.get(
            "cell_type") == "code" else None
        new["outputs"] = cell.get("outputs", []) if cell.get("cell_type") == "code" else []
    return new


def _check_type(cell_type: str) -> None:
    if cell_type not in CELL_TYPES:
        raise NotebookError(ErrorCode.NOTEBOOK_EDIT_FAILURE,
                            f"Unknown cell type {cell_type!r}; use code, markdown or raw.")


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino, a.st_mtime_ns, a.st_size) == (
        b.st_dev, b.st_ino, b.st_mtime_ns, b.st_size)


def find_notebook_path(env: Mapping[str, str], user_ns: Mapping[str, object] | None = None, *,
                       cwd: str | os.PathLike[str] | None = None,
                       explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The path of the notebook this kernel runs, absolute; None when nothing says.

    An explicit path wins; then ``__vsc_ipynb_file__`` (VS Code), ``__session__`` and
    ``JPY_SESSION_NAME`` (jupyter-server: absolute, or relative to the server root while the
    kernel runs in the notebook's folder). nbclient and papermill set none of them.
    """
    here = Path(cwd) if cwd is not None else Path.cwd()
    ns = user_ns or {}
    for found in (explicit, ns.get("__vsc_ipynb_file__"), ns.get("__session__"),
                  env.get("JPY_SESSION_NAME")):
        value = os.fspath(found) if isinstance(found, os.PathLike) else found
        if isinstance(value, str) and value.strip().lower().endswith(".ipynb"):
            return _locate(value.strip(), here)
    return None


def _locate(value: str, cwd: Path) -> str:
    """An absolute path for ``value``; a relative one is tried in the kernel's folder first."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return os.path.normpath(path)
    candidates = [cwd / path.name, cwd / path]
    parts = path.parent.parts
    if parts and cwd.parts[-len(parts):] == parts:
        root = Path(*cwd.parts[:-len(parts)]) if len(cwd.parts) > len(parts) else Path("/")
        candidates.insert(0, root / path)
    for candidate in candidates:
        if candidate.is_file():
            return os.path.normpath(candidate)
    return os.path.normpath(candidates[0])
