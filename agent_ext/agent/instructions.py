"""Project instructions for the system prompt: AGENTS.md, also under other agents' names."""

from __future__ import annotations

from pathlib import Path

#: Read in this order in each folder; the first that exists in a folder wins for that folder.
NAMES = ("AGENTS.md", "CLAUDE.md", "QWEN.md", "GEMINI.md", ".github/copilot-instructions.md")
MAX_CHARS = 20_000


def find_instructions(cwd: Path, *, user_dir: Path | None = None) -> list[tuple[Path, str]]:
    """Instruction files from the user's config dir, then from the project root down to cwd.

    The walk up stops at the first folder holding ``.git`` (the project root) or at the home
    folder; deeper files come later so they read as more specific.
    """
    folders = []
    here = cwd.resolve()
    home = Path.home().resolve()
    for folder in (here, *here.parents):
        if folder == home and folder != here:
            break
        folders.append(folder)
        if (folder / ".git").exists():
            break
    found: list[tuple[Path, str]] = []
    if user_dir is not None:
        found += _first_in(user_dir)
    for folder in reversed(folders):
        found += _first_in(folder)
    return found


def _first_in(folder: Path) -> list[tuple[Path, str]]:
    for name in NAMES:
        path = folder / name
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if len(text) > MAX_CHARS:
                text = text[:MAX_CHARS] + f"\n[... cut at {MAX_CHARS} characters]"
            return [(path, text)]
    return []
