"""The read-before-write gate: edits refuse files the model has not read or that changed since.

A model that edits a file it has not seen, or one that changed under it, overwrites work it
does not know about. Edit tools run this check before reading, after reading, and right before
writing; every refusal says what to do next.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_ext.core.errors import ErrorCode

from .cache import ReadCache

Verb = Literal["editing", "overwriting"]


@dataclass(frozen=True)
class PriorRead:
    """The gate's answer: ``ok``, or a stable ``code`` and a ``message`` for the model."""

    ok: bool
    code: str | None = None
    message: str = ""
    #: Whether the target existed when checked (False: the write creates it).
    exists: bool = True


def check_prior_read(cache: ReadCache, path: str | os.PathLike[str], verb: Verb, *,
                     expect_existing: bool = False, require_full: bool = False) -> PriorRead:
    """Whether this session may write ``path`` now.

    ``expect_existing``: the caller read the file a moment ago, so its absence is a change.
    ``require_full``: the write replaces everything the model has not seen (overwrites,
    notebooks), so a partial read is not enough.
    """
    name = os.fspath(path)
    try:
        st = Path(path).stat()
    except FileNotFoundError:
        if expect_existing:
            return _refuse(ErrorCode.FILE_CHANGED_SINCE_READ,
                           f"{name} was deleted or moved since it was read. Check the path, "
                           "then read it again before changing it.", exists=False)
        return PriorRead(ok=True, exists=False)
    except OSError as err:
        code = errno.errorcode.get(err.errno or 0, str(err.errno))
        return _refuse(ErrorCode.PRIOR_READ_VERIFICATION_FAILED,
                       f"Could not check {name} before {verb} it ({code}: {err.strerror}), so "
                       "nothing was changed. Check the path and its permissions, then retry.")
    if stat.S_ISDIR(st.st_mode):
        return _refuse(ErrorCode.TARGET_IS_DIRECTORY,
                       f"{name} is a directory, not a file. Give the path of a file inside it.")
    if not stat.S_ISREG(st.st_mode):
        return _refuse(ErrorCode.EDIT_REQUIRES_PRIOR_READ,
                       f"{name} is not a regular file (a pipe, socket or device); it cannot be "
                       "edited as text. Use the shell tool for it.")
    state = cache.check(path, st)
    if state == "stale":
        return _refuse(ErrorCode.FILE_CHANGED_SINCE_READ,
                       f"{name} changed on disk since you last read it (edited by the user or "
                       "another process). Read it again with read_file, then redo the change "
                       "against its current content.")
    entry = cache.entry(path, st) if state == "fresh" else None
    if entry is None or entry.last_read_at is None:
        how = ("A partial read (offset/limit) of the part you change is enough."
               if verb == "editing" else "Read all of it first: you are replacing every line.")
        return _refuse(ErrorCode.EDIT_REQUIRES_PRIOR_READ,
                       f"You have not read {name} in this session, so {verb} it could destroy "
                       f"content you have not seen. First call the read_file tool with "
                       f"{json.dumps({'file_path': name})}, then retry. {how}")
    if not entry.last_read_cacheable:
        return _refuse(ErrorCode.EDIT_REQUIRES_PRIOR_READ,
                       f"Your read of {name} returned a non-text payload (an image, PDF, notebook "
                       "or binary file); re-reading won't help, because it cannot be edited as "
                       "text. Use the tool made for it (notebook_edit for .ipynb) or the shell.")
    if require_full and not entry.last_read_was_full:
        reason = ("overwriting replaces every line" if verb == "overwriting"
                  else "this change needs the whole file")
        return _refuse(ErrorCode.EDIT_REQUIRES_PRIOR_READ,
                       f"You have read only part of {name}, and {reason}. Read all of it with "
                       "read_file (no offset or limit), then retry; if it is too large to read "
                       "whole, change it with edit instead.")
    return PriorRead(ok=True)


def _refuse(code: str, message: str, *, exists: bool = True) -> PriorRead:
    return PriorRead(ok=False, code=code, message=message, exists=exists)
