"""A fix written as text: the model showed changed code for a file or cell it read, but called
no tool, so nothing changed. Small models often end a run so.

Nothing is applied from the text. The run gets one more turn with a note that says nothing was
changed and gives the exact call that would make the change the text shows (for a file
``edit`` with the lines as they are and as the text has them; for a cell ``notebook_edit``
with the whole new source), so the model can make it as a tool call, which the user approves
as any other. The target is clear or there is no note: the fenced code must share lines with
what was read and differ from it only in lines that are alike (a retyped line, not new code).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from agent_ext.fs.matching import ALIKE

#: Fenced blocks longer than this many lines are not read as a one-place fix.
MAX_FENCE_LINES = 60

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Target:
    """Text the model read: a file (``cell_id`` None) or one cell of a notebook."""

    path: str
    text: str
    cell_id: str | None = None
    #: The notebook's path as the model gave it; None for the notebook the agent runs in.
    notebook_path: str | None = None


@dataclass(frozen=True)
class Proposal:
    """The call that would make the change the text shows."""

    target: Target
    tool: str
    arguments: dict[str, str]

    def note(self) -> str:
        where = (f"cell {self.target.cell_id!r} of {self.target.path}"
                 if self.target.cell_id is not None else self.target.path)
        call = json.dumps({"name": self.tool, "arguments": self.arguments}, ensure_ascii=False,
                          indent=2)
        return (f"[agent_ext] Nothing was changed: your answer shows a change to {where} as "
                "text, but only a tool call changes files and cells. If that change is the fix, "
                f"reply with only this tool call (correct it first if it is wrong):\n"
                f"```json\n{call}\n```")


def fences(text: str) -> list[str]:
    """The contents of the fenced code blocks in ``text``."""
    return [m.group(1) for m in _FENCE.finditer(text)]


def propose(text: str, targets: Iterable[Target]) -> Proposal | None:
    """The one call the fenced code in ``text`` asks for, or None when it is not clear."""
    found: list[tuple[float, Proposal]] = []
    targets = list(targets)
    # A fence often shows a changed cell with the cells before it: their lines are context.
    notebooks: dict[str, set[str]] = {}
    for target in targets:
        if target.cell_id is not None:
            notebooks.setdefault(target.path, set()).update(
                line.strip() for line in target.text.split("\n"))
    for block in fences(text):
        lines = block.rstrip("\n").split("\n")
        if not block.strip() or len(lines) > MAX_FENCE_LINES:
            continue
        for target in targets:
            context = notebooks.get(target.path, set()) if target.cell_id is not None else set()
            change = _change(target.text, lines, context)
            if change is not None:
                found.append((change[0], _proposal(target, *change[1:])))
    if not found:
        return None
    best = max(score for score, _ in found)
    winners = {(p.tool, json.dumps(p.arguments, sort_keys=True)) for s, p in found if s == best}
    return next(p for s, p in found if s == best) if len(winners) == 1 else None


def _change(text: str, fence: Sequence[str], context: set[str] | None = None
            ) -> tuple[float, int, int, list[str]] | None:
    """Where ``fence`` changes ``text``: (the share of the fence's lines that are the text's,
    first changed line, end line (0-based, exclusive), the new lines for that span).

    Every non-blank fence line must be a line of the text (or of ``context``: the other cells
    of its notebook) or alike to exactly one line of the text that the fence does not also
    hold unchanged; otherwise the fence is new code, not a fix."""
    lines = text.split("\n")
    strip = [line.strip() for line in lines]
    present = set(strip) | (context or set())
    shown = [line for line in fence if line.strip()]
    changed: dict[int, str] = {}
    for line in shown:
        bare = line.strip()
        if bare in present:
            continue
        scores = sorted(((SequenceMatcher(None, bare, t).ratio(), n) for n, t in enumerate(strip)
                         if t and t not in {f.strip() for f in fence}), reverse=True)
        if not scores or scores[0][0] < ALIKE or (len(scores) > 1 and scores[1][0] == scores[0][0]):
            return None
        at = scores[0][1]
        if at in changed:
            return None
        changed[at] = _indented(lines[at], line)
    if not changed:
        return None
    start, end = min(changed), max(changed) + 1
    new = [changed.get(n, lines[n]) for n in range(start, end)]
    return (len(shown) - len(changed)) / len(shown), start, end, new


def _indented(old: str, new: str) -> str:
    """``new`` with ``old``'s indentation (a fence is often dedented)."""
    return old[:len(old) - len(old.lstrip())] + new.strip()


def _proposal(target: Target, start: int, end: int, new: list[str]) -> Proposal:
    lines = target.text.split("\n")
    if target.cell_id is None:
        return Proposal(target, "edit", {"file_path": target.path,
                                         "old_string": "\n".join(lines[start:end]),
                                         "new_string": "\n".join(new)})
    source = "\n".join([*lines[:start], *new, *lines[end:]])
    arguments = {"cell_id": target.cell_id, "new_source": source}
    if target.notebook_path is not None:
        arguments = {"notebook_path": target.notebook_path, **arguments}
    return Proposal(target, "notebook_edit", arguments)


#: Files larger than this are not read back to look for a target.
MAX_TARGET_BYTES = 1_000_000
_LINE_RANGE = re.compile(r":-?\d+(?:-\d*)?$")


def read_targets(paths: Iterable[str], cwd: Path) -> list[Target]:
    """The files and notebook cells at ``paths`` (as read_file was given them), as they are
    now; what cannot be read is left out."""
    targets: list[Target] = []
    for given in dict.fromkeys(paths):
        if "://" in given:
            continue
        path = Path(given).expanduser()
        path = path if path.is_absolute() else cwd / path
        if not path.is_file() and _LINE_RANGE.search(given):
            path = path.with_name(_LINE_RANGE.sub("", path.name))
        try:
            if not path.is_file() or path.stat().st_size > MAX_TARGET_BYTES:
                continue
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if path.suffix.lower() != ".ipynb":
            targets.append(Target(given, text))
            continue
        try:
            cells = json.loads(text).get("cells", [])
        except (ValueError, AttributeError):
            continue
        for cell in cells if isinstance(cells, list) else []:
            source = cell.get("source") if isinstance(cell, dict) else None
            source = "".join(source) if isinstance(source, list) else source
            if isinstance(source, str) and isinstance(cell.get("id"), str):
                targets.append(Target(given, source, cell["id"], given))
    return targets
