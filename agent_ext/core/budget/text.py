"""Pure text operations of the budget layer: head/tail splits, water-fill, stubs and previews.

Nothing here touches the disk; ``store`` writes files and ``output`` decides what to apply.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .config import (
    BATCH_CUT_PREFIX,
    DIGEST_LABEL,
    OUTPUT_TOO_LARGE_PREFIX,
    PERSISTED_CLOSE_TAG,
    PERSISTED_OPEN_TAG,
    TRUNCATED_PREFIX,
    TRUNCATION_MARKER,
)

if TYPE_CHECKING:
    from agent_ext.core.tool import TruncateKeep

SEPARATOR = f"\n\n---\n{TRUNCATION_MARKER}\n---\n\n"
ELLIPSIS = "..."
_READ_HINT = ("To read it, use the read_file tool with this absolute path; page through it with "
              "offset/limit.")
_KEPT = {"both": "the beginning and the end", "head": "the beginning", "tail": "the end"}
_NESTED_TAG = re.compile(r"</?persisted-output>")
_SAVED_TO = re.compile(r"saved to: (.+)$", re.MULTILINE)


def encode(text: str) -> bytes:
    """The UTF-8 bytes saved for ``text``; lone surrogates become U+FFFD so files stay readable."""
    return text.encode("utf-8", errors="replace")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def format_bytes(n: int) -> str:
    """A short human size (``512 B``, ``3.2 KB``, ``50.0 MB``)."""
    if n < 1024:
        return f"{n} B"
    if n < 2**20:
        return f"{n / 1024:.1f} KB"
    return f"{n / 2**20:.1f} MB"


def truncate_text(text: str, *, max_chars: int, max_lines: int | None,
                  keep: TruncateKeep = "both",
                  preview_chars: int | None = None) -> tuple[str, bool]:
    """Cut ``text`` to a head and/or tail within a line cap and a character budget.

    Returns the kept text and whether anything was cut. ``max_lines=None`` disables the line cap.
    The character budget is ``preview_chars`` (default ``max_chars``) and includes the separator,
    which is dropped when the budget cannot hold it. ``both`` gives the head a fifth of the lines
    and of the characters, so the end of a log (where errors usually are) gets the most room.
    """
    if max_lines is None and len(text) <= max_chars:
        return text, False
    lines = text.split("\n")
    cap = len(lines) if max_lines is None else max_lines
    if len(text) <= max_chars and len(lines) <= cap:
        return text, False

    kept_lines = min(cap, len(lines))
    if keep == "head":
        head_count, tail_count = kept_lines, 0
    elif keep == "tail":
        head_count, tail_count = 0, kept_lines
    else:
        head_count = max(kept_lines // 5, 1)
        tail_count = kept_lines - head_count

    budget = max(0, max_chars if preview_chars is None else preview_chars)
    sep = SEPARATOR if budget > len(SEPARATOR) else ""
    content_budget = budget - len(sep)
    if keep == "head":
        head_budget = content_budget
    elif keep == "tail":
        head_budget = 0
    else:
        head_budget = content_budget // 5

    head: list[str] = []
    used = 0
    for line in lines[:head_count]:
        remaining = head_budget - used
        if remaining <= 0:
            break
        if len(line) + 1 > remaining:
            # The ellipsis counts against the budget too, so it is left out below its own length.
            if remaining >= len(ELLIPSIS):
                head.append(line[:remaining - len(ELLIPSIS)] + ELLIPSIS)
            used = head_budget
            break
        head.append(line)
        used += len(line) + 1

    tail_budget = 0 if keep == "head" else max(content_budget - used, 0)
    tail: list[str] = []
    used = 0
    tail_start = max(len(lines) - tail_count, len(head))
    for i in range(len(lines) - 1, tail_start - 1, -1):
        remaining = tail_budget - used
        if remaining <= 0:
            break
        line = lines[i]
        if len(line) + 1 > remaining:
            if remaining >= len(ELLIPSIS):
                n = remaining - len(ELLIPSIS)
                tail.append(ELLIPSIS + (line[-n:] if n > 0 else ""))
            break
        tail.append(line)
        used += len(line) + 1
    tail.reverse()

    if keep == "head":
        return "\n".join(head) + sep, True
    if keep == "tail":
        return sep + "\n".join(tail), True
    return "\n".join(head) + sep + "\n".join(tail), True


def water_fill(sizes: Sequence[int], budget: int) -> list[int]:
    """Max-min fair shares of ``budget``: small sizes are kept whole, large ones share the rest.

    Finds the level L with ``sum(min(size, L)) == budget`` (when the sizes exceed the budget);
    leftover characters of the integer division go to the earliest large entries.
    """
    alloc = [0] * len(sizes)
    remaining = max(0, budget)
    active = list(range(len(sizes)))
    while active:
        share = remaining // len(active)
        fixed = [i for i in active if sizes[i] <= share]
        if not fixed:
            for i in active:
                alloc[i] = share
            for i in active[:remaining - share * len(active)]:
                alloc[i] += 1
            break
        for i in fixed:
            alloc[i] = sizes[i]
            remaining -= sizes[i]
        active = [i for i in active if sizes[i] > share]
    return alloc


def spill_wrapper(body: str, *, path: Path, chars: int, size: int, sha256: str,
                  keep: TruncateKeep) -> str:
    """What the model sees instead of an output that was cut and saved to ``path``."""
    return (f"{TRUNCATED_PREFIX}.\n"
            f"The full output ({chars:,} characters, {size:,} bytes, sha256 {sha256}) "
            f"has been saved to: {path}\n"
            f"{_READ_HINT}\n"
            f"The truncated output below shows {_KEPT[keep]} of the content; the marker "
            f"'{TRUNCATION_MARKER}' shows where content was removed.\n\n"
            f"Truncated part of the output:\n{body}")


def unsaved_note(reason: str) -> str:
    """Appended to a cut output whose full text could not be saved."""
    return (f"\n[Note: agent_ext could not save the full output to a file ({reason}); only the "
            f"part above is available. Rerun with a narrower scope to see the rest.]")


def preview(text: str, limit: int) -> str:
    """The first ``limit`` characters cut at the last newline, with nested stub tags escaped."""
    if len(text) > limit:
        head = text[:limit]
        nl = head.rfind("\n")
        text = (head[:nl] if nl > 0 else head) + "\n..."
    # A literal tag inside the preview would let tool output close or fake the envelope.
    return _NESTED_TAG.sub(lambda m: f"&lt;{m.group(0)[1:-1]}&gt;", text)


def persisted_stub(text: str, *, size: int, sha256: str, preview_chars: int,
                   path: Path | None = None, reason: str = "") -> str:
    """The stub for a persisted output; without ``path``, the unwrapped form with ``reason``."""
    kb = (size + 512) // 1024
    tail = (f"{DIGEST_LABEL}{sha256}\n\n"
            f"Preview (up to {preview_chars} chars):\n{preview(text, preview_chars)}")
    if path is None:
        return f"{OUTPUT_TOO_LARGE_PREFIX}{kb} KB). {reason}\n{tail}"
    return (f"{PERSISTED_OPEN_TAG}\n"
            f"{OUTPUT_TOO_LARGE_PREFIX}{kb} KB). Full output saved to: {path}\n"
            f"{_READ_HINT}\n{tail}\n{PERSISTED_CLOSE_TAG}")


def unpersisted_reason(reason: str) -> str:
    return (f"agent_ext did not save it: {reason}. Only the preview below is available; rerun "
            f"with a narrower scope to see the rest.")


def fit_preview(text: str, max_chars: int, path: Path | str | None) -> str:
    """A header naming the saved output plus a head/tail preview, in at most ``max_chars``."""
    if len(text) <= max_chars:
        return text
    if max_chars <= 0:
        return ""
    if path is not None:
        header = (f"{BATCH_CUT_PREFIX} Full output saved to: {path}\n"
                  f"Read it with the read_file tool using offset/limit.")
    else:
        header = f"{BATCH_CUT_PREFIX} agent_ext could not save the full output."
    if len(header) >= max_chars:
        return header[:max_chars]
    joiner, marker = "\n\n", "\n...\n"
    budget = max_chars - len(header) - len(joiner)
    if budget <= len(marker):
        return f"{header}{joiner}{text[:budget]}" if budget > 0 else header
    budget -= len(marker)
    head = budget // 5
    tail = budget - head
    return f"{header}{joiner}{text[:head]}{marker}{text[len(text) - tail:]}"


def is_already_truncated(text: str) -> bool:
    """Whether ``text`` already carries a cut marker or a stub (so the gate must not fire)."""
    return TRUNCATION_MARKER in text or text.startswith(
        (TRUNCATED_PREFIX, PERSISTED_OPEN_TAG, OUTPUT_TOO_LARGE_PREFIX))


def artifact_path(text: str) -> str | None:
    """The saved-output path named by a wrapper or stub this layer produced, if any."""
    if not text.startswith((TRUNCATED_PREFIX, PERSISTED_OPEN_TAG, BATCH_CUT_PREFIX)):
        return None
    found = _SAVED_TO.search(text, 0, 2_000)
    return found.group(1) if found else None
