"""The system prompt: who the agent is, where it works, its deferred tools and instructions."""

from __future__ import annotations

import platform
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from agent_ext.core import Registry

BASE = """You are agent_ext, a coding agent working inside the user's Jupyter kernel (or a Python \
process). You help with code, data and notebooks by calling tools.

- Read before you change: read a file or the notebook before editing it; edits to notebook \
cells need a full read of the notebook as it is now.
- Prefer small, exact edits over rewrites. Say what you changed and why, briefly.
- Calls that change files, cells or run commands may need the user's approval; if one is \
rejected, do not retry it unchanged: adjust to the user's feedback or ask.
- Tool results may be cut to save context; the cut says where the full output was saved, and you \
can read it with read_file using offset/limit.
- Never print or reveal secrets (keys, tokens, passwords)."""


def environment(cwd: Path, notebook: str | None) -> str:
    lines = [
        f"Working directory: {cwd}",
        f"Platform: {platform.system()} {platform.release()}; Python {sys.version.split()[0]}",
        f"Today's date: {date.today().isoformat()}",
    ]
    if notebook:
        lines.append(f"Open notebook: {notebook} (the notebook this agent runs in)")
    return "\n".join(lines)


def build_system_prompt(*, cwd: Path, registry: Registry, notebook: str | None = None,
                        instructions: Sequence[tuple[Path, str]] = (),
                        addition: str = "") -> str:
    """Assemble the prompt in a stable order so provider prompt caches keep hitting."""
    sections = [BASE, "# Environment\n" + environment(cwd, notebook)]
    summary = registry.deferred_summary()
    if summary:
        sections.append("# Deferred tools\n" + summary)
    for path, text in instructions:
        sections.append(f"# Instructions from {path}\n{text.strip()}")
    if addition.strip():
        sections.append("# Additional instructions\n" + addition.strip())
    return "\n\n".join(sections)
