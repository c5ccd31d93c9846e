"""Path rules against what a shell command touches: "could it name this?" and "is all of it
approved?".

A deny or ask rule matches when any path the command touches matches, when a folder it reads
or writes recursively holds something the rule names, and when a word only known at run time
could name it. An allow rule set approves a command only when nothing it touches is unknown,
it runs no hidden code, opens no network connection, and every write is covered like an edit.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ._shell_expand import Unknown
from .paths import PathPattern, anchored_parts, inside
from .rules import Rule
from .shell_paths import HARMLESS, Touched

#: How many entries a recursive reader's folder is searched for a denied path.
MAX_WALK = 5000
_GLOB = frozenset("*?[\\")


@dataclass(frozen=True)
class SpecShape:
    """A path specifier's fixed folder and the components after it."""

    base: str
    parts: tuple[str, ...]


def spec_shape(spec: str, *, project: str, cwd: str, home: str) -> SpecShape:
    """The folder every match of ``spec`` lies under, and the pattern parts below it.

    Follows ``paths.compile_path``'s anchors: ``//`` absolute, ``~/`` home, ``/`` project,
    ``./`` or a slash inside: cwd; a bare name matches at any depth under cwd.
    """
    base, parts = anchored_parts(spec, project=project, cwd=cwd, home=home)
    literal: list[str] = []
    while parts and not (_GLOB & set(parts[0])):
        literal.append(parts.pop(0))
    return SpecShape(posixpath.normpath(posixpath.join(base, *literal)), tuple(parts))


def could_hold(pattern: PathPattern, shape: SpecShape, folder: str) -> bool:
    """Whether something at or below ``folder`` could match (structurally, no file system)."""
    if pattern.matches(folder) or inside(shape.base, [folder]):
        return True
    if not inside(folder, [shape.base]):
        return False
    if "**" in shape.parts:
        return True
    depth = len(folder[len(shape.base):].strip("/").split("/"))
    return depth < len(shape.parts)


def holds(pattern: PathPattern, shape: SpecShape, folder: str) -> bool:
    """Whether ``folder`` (read recursively) holds something the rule matches.

    Searched on disk, from the rule's own folder when that lies inside ``folder`` (a rule's
    folder that does not exist holds nothing to read), else from ``folder``; a search past
    ``MAX_WALK`` entries counts as holding.
    """
    if not could_hold(pattern, shape, folder):
        return _links_lead(pattern, shape, folder)
    if pattern.matches(folder) or not Path(folder).is_dir():
        return True
    root = shape.base if inside(shape.base, [folder]) else folder
    if not os.path.lexists(root):
        return False
    if pattern.matches(root) or pattern.matches(os.path.realpath(root)):
        return True
    for path in _walk(root):
        if path is None:
            return True
        target = os.path.realpath(path)
        if pattern.matches(path) or pattern.matches(target):
            return True
        if target != path and not inside(target, [root]) and Path(target).is_dir() and (
                could_hold(pattern, shape, target)):
            return True
    return False


def _walk(folder: str) -> Iterator[str | None]:
    """The paths below ``folder`` (none when it is not a folder), the first ``MAX_WALK`` of
    them, then None when there are more."""
    seen = 0
    for top, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            seen += 1
            if seen > MAX_WALK:
                yield None
                return
            yield posixpath.join(top, name)


def _links_lead(pattern: PathPattern, shape: SpecShape, folder: str) -> bool:
    """Whether a symbolic link below ``folder`` leads to what the rule names (readers that
    follow links, `grep -R`, `tar -h`, reach it); the first ``MAX_WALK`` entries are looked at.
    """
    return any(path is not None and Path(path).is_symlink()
               and could_hold(pattern, shape, os.path.realpath(path)) for path in _walk(folder))


def _maybe(pattern: PathPattern, shape: SpecShape, unknown: Unknown) -> bool:
    return unknown.within is None or could_hold(pattern, shape, unknown.within)


def read_hit(pattern: PathPattern, shape: SpecShape, touched: Touched,
             arguments: tuple[str, ...], *, best_effort: bool = True) -> str | None:
    """Why a Read rule matches the command, or None. ``arguments`` are the best-effort
    static argument paths of every command; with ``best_effort`` False (a bare ``Read``
    rule, which names every path) only what the program table knows is read counts."""
    guesses = (*arguments, *touched.argument_reads) if best_effort else ()
    unknowns = touched.argument_unknown if best_effort else ()
    return _hit(pattern, shape, "read", paths=(*touched.reads, *guesses),
                folders=touched.recursive_reads, unknowns=(*touched.unknown_reads, *unknowns),
                under=holds)


