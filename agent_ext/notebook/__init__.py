"""Notebooks for the agent: one interface over the live browser notebook and .ipynb files,
the render the model reads, and the record of reads that makes cell edits strict.

``live.py`` (the labextension bridge) implements ``NotebookDocument``; ``FileNotebook`` is the
file backend. Nothing here imports IPython.
"""

from .document import CellData, NotebookDocument, NotebookError, NotebookProvider, NotebookSnapshot
from .file import FileNotebook, find_notebook_path
from .provider import FileNotebookProvider
from .reading import NotebookRead, notebook_read_result, read_notebook
from .reads import NotebookReads, ReadState
from .render import RenderedNotebook, RenderLimits, render_notebook
from .session import current_notebook, notebook_provider, notebook_reads, open_notebook
from .view import FORMS as VIEW_FORMS
from .view import NotebookView, ViewError, parse_view, split_view, view_from_paging

__all__ = [
    "VIEW_FORMS",
    "CellData",
    "FileNotebook",
    "FileNotebookProvider",
    "NotebookDocument",
    "NotebookError",
    "NotebookProvider",
    "NotebookRead",
    "NotebookReads",
    "NotebookSnapshot",
    "NotebookView",
    "ReadState",
    "RenderLimits",
    "RenderedNotebook",
    "ViewError",
    "current_notebook",
    "find_notebook_path",
    "notebook_provider",
    "notebook_read_result",
    "notebook_reads",
    "open_notebook",
    "parse_view",
    "read_notebook",
    "render_notebook",
    "split_view",
    "view_from_paging",
]
