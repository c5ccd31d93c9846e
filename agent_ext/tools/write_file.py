"""write_file: create a file, or replace one the model has read in full, after approval.

Overwriting replaces every line, so the whole file must have been read in this session (a
partial read is not enough) and must not have changed since. The content is written exactly as
given; an existing file keeps its encoding, BOM and line-ending style (unless the content spells
out its own ``\\r\\n``), and the write is atomic.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from agent_ext.core import ErrorCode, Kind, Params, Tool, ToolContext, ToolRefusal
from agent_ext.fs import ReadCache, TextFile, encode_text
from agent_ext.fs.lines import split_lines
from agent_ext.urls import ParsedURL, URLError, URLRouter

from ._change import ChangeInvocation, ChangePlan, gate, read_checked
from ._render import edited_region
from ._targets import parse_write_target


class WriteFileParams(Params):
    file_path: str
    content: str


class WriteFileTool(Tool[WriteFileParams]):
    name = "write_file"
    description = (
        "Create a file, or replace all of an existing file you have read. Use edit to change "
        "part of a file.")
    kind = Kind.EDIT
    params_model = WriteFileParams
    search_hint = "create new file save overwrite"
    compact_description = (
        "Create a new file, or replace all of a file with the complete new content. To fix "
        "some lines, use edit.")

    def invocation(self, params: WriteFileParams, ctx: ToolContext) -> WriteFileInvocation:
        return WriteFileInvocation(self, params, ctx, parse_write_target(ctx, params.file_path))


class WriteFileInvocation(ChangeInvocation[WriteFileParams]):
    """One write: planned once, written after approval if the file is still as read."""

    def _plan_file(self, path: Path, cache: ReadCache) -> ChangePlan:
        content = self.params.content
        if not gate(cache, path, "overwriting", require_full=True):
            return ChangePlan(target=os.fspath(path), original="", proposed=content, path=path,
                              data=content.encode("utf-8"), real=os.path.realpath(path),
                              verb="overwriting", require_full=True)
        snap = read_checked(cache, path, "overwriting", require_full=True)
        if self.ctx.registry is not None and self.ctx.registry.profile == "compact":
            _refuse_a_fragment(snap.text.text, content, path)
        like = _style(snap.text, content)
        return ChangePlan(target=os.fspath(path), original=snap.text.text, proposed=content,
                          path=path, before=snap, like=like, data=encode_text(content, like),
                          real=snap.real, verb="overwriting", require_full=True)

    async def _plan_url(self, url: ParsedURL, router: URLRouter) -> ChangePlan:
        try:
            current = (await router.resolve(url)).text
        except URLError:
            current = None
        return ChangePlan(target=url.href, original=current or "", proposed=self.params.content,
                          url=url, verb="overwriting", resolved=current is not None)

    def _message(self, plan: ChangePlan, text: str, modified: bool) -> str:
        count = len(split_lines(text))
        lines = f"{count} line{'' if count == 1 else 's'}"
        if plan.created:
            head = f"Successfully created and wrote to new file: {plan.target} ({lines})."
        else:
            head = f"Successfully overwrote file: {plan.target} ({lines})."
        if not modified:
            return head
        return (f"{head} The user edited your content before approving it, so the file holds "
                "their version, not yours; the lines below show it around their changes. Take "
                f"their version into account from now on. {edited_region(plan.proposed, text)}")


#: Under the compact profile (small windows, small models), an overwrite must keep at least
#: this share of the file's lines, or it is taken for a fragment meant as an edit.
KEEP_SHARE = 0.5
#: Files with fewer non-blank lines than this may be rewritten freely.
FRAGMENT_MIN_LINES = 3


def kept_lines(existing: str, content: str) -> tuple[list[str], list[str], int]:
    """The non-blank lines of ``existing`` and of ``content`` (stripped), and how many of the
    first stand unchanged in the second."""
    old = [line.strip() for line in existing.splitlines() if line.strip()]
    new = [line.strip() for line in content.splitlines() if line.strip()]
    present = set(new)
    return old, new, sum(line in present for line in old)


def _refuse_a_fragment(existing: str, content: str, path: Path) -> None:
    """Refuse an overwrite that keeps few of the file's lines: a small model sends the one
    line it fixed as the whole file, which would lose the rest."""
    old, _, kept = kept_lines(existing, content)
    if len(old) < FRAGMENT_MIN_LINES:
        return
    if kept >= KEEP_SHARE * len(old):
        return
    raise ToolRefusal(
        ErrorCode.FILE_WRITE_FAILURE,
        f"Not written: content keeps {kept} of the {len(old)} lines of {path}, so the rest "
        "would be lost. To fix some lines, call edit with old_string (the current lines, "
        "copied from read_file without the line numbers) and new_string (the fixed lines). To "
        "replace the file, send its complete new content.")


def _style(existing: TextFile, content: str) -> TextFile:
    """How to encode ``content`` over ``existing``: its style, unless it spells out ``\\r``."""
    if "\r" not in content:
        return existing
    return dataclasses.replace(existing, newline="\n", mixed=False, endings=())