def edit_hit(pattern: PathPattern, shape: SpecShape, touched: Touched) -> str | None:
    """Why an Edit rule matches the command's writes, or None."""
    return _hit(pattern, shape, "write",
                paths=(*touched.redirect_writes, *touched.program_writes, *touched.repositories),
                folders=touched.recursive_writes, unknowns=touched.unknown_writes,
                under=could_hold)


def _hit(pattern: PathPattern, shape: SpecShape, verb: str, *, paths: Iterable[str],
         folders: Iterable[str], unknowns: Iterable[Unknown],
         under: Callable[[PathPattern, SpecShape, str], bool]) -> str | None:
    """Why the rule matches what the command reads or writes (``verb``), or None: a path it
    names, a folder taken whole that holds (``under``) what the rule names, or a word only
    known when it runs."""
    for path in paths:
        if pattern.matches(path):
            return f"it {verb}s {path}"
    for folder in folders:
        if under(pattern, shape, folder):
            return f"it {verb}s everything under {folder}"
    for unknown in unknowns:
        if _maybe(pattern, shape, unknown):
            return f"`{unknown.word}` may {verb} a path only known when it runs"
    return None


def network_note(touched: Touched) -> str | None:
    """Why the command counts as network access, or None."""
    certain = [n for n in touched.network if not n.startswith("`")]
    if certain:
        return f"it opens a network connection through {certain[0]}"
    if touched.network:
        return f"{touched.network[0]} may open a network connection (/dev/tcp)"
    return None


#: Names of places a recursive write must not sweep through unasked.
PROTECTED_NAMES = frozenset({".git", ".agent_ext", ".mcp.json", ".ssh"})


def holds_protected(folder: str, roots: tuple[str, ...]) -> str | None:
    """What protected place a folder written recursively holds, or None.

    A working root or a folder above one holds the project's own settings (`.agent_ext/`,
    `.mcp.json`, `.git/`) whether or not they exist yet; below that, the first ``MAX_WALK``
    entries are searched for those names.
    """
    if any(inside(root, [folder]) for root in roots):
        return f"{folder} (it holds the project's .git/, .agent_ext/ and .mcp.json)"
    return next((path for path in _walk(folder)
                 if path is not None and posixpath.basename(path).casefold() in PROTECTED_NAMES),
                None)


def allow_blocker(touched: Touched, *, edit_allowed: Callable[[str], bool],
                  in_roots: Callable[[str], bool], accept_edits: bool,
                  roots: tuple[str, ...] = ()) -> str | None:
    """Why allow rules for the command's programs cannot approve it, or None.

    Writes are checked like edits: an ``Edit`` allow rule must cover each, or acceptEdits
    mode lets those inside the working roots run. A recursive write that sweeps through a
    protected place (``git clean`` of the project, ``rm -r`` of a folder holding ``.git``)
    is never approved this way.
    """
    if touched.runs:
        return touched.runs[0]
    for unknown in touched.unknown_reads:
        return f"`{unknown.word}` may read a path only known when it runs"
    for unknown in touched.unknown_writes:
        if not (accept_edits and unknown.within is not None and in_roots(unknown.within)):
            return f"`{unknown.word}` may write a path only known when it runs"
    for path in (*touched.redirect_writes, *touched.program_writes):
        if any(part.casefold() in PROTECTED_NAMES for part in path.split("/")):
            return f"it writes {path}, a protected place"
    for folder in touched.recursive_writes:
        place = holds_protected(folder, roots)
        if place is not None:
            return (f"it writes everything under {folder}, including the protected place "
                    f"{place}")
    for path in (*touched.redirect_writes, *touched.program_writes, *touched.recursive_writes):
        if path in HARMLESS or edit_allowed(path) or (accept_edits and in_roots(path)):
            continue
        where = "inside" if in_roots(path) else "outside"
        return (f"it writes {path} ({where} the working roots), which needs approval like an "
                "edit: add an Edit(...) allow rule for it, or use acceptEdits mode for writes "
                "inside the working roots")
    return None


#: Programs whose deny rules stand for network access as a whole.
NETWORK_PROGRAMS = ("curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp",
                    "sftp", "ftp", "http", "https", "aria2c", "lynx", "w3m", "links")


def network_command(rule: Rule) -> bool:
    """Whether a ``Bash(...)`` rule names a network program (``curl *``, ``nc:*``)."""
    pattern = rule.command
    return pattern is not None and any(
        pattern.matches(f"{name} {arg}") for name in NETWORK_PROGRAMS
        for arg in ("x", "https://example.com/", "-s https://example.com/"))
