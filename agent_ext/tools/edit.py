"""edit: replace old_string with new_string in a file the model has read, after approval.

old_string is found by the fuzzy matcher (``agent_ext.fs.matching``), which returns the file's
own text, so a retyped quote or indent still lands on the right bytes and the result says how it
matched; new_string is written as given. The file keeps its encoding, BOM and line endings, the
write is atomic, and a file that changed since it was read (or while the diff waited for
approval) is refused, not overwritten. ``cell://`` and other writable internal URLs are edited
through the session's URL router with the same matcher.

Files over ``MAX_EDIT_BYTES`` or ``MAX_EDIT_LINES`` are refused with a pointer to the shell: the
matcher indexes every line and the approval diff compares them, so time, memory and the longest
hold on the event loop grow with the size. ``tests/bench/bench_edit_size.py`` on a shared
two-core machine: 100,000 lines of code (4 MB) take 0.3 to 1 s, 125 MB at peak and a longest
loop stall of 15 to 70 ms (the higher figures while the machine was busy); 250,000 lines took up
to 3 s, 200 MB and 120 ms; ten million short lines up to 16 s and 1.6 GB. The limits keep an
edit under the 100 ms stall a notebook tolerates.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from agent_ext.core import ErrorCode, Kind, Params, Tool, ToolContext, ToolRefusal
from agent_ext.fs import ReadCache
from agent_ext.fs.matching import apply_edit, find_edit
from agent_ext.notebook.session import notebook_reads, open_notebook
from agent_ext.urls import ParsedURL, URLRouter

from ._change import ChangeInvocation, ChangePlan, gate, read_checked
from ._render import edited_region
from ._targets import parse_write_target

#: The largest file edit works on, in bytes and in lines (see the module's docstring).
MAX_EDIT_BYTES = 5 * 2**20
MAX_EDIT_LINES = 100_000
#: How much of a file too large to edit is scanned to say how many lines it has.
_COUNT_BYTES = 256 * 2**20


class EditParams(Params):
    file_path: str = Field(description="A path, or cell://<id> for a notebook cell.")
    old_string: str = Field(
        description="Copied exactly from the file, indentation included; empty to create a file.")
    new_string: str
    replace_all: bool = Field(default=False)


class EditTool(Tool[EditParams]):
    name = "edit"
    description = (
        "Replace old_string with new_string in a file you have read with read_file. "
        "old_string must match one place exactly; add surrounding lines to make it unique, or "
        "set replace_all.")
    kind = Kind.EDIT
    params_model = EditParams
    search_hint = "replace str_replace modify change patch file text"
    compact_description = (
        "Fix or change lines of a file (or cell://<id>): old_string is the current text, copied "
        "from read_file's output without the line numbers; new_string replaces it.")
    compact_params: ClassVar[Mapping[str, str]] = {
        "old_string": "The exact current text to replace.",
        "new_string": "The text to put in its place."}

    def invocation(self, params: EditParams, ctx: ToolContext) -> EditInvocation:
        return EditInvocation(self, params, ctx, parse_write_target(ctx, params.file_path))


class EditInvocation(ChangeInvocation[EditParams]):
    """One edit: planned (read, matched, encoded) once, written after approval."""

    read_only_url_tail = "be edited. Read it with read_file instead."

    async def _in_cells(self, path: Path) -> str:
        """The notebook_edit call that makes this edit, when old_string is in one cell of the
        notebook and the session has read that cell (nothing unread is shown)."""
        p = self.params
        state = notebook_reads(self.ctx).state(os.fspath(path))
        if state is None or not p.old_string:
            return ""
        try:
            snapshot = await open_notebook(self.ctx, os.fspath(path)).read()
        except ToolRefusal:
            return ""
        found = [(cid, find_edit(cell.source, p.old_string, p.new_string,
                                 replace_all=p.replace_all), cell.source)
                 for cid, cell in zip(snapshot.display_ids(), snapshot.cells, strict=True)
                 if cid in state.covered]
        hits = [(cid, apply_edit(source, match)) for cid, match, source in found
                if match.error is None]
        head = f"{path} is a notebook, so nothing was changed: edit changes text files."
        if len(hits) > 1:
            return (f"{head} old_string is in cells {', '.join(c for c, _ in hits)}: change the "
                    "one you mean with notebook_edit (cell_id, and new_source the cell's whole "
                    "new source).")
        if not hits:
            return ""
        cid, source = hits[0]
        call = json.dumps({"name": "notebook_edit", "arguments": {
            "notebook_path": p.file_path, "cell_id": cid, "new_source": source}},
            ensure_ascii=False, indent=2)
        return (f"{head} old_string is in cell {cid}; this notebook_edit call makes the change "
                f"(check it, then send it):\n```json\n{call}\n```")

    def _plan_file(self, path: Path, cache: ReadCache) -> ChangePlan:
        p = self.params
        if not gate(cache, path, "editing"):
            if p.old_string:
                raise ToolRefusal(
                    ErrorCode.FILE_NOT_FOUND,
                    f"File not found: {path}. Check the path (relative paths start at "
                    f"{self.ctx.cwd}); to create a new file, call edit with an empty old_string "
                    "or use write_file.")
            data = p.new_string.encode("utf-8")
            return ChangePlan(target=os.fspath(path), original="", proposed=p.new_string,
                              path=path, data=data, real=os.path.realpath(path))
        _check_size(path, _size(path))
        snap = read_checked(cache, path, "editing")
        text = snap.text.text
        _check_size(path, len(snap.data), text.count("\n") + (not text.endswith("\n")))
        if not p.old_string:
            raise ToolRefusal(
                ErrorCode.ATTEMPT_TO_CREATE_EXISTING_FILE,
                f"{path} already exists, so an empty old_string cannot create it. To change "
                "it, put the text to replace in old_string; to replace all of it, use "
                "write_file.")
        new, note = _apply(snap.text.text, p)
        return ChangePlan(target=os.fspath(path), original=snap.text.text, proposed=new,
                          path=path, before=snap, like=snap.text, data=snap.text.encode(new),
                          real=snap.real, note=note)

    async def _plan_url(self, url: ParsedURL, router: URLRouter) -> ChangePlan:
        resolved = await router.resolve(url)
        if resolved.text is None or not resolved.full:
            what = "is not plain text" if resolved.text is None else "resolved to a partial view"
            raise ToolRefusal(ErrorCode.EDIT_PREPARATION_FAILURE,
                              f"{url.href} {what}, so it cannot be edited as text.")
        if not self.params.old_string:
            raise ToolRefusal(ErrorCode.ATTEMPT_TO_CREATE_EXISTING_FILE,
                              f"{url.href} already exists, so an empty old_string cannot create "
                              "it. Put the text to replace in old_string, or use write_file.")
        new, note = _apply(resolved.text, self.params)
        return ChangePlan(target=url.href, original=resolved.text, proposed=new, url=url,
                          note=note, resolved=True)

    def _against(self, content: str) -> str:
        p = self.params
        if not p.old_string:
            return ""
        found = find_edit(content, p.old_string, p.new_string, replace_all=p.replace_all)
        if found.ok:
            return (f"Your old_string matches ({', '.join(f'line {n}' for n in found.lines)}): "
                    "send the same edit again to make the change.")
        return found.message.replace("No edit was made. ", "")

    def _message(self, plan: ChangePlan, text: str, modified: bool) -> str:
        if plan.created:
            head = f"Created new file {plan.target} with the provided content."
        else:
            head = f"The file {plan.target} has been updated."
        if modified:
            head += (" The user edited your proposed change before approving it, so it holds "
                     "their version, not yours; the lines below show it around their changes. "
                     "Take their version into account from now on.")
            return f"{head} {edited_region(plan.proposed, text)}"
        if plan.note:
            head += f" {plan.note}"
        return f"{head} {edited_region(None if plan.created else plan.original, text)}"


def _apply(content: str, p: EditParams) -> tuple[str, str]:
    """The content with the edit applied, and what the model should know about the match."""
    found = find_edit(content, p.old_string, p.new_string, replace_all=p.replace_all)
    if found.error is not None:
        raise ToolRefusal(found.error, found.message)
    new = apply_edit(content, found)
    if new == content:
        raise ToolRefusal(ErrorCode.EDIT_NO_CHANGE,
                          "The edit leaves the content identical, so nothing was changed. Put "
                          "the text you want in new_string.")
    fuzzy = any(m.stage != "literal" for m in found.matches)
    return new, found.message if fuzzy or len(found.matches) > 1 else ""


def _check_size(path: Path, size: int, lines: int | None = None) -> None:
    """Refuse a file too large for edit, saying how to change it instead."""
    if size <= MAX_EDIT_BYTES and (lines is None or lines <= MAX_EDIT_LINES):
        return
    lines = _count_lines(path) if lines is None else lines
    has = f"{size / 2**20:,.1f} MB" + (f" with {lines:,} lines" if lines is not None else "")
    raise ToolRefusal(
        ErrorCode.EDIT_PREPARATION_FAILURE,
        f"{path} is {has}; edit works on files up to {MAX_EDIT_BYTES // 2**20} MB and "
        f"{MAX_EDIT_LINES:,} lines, so nothing was changed. Change it with the shell tool "
        f"instead: find the lines with grep -n, then sed -i '1234s/old/new/' "
        f"{shlex.quote(str(path))} for a change on one line, or a short python script that "
        "reads the file, replaces the text and writes it back.")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # gone or unreadable: the read that follows says which


def _count_lines(path: Path) -> int | None:
    """The line count of a large file, read in chunks; None past _COUNT_BYTES or on error."""
    count = 0
    last = b""
    try:
        with path.open("rb") as f:
            for _ in range(_COUNT_BYTES // 2**20):
                chunk = f.read(2**20)
                if not chunk:
                    return count + (1 if last and last != b"\n" else 0)
                count += chunk.count(b"\n")
                last = chunk[-1:]
    except OSError:
        return None
    return None
