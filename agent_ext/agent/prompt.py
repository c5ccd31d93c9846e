"""The system prompt and the session context: what the agent is told before the first prompt.

The system prompt holds only what is the same in every folder and on every day (who the agent
is, how it works, its deferred tools, the caller's addition), so the prompt caches of local
servers and cloud providers keep hitting: chat templates put the system prompt before the tool
declarations, so anything that changed there would re-process all of them. What depends on the
folder, the day or the notebook (working directory, date, platform, instruction files) is the
session context, sent at the start of the first user turn.
"""

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
- Never print or reveal secrets (keys, tokens, passwords).
- The first user message starts with the session context (working directory, date, project \
instructions); follow its instructions as you would these.
- A prompt from a notebook starts with where you are: your own %%agent cell, the cell above it \
with its output, the kernel's last error, and the cells the user changed since your last read. \
"The cell above" and "the error" mean those; use the ids given."""

CONTEXT_HEADER = "[agent_ext: session context]"
CONTEXT_END = "[end of session context; the user's message follows]"


def today() -> date:
    """Today's date (a function so a benchmark or test can move the clock)."""
    return date.today()


def environment(cwd: Path, notebook: str | None, day: date | None = None) -> str:
    lines = [
        f"Working directory: {cwd}",
        f"Platform: {platform.system()} {platform.release()}; Python {sys.version.split()[0]}",
        f"Today's date: {(day or today()).isoformat()}",
    ]
    if notebook:
        lines.append(f"Open notebook: {notebook} (the notebook this agent runs in)")
    return "\n".join(lines)


def build_system_prompt(*, registry: Registry, addition: str = "") -> str:
    """The stable part: the same text in every folder and on every day."""
    sections = [BASE]
    summary = registry.deferred_summary()
    if summary:
        sections.append("# Deferred tools\n" + summary)
    if addition.strip():
        sections.append("# Additional instructions\n" + addition.strip())
    return "\n\n".join(sections)


def build_context(*, cwd: Path, notebook: str | None = None,
                  instructions: Sequence[tuple[Path, str]] = (),
                  day: date | None = None) -> str:
    """What changes with the folder and the day, for the start of the first user turn."""
    sections = [CONTEXT_HEADER, "# Environment\n" + environment(cwd, notebook, day)]
    for path, text in instructions:
        sections.append(f"# Instructions from {path}\n{text.strip()}")
    sections.append(CONTEXT_END)
    return "\n\n".join(sections)


WHERE_HEADER = "[agent_ext: where you are]"
WHERE_END = "[end of where you are; the user's message follows]"


def build_where(lines: Sequence[str]) -> str:
    """The per-run context: where the agent's cell is, the cell above it, the kernel's last
    error and the user's changes since the agent's last read, sent before each prompt.

    Kept out of the system prompt, which must stay the same from run to run.
    """
    if not lines:
        return ""
    return "\n\n".join((WHERE_HEADER, *lines, WHERE_END))
