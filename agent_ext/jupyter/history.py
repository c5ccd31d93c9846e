"""``%agent history``: the agent's changes in order, then the conversation, one line each.

The changes are what ``%agent undo`` takes back, newest first: file writes and notebook cell
edits in the order they landed. Long texts and arguments are cut so the whole conversation fits
on a screen; the full transcript is what ``%agent save`` writes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from agent_ext.agent.prompt import WHERE_HEADER
from agent_ext.core import TextPart
from agent_ext.fs.history import EditEntry
from agent_ext.models import Message
from agent_ext.notebook.changes import CellChange

WIDTH = 100


def summarize(messages: Iterable[Message]) -> str:
    """One numbered line per message: who, the start of its text, the calls and results."""
    lines = []
    for n, message in enumerate(messages, 1):
        text = " ".join(" ".join(p.text for p in message.parts if isinstance(p, TextPart)
                                 and not p.text.startswith(WHERE_HEADER)).split())
        if message.role == "tool":
            body = "; ".join(f"{r.name}: {'error' if r.is_error else 'ok'}"
                             for r in message.tool_returns)
        else:
            calls = " ".join(f"→ {c.name}({_cut(c.arguments, 40)})" for c in message.tool_calls)
            body = " ".join(part for part in (_cut(text, WIDTH), calls) if part)
        lines.append(f"{n:>3} {message.role}: {body}")
    return "\n".join(lines)


def changes(files: Sequence[EditEntry], cells: Sequence[CellChange],
            cwd: str | os.PathLike[str]) -> str:
    """The file writes and cell changes, oldest first, numbered, the next to undo marked."""
    rows: list[tuple[float, str]] = []
    for entry in files:
        verb = "created" if entry.created else "wrote"
        note = "" if entry.undoable else f" (cannot be undone: {entry.note})"
        rows.append((entry.time, f"{verb} {_shown(entry.path, cwd)} ({entry.tool}){note}"))
    rows += [(change.time, change.line()) for change in cells]
    if not rows:
        return "changes: none yet (the agent has changed no file or notebook cell)"
    rows.sort(key=lambda row: row[0])
    lines = ["changes, oldest first (`%agent undo` takes back the last):"]
    for n, (when, text) in enumerate(rows, 1):
        mark = "  ← next to undo" if n == len(rows) else ""
        lines.append(f"{n:>3} {time.strftime('%H:%M:%S', time.localtime(when))} {text}{mark}")
    return "\n".join(lines)


def _shown(path: Path, cwd: str | os.PathLike[str]) -> str:
    try:
        return os.fspath(path.relative_to(Path(cwd).absolute()))
    except ValueError:
        return os.fspath(path)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
