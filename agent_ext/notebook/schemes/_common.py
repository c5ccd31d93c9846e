"""What the notebook schemes add to the session-bound scheme base: the open notebook's path
and the mapping of notebook errors to router errors."""

from __future__ import annotations

import os

from agent_ext.core.errors import ErrorCode
from agent_ext.notebook.document import NotebookError
from agent_ext.notebook.session import notebook_provider
from agent_ext.urls.router import URLError
from agent_ext.urls.schemes.base import SchemeBase


class NotebookSchemeBase(SchemeBase):
    """A scheme over the session's open notebook."""

    def current_path(self) -> list[str] | None:
        """The open notebook's path as a location list, or None when it is not known; looked
        up, never opened, since the permission check asks before anything is read."""
        try:
            path = notebook_provider(self.ctx).current_path()
        except Exception:  # noqa: BLE001  a provider that cannot tell leaves the place unknown
            return None
        return [os.fspath(self.ctx.resolve(path))] if path else None


def url_error(err: NotebookError) -> URLError:
    """A NotebookError as the router's URLError, keeping its code."""
    code = err.code if err.code != "notebook_not_open" else ErrorCode.READ_CONTENT_FAILURE
    return URLError(code, err.message)
