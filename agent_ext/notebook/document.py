"""The notebook interface every backend implements: the live browser bridge and the .ipynb file.

Tools read and edit notebooks through this one interface, so they work the same on the notebook
open in JupyterLab (edits land in the browser, addressed by nbformat cell id) and on a file on
disk (VS Code, headless runs, other notebooks). Snapshots are immutable values: a tool compares
what it read with what is there now, and never edits a stale copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agent_ext.core import ToolRefusal


@dataclass(frozen=True)
class CellData:
    """One cell as read. ``id`` is None for nbformat < 4.5 cells without ids.

    ``source`` is one string (line arrays joined). ``outputs`` and ``execution_count`` are empty
    and None for markdown and raw cells. Treat ``metadata`` and ``outputs`` as read-only.
    """

    id: str | None
    cell_type: str
    source: str
    metadata: dict[str, Any] = field(default_factory=dict)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    execution_count: int | None = None


@dataclass(frozen=True)
class NotebookSnapshot:
    """The whole notebook at one moment: its cells in order, metadata and format version."""

    cells: tuple[CellData, ...]
    metadata: dict[str, Any]
    nbformat: int
    nbformat_minor: int
    path: str | None

    @property
    def has_ids(self) -> bool:
        """Whether every cell carries an id (nbformat 4.5 or a live notebook)."""
        return all(c.id for c in self.cells)

    @property
    def persistent_ids(self) -> bool:
        """Whether the ids survive a save and reload (nbformat 4.5 or later, every cell with its
        own id)."""
        ids = [c.id for c in self.cells]
        return ((self.nbformat, self.nbformat_minor) >= (4, 5) and self.has_ids
                and len(set(ids)) == len(ids))

    def display_ids(self) -> list[str]:
        """Each cell's id as the model sees it: its ``id``, else ``cell-{index}``."""
        return [c.id or f"cell-{i}" for i, c in enumerate(self.cells)]

    def index_of(self, cell_id: str) -> int | None:
        """The position of the cell whose display id is ``cell_id``, or None."""
        for i, shown in enumerate(self.display_ids()):
            if shown == cell_id:
                return i
        return None

    @property
    def language(self) -> str:
        """``language_info.name``, else ``kernelspec.language``, else python."""
        for key, name in (("language_info", "name"), ("kernelspec", "language")):
            section = self.metadata.get(key)
            if isinstance(section, dict) and isinstance(section.get(name), str) and section[name]:
                return str(section[name])
        return "python"


class NotebookError(ToolRefusal):
    """A notebook operation that failed, refused for the model like any other tool refusal.

    Codes: ``notebook_cell_not_found``, ``notebook_invalid_json``, ``notebook_edit_failure``,
    ``file_not_found``, ``file_changed_since_read``, ``notebook_not_open``.
    """


@runtime_checkable
class NotebookDocument(Protocol):
    """A notebook the agent can read and edit by cell id.

    Edits raise NotebookError (``notebook_cell_not_found`` for an unknown id); a failed edit
    leaves the notebook as it was. ``live`` is True for the browser bridge, whose edits the user
    sees at once and whose ``save`` writes the browser's copy to disk.
    """

    path: str | None
    live: bool

    async def read(self) -> NotebookSnapshot:
        """The notebook now."""
        ...

    async def replace_source(self, cell_id: str, source: str, *, clear_outputs: bool) -> None:
        """Set a cell's source; ``clear_outputs`` also empties a code cell's outputs and count."""
        ...

    async def insert(self, after_cell_id: str | None, cell_type: str, source: str,
                     cell_id: str) -> None:
        """Insert a new cell with id ``cell_id`` after ``after_cell_id`` (None: at the top)."""
        ...

    async def delete(self, cell_id: str) -> None:
        """Remove a cell."""
        ...

    async def move(self, cell_id: str, after_cell_id: str | None) -> None:
        """Move a cell after ``after_cell_id`` (None: to the top)."""
        ...

    async def set_type(self, cell_id: str, cell_type: str) -> None:
        """Change a cell's type, keeping its id and source (outputs go when it stops being code)."""
        ...

    async def set_outputs(self, cell_id: str, outputs: list[dict[str, Any]],
                          execution_count: int | None) -> None:
        """Replace a code cell's outputs (nbformat output dicts) and execution count."""
        ...

    async def save(self) -> None:
        """Persist the notebook (a no-op where every edit is already on disk)."""
        ...

    async def ensure_persistent_ids(self) -> bool:
        """Give every cell a saved id (nbformat 4.4 -> 4.5); True if anything changed."""
        ...

    async def selection(self) -> str | None:
        """The id of the cell the user has selected, or None when unknown."""
        ...


@runtime_checkable
class NotebookProvider(Protocol):
    """How tools find notebooks; the Jupyter host supplies one in ``ctx.services``.

    ``current`` is the notebook this kernel runs (None when unknown, e.g. under nbclient);
    ``open`` gives the live document when that notebook is open in the browser, else a
    FileNotebook. ``current_path`` says where the current one is without opening it, for the
    getters the permission check calls before anything is read.
    """

    def current(self) -> NotebookDocument | None:
        """The notebook the agent runs in, or None."""
        ...

    def current_path(self) -> str | None:
        """The absolute path of the notebook the agent runs in, as this session already knows
        it (the kernel's markers, what the browser said); None when unknown. Opens nothing."""
        ...

    def open(self, path: str) -> NotebookDocument:
        """The notebook at ``path`` (absolute)."""
        ...
