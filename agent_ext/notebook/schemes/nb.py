"""``nb://``: the notebook the agent runs in; ``nb://path/to/other.ipynb`` another one.

The same render as read_file on an .ipynb path, with the same views (``nb://:cells=0-49``,
``nb://:source``) and the same effect: what it shows counts toward the strict edit rule.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import unquote

from agent_ext.core.errors import ErrorCode
from agent_ext.core.result import ImagePart, TextPart
from agent_ext.notebook.document import NotebookError
from agent_ext.notebook.reading import licence_note, read_notebook
from agent_ext.notebook.view import FORMS, ViewError, split_view, view_from_paging
from agent_ext.urls.parse import ParsedURL
from agent_ext.urls.router import Resolved, URLError
from agent_ext.urls.schemes.base import target_of

from ._common import NotebookSchemeBase, url_error

if TYPE_CHECKING:
    from agent_ext.fs.selectors import Selector


class NotebookScheme(NotebookSchemeBase):
    """Reads notebooks as the model sees them."""

    name = "nb"

    def locations(self, url: ParsedURL) -> list[str] | None:
        """The notebook named (relative to the working directory), else the open one."""
        try:
            base, _ = split_view(unquote(target_of(url)))
        except ViewError:
            base = unquote(target_of(url))
        if not base:
            return self.current_path()
        return [os.fspath(self.ctx.resolve(base))]

    async def resolve(self, url: ParsedURL, selector: Selector | None) -> Resolved:
        base, view = split_view(unquote(target_of(url)))
        if selector is not None and (selector.has_lines or selector.raw):
            raise URLError(ErrorCode.INVALID_TOOL_PARAMS,
                           f"nb:// reads cells, not lines, so :{selector.text} does not apply. "
                           f"{FORMS} For the JSON text, read the .ipynb path with :raw.")
        try:
            read = await read_notebook(self.ctx, base or None, view)
        except NotebookError as err:
            raise url_error(err) from None
        except ViewError as err:
            raise URLError(ErrorCode.INVALID_TOOL_PARAMS, str(err)) from None
        parts = list(read.rendered.parts)
        note = licence_note(read)
        if note:
            parts.append(TextPart("\n\n" + note))
        if any(isinstance(p, ImagePart) for p in parts):
            return Resolved(parts=tuple(parts), cacheable=False, full=read.full)
        text = "".join(p.text for p in parts if isinstance(p, TextPart))
        return Resolved(text=text, cacheable=False, full=read.full)

    def paged_url(self, href: str, offset: int | None, limit: int | None) -> str:
        """``href`` with read_file's ``offset``/``limit`` (cells, from position 0) as a view."""
        base, view = split_view(href)
        paged = view_from_paging(offset, limit, sources_only=view is not None and view.sources_only)
        return f"{base}:{paged.text}" if paged.text else href

    def complete(self, prefix: str) -> list[str]:
        return [v for v in (":source", ":cells=0-49", ":cells=0-49:source") if v.startswith(prefix)]
