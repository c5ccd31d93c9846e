"""How the file tools show text to the model and the user: numbered lines, diffs, titles.

read_file numbers the lines it returns and a change echoes its edited region the same way, so
the line numbers the model reads are the ones it sees after an edit.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from pathlib import Path

from agent_ext.fs.lines import split_lines
from agent_ext.fs.matching import SNIPPET_MAX_LINES, snippet

MAX_LINE_CHARS = 2_000


def number_lines(lines: Sequence[str], first: int, *, numbered: bool = True) -> tuple[str, int]:
    """``cat -n`` style text (``{n:>6}\\t{line}``) with over-long lines cut; and how many were."""
    out: list[str] = []
    cut = 0
    for n, line in enumerate(lines, first):
        shown_line = line
        if len(line) > MAX_LINE_CHARS:
            cut += 1
            shown_line = (f"{line[:MAX_LINE_CHARS]}... [line cut: {len(line):,} characters; "
                          "read it whole with the shell, e.g. cut or python]")
        out.append(f"{n:>6}\t{shown_line}" if numbered else shown_line)
    return "\n".join(out), cut


def unified_diff(label: str, old: str, new: str) -> tuple[str, int, int]:
    """A unified diff of two texts under ``label``, with the lines added and removed."""
    diff = list(difflib.unified_diff(_diff_lines(old), _diff_lines(new),
                                     fromfile=f"{label}\t(current)",
                                     tofile=f"{label}\t(proposed)", n=3))
    added = sum(1 for ln in diff[2:] if ln.startswith("+"))
    removed = sum(1 for ln in diff[2:] if ln.startswith("-"))
    return "".join(diff), added, removed


def _diff_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n\\ No newline at end of file\n")
    return lines


def under_cwd(path: str, cwd: str | Path) -> str:
    """``path`` relative to the working directory when inside it (``.`` for the directory
    itself), else as given: how the search and listing tools name what they found."""
    cwd = os.path.normpath(cwd)
    if path == cwd:
        return "."
    prefix = cwd.rstrip(os.sep) + os.sep
    return path[len(prefix):] if path.startswith(prefix) else path


def shown(path: Path, cwd: Path) -> str:
    """A path as the user likes to see it in a title: relative under the cwd, else absolute."""
    try:
        return os.fspath(path.relative_to(cwd))
    except ValueError:
        return os.fspath(path)


def edited_region(old: str | None, new: str) -> str:
    """``Showing lines a-b of n from the edited file:`` and the numbered lines around a change."""
    total = len(split_lines(new))
    if total == 0:
        return "The file is now empty."
    found = snippet(old, new)
    if found is None or (old is None and total > SNIPPET_MAX_LINES):
        return (f"The changed region is too large to show here ({total} lines in the file); "
                "read the file to see it.")
    start, end, text = found
    end = min(end, total)
    if end < start:
        start = max(1, total - 3)
        end = total
        text = "\n".join(split_lines(new)[start - 1:])
    numbered, _ = number_lines(text.split("\n")[:end - start + 1], start)
    return f"Showing lines {start}-{end} of {total} from the edited file:\n\n---\n\n{numbered}"
