"""Permission modes, the places even bypass mode asks about, and the messages each mode gives.

Modes keep the names common settings files use, so those files carry over; the messages tell
the model or the user what to do next rather than only what happened.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from agent_ext.core import ToolInvocation

from .paths import inside

#: An auto-mode classifier: given the call and its ``classifier_input()``, allow, deny or ask.
Classifier = Callable[[ToolInvocation[Any], str], str]


class Mode(str, enum.Enum):
    """How much runs without asking."""

    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    DONT_ASK = "dontAsk"
    BYPASS = "bypassPermissions"
    AUTO = "auto"


_ALIASES = {m.value.casefold(): m for m in Mode} | {
    "manual": Mode.DEFAULT, "bypass": Mode.BYPASS, "yolo": Mode.BYPASS}


def parse_mode(text: str | Mode) -> Mode | None:
    """A mode from its name (any case, ``-``/``_`` ignored); None when unknown."""
    if isinstance(text, Mode):
        return text
    key = str(text).replace("-", "").replace("_", "").replace(" ", "").casefold()
    return _ALIASES.get(key)


def mode_names() -> str:
    return ", ".join(m.value for m in Mode)


PLAN_DENIAL = ("agent_ext is in plan mode: calls that write files or run commands are refused. "
               "Present your plan to the user instead; they leave plan mode to carry it out")
NO_CLASSIFIER = ("auto mode has no classifier configured, so agent_ext decides as in default "
                 "mode; set one with %config AgentExt.auto_classifier = 'module:function' "
                 "(or classifier= of RulePolicy in Python)")

#: Folder (or file) names that are protected wherever they appear in a path. ``.git`` is a
#: file in worktrees and submodules, so a name matches whether it is a folder or a file.
PROTECTED_NAMES: dict[str, str] = {
    ".git": ".git/ (the repository's own data)",
    ".agent_ext": ".agent_ext/ (agent_ext settings)",
    ".mcp.json": ".mcp.json (MCP servers agent_ext starts)",
    ".ssh": ".ssh/ (SSH keys and configuration)",
    # git runs commands its configuration names (core.pager, core.fsmonitor, aliases), so an
    # edit there turns an allowed `git status` into any command.
    ".gitconfig": ".gitconfig (git's configuration)",
}
#: Runs of components protected together: git's configuration in the XDG folder.
PROTECTED_RUNS: dict[tuple[str, ...], str] = {
    (".config", "git"): ".config/git/ (git's configuration)",
}


def fold_component(name: str) -> str:
    """A path component as a case-insensitive file system may see it.

    NFKC and case folding, with format characters (zero-width joiners and the like, which some
    file systems ignore) removed, an NTFS stream suffix (``:$DATA``) cut and trailing dots and
    spaces dropped (as Windows does), so ``.GIT``, ``.Git.``, ``.git::$INDEX_ALLOCATION`` and a
    full-width ``.ｇｉｔ`` all name ``.git``.
    """
    text = unicodedata.normalize("NFKC", name)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf").casefold()
    text = text.split(":", 1)[0] or text
    return text.rstrip(". ") or text


def protected_place(path: str, config_dir: str) -> str | None:
    """Which protected place ``path`` is in, or None.

    The places: any path component named as in PROTECTED_NAMES (``.git``, ``.agent_ext``,
    ``.mcp.json``...) or run of them in PROTECTED_RUNS, compared as ``fold_component`` does,
    and agent_ext's user config directory.
    """
    parts = [fold_component(p) for p in path.split("/") if p]
    for name, place in PROTECTED_NAMES.items():
        if name in parts:
            return place
    for run, place in PROTECTED_RUNS.items():
        if any(tuple(parts[i:i + len(run)]) == run for i in range(len(parts))):
            return place
    folded = "/" + "/".join(parts)
    config = "/" + "/".join(fold_component(p) for p in config_dir.split("/") if p)
    if inside(folded, [config]):
        return "agent_ext's user config directory"
    return None


def first_protected(paths: Iterable[str], config_dir: str) -> str | None:
    """``path (place)`` for the first of ``paths`` in a protected place, or None."""
    for path in paths:
        place = protected_place(path, config_dir)
        if place is not None:
            return f"{path} ({place})"
    return None


def dont_ask(reason: str, suggestions: list[str]) -> str:
    """The deny reason dontAsk mode gives for what would otherwise ask."""
    rules = " and ".join(f"`{s}`" for s in suggestions) or "an allow rule"
    return (f"agent_ext is in dontAsk mode and this call needs pre-approval ({reason}); "
            f"add {rules} to permissions.allow in .agent_ext/settings.json to allow it")
