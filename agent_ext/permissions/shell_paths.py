"""Where a shell command line reads, writes and connects, as resolved paths or "unknown".

This joins the parser (`shell.py`), the program table (`programs.py`) and word expansion
(`_shell_expand.py`): every redirection and every file argument the table knows of becomes
resolved paths, each relative word is taken against every folder a `cd` may have moved to,
and whatever cannot be known before the command runs is kept as an `Unknown`, which deny rules
treat as possibly naming what they deny and allow rules never approve.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ._effects import Arg
from ._shell_expand import Unknown, expand_word, home_is_known
from ._shell_words import has_brace_expansion
from .paths import lexical, real
from .programs import effects
from .shell import ShellAnalysis, SimpleCommand

__all__ = ["Touched", "Unknown", "touched"]

_NETWORK = re.compile(r"/dev/+(?:\.+/+)*(?:tcp|udp)(?:/|\b)")
_EXPANDS = re.compile(r"[$`]")
_DIRECTORY_CHANGERS = frozenset({"cd", "pushd", "popd"})
#: Targets that are not files: writing there changes nothing.
HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1",
                      "/dev/fd/2", "/proc/self/fd/1", "/proc/self/fd/2", "/dev/zero"})


@dataclass(frozen=True)
class Touched:
    """What a command line touches. Paths are resolved (symlinks followed) and absolute."""

    #: Files read: input redirections and the read arguments of known programs.
    reads: tuple[str, ...] = ()
    #: Output redirection targets.
    redirect_writes: tuple[str, ...] = ()
    #: Files written by known programs (``sort -o``, ``tee``, ``cp`` destinations...).
    program_writes: tuple[str, ...] = ()
    #: Folders read, or written, with everything below them (``grep -r``, ``rm -r``).
    recursive_reads: tuple[str, ...] = ()
    recursive_writes: tuple[str, ...] = ()
    unknown_reads: tuple[Unknown, ...] = ()
    unknown_writes: tuple[Unknown, ...] = ()
    #: The ``.git`` folders git subcommands write.
    repositories: tuple[str, ...] = ()
    #: Words that open a network connection (``/dev/tcp/host/port``).
    network: tuple[str, ...] = ()
    #: Why a command runs code that no rule about its program can see.
    runs: tuple[str, ...] = ()
    #: Folders a relative word may be taken against (the working folder and ``cd`` targets);
    #: empty when a ``cd`` goes somewhere only known at run time.
    folders: tuple[str, ...] = ()
    #: Best effort, for Read deny rules: arguments of programs the table does not know.
    argument_reads: tuple[str, ...] = ()
    argument_unknown: tuple[Unknown, ...] = ()


@dataclass
class _Collector:
    cwd: str
    home: str | None
    folders: tuple[str, ...]
    reads: list[str] = field(default_factory=list)
    unknown_reads: list[Unknown] = field(default_factory=list)
    unknown_writes: list[Unknown] = field(default_factory=list)
    #: The folder words the analyser filled in stand within (find's `{}`), if known.
    placeholders: str | None = None

    def resolve(self, arg: Arg, unknown: list[Unknown]) -> list[str]:
        """The resolved paths ``arg`` names; what cannot be known goes to ``unknown``."""
        if len(arg.text) > 4096 or ("\n" in arg.text and not arg.dynamic):
            unknown.append(Unknown(arg.text[:80], None))
            return []
        if arg.dynamic and not _EXPANDS.search(arg.text) and not has_brace_expansion(arg.text):
            # A word the analyser filled in itself (xargs input, find's `{}`).
            unknown.append(Unknown(arg.text[:80], self.placeholders))
            return []
        expanded = expand_word(arg.source(), self.folders, self.home)
        unknown.extend(expanded.unknown)
        out: list[str] = []
        for path in expanded.paths:
            if "\x00" in path:
                unknown.append(Unknown(arg.text[:80], None))
                continue
            plain = lexical(path, self.cwd)
            if plain in HARMLESS:
                # Not resolved: /dev/stdout leads to wherever this process's output goes.
                out.append(plain)
                continue
            out += [real(path, self.cwd), real(plain, self.cwd)]
        return list(dict.fromkeys(out))

    def resolve_all(self, args: Iterable[Arg], unknown: list[Unknown]) -> list[str]:
        out: list[str] = []
        for arg in args:
            out += self.resolve(arg, unknown)
        return out


def folders_of(commands: Iterable[SimpleCommand], cwd: str, home: str | None) -> tuple[str, ...]:
    """The working folder and every folder a ``cd``/``pushd`` may move to; () if unknown.

    Why every one: commands are in source order but subshells and `||` make the folder
    a later command runs in uncertain, so a relative word is taken against each.
    """
    found = [cwd]
    for command in commands:
        if not command.argv or command.dynamic[0] or command.argv[0] not in _DIRECTORY_CHANGERS:
            continue
        if command.argv[0] == "popd":
            return ()
        operands = [(w, d, g) for w, d, g in _words(command)[1:]
                    if d or not w.startswith("-") or re.fullmatch(r"-[0-9]*", w)]
        if not operands:
            if home is None or command.argv[0] == "pushd":
                return ()  # pushd alone swaps the top two folders of its stack
            found.append(home)
            continue
        word, dynamic, globbed = operands[0]
        if not dynamic and (word == "-" or re.fullmatch(r"[+-][0-9]+", word)):
            return ()  # the previous folder, or a place on pushd's stack
        expanded = expand_word(Arg(word, dynamic, globbed).source(), tuple(found), home)
        if expanded.unknown or not expanded.paths:
            return ()
        found += [real(p, cwd) for p in expanded.paths]
    return tuple(dict.fromkeys(found))


def _words(command: SimpleCommand) -> list[tuple[str, bool, bool]]:
    flags = list(command.globbed) + [False] * (len(command.argv) - len(command.globbed))
    return list(zip(command.argv, command.dynamic, flags, strict=False))


def _target(text: str) -> Arg:
    """A redirection target's source text as an argument (it keeps its own quoting)."""
    return Arg(text, raw=True)


_CHDIR_OPTION = re.compile(r"(?:^|\s)(?:-[A-Za-z]*[CD]\S*|--chdir\S*)(?:\s|$)")


def runs_elsewhere(simple: SimpleCommand) -> bool:
    """Whether the command runs in a folder of its wrapper's choosing (``find -execdir``,
    ``env -C DIR``, ``sudo -D DIR``), so its relative words cannot be resolved here."""
    wrappers = set(simple.wrappers)
    return "find" in wrappers or bool(wrappers & {"env", "sudo"} and _CHDIR_OPTION.search(
        simple.source))


def touched(analysis: ShellAnalysis, command: str, cwd: str) -> Touched:
    """Resolve everything ``analysis`` (of ``command``, run in ``cwd``) reads and writes."""
    home = str(Path("~").expanduser()) if home_is_known(command) else None
    folders = folders_of(analysis.commands, cwd, home)
    collect = _Collector(cwd, home, folders)
    redirect_unknown: list[Unknown] = []
    reads = collect.resolve_all((_target(t) for t in analysis.reads), redirect_unknown)
    redirect_writes = collect.resolve_all((_target(t) for t in analysis.writes),
                                          redirect_unknown)
    collect.unknown_reads += [u for u in redirect_unknown
                              if any(u.word == t for t in analysis.reads)]
    collect.unknown_writes += [u for u in redirect_unknown if u not in collect.unknown_reads]
    out = _Found()
    found_in: str | None = None
    for simple in analysis.commands:
        here = collect if not runs_elsewhere(simple) else _Collector(cwd, home, ())
        here.unknown_reads, here.unknown_writes = collect.unknown_reads, collect.unknown_writes
        here.placeholders = found_in if "find" in simple.wrappers else None
        starts = _command(simple, here, out)
        if simple.argv and not simple.dynamic[0] and simple.argv[0].rsplit("/", 1)[-1] == "find":
            # What -exec is given ({}) lies below the start point, when there is one.
            roots = {real(p, cwd) for p in collect.resolve_all(starts, [])}
            found_in = roots.pop() if len(roots) == 1 and len(starts) == 1 else None
    reads += out.reads
    # Bash opens /dev/tcp/HOST/PORT for a redirection; a target only known when the command
    # runs could be one.
    network = sorted({m.group(0) for m in _NETWORK.finditer(command)} | {
        p for p in (*reads, *redirect_writes, *out.writes) if _NETWORK.match(p)} | {
        f"`{u.word}` (a redirection only known when it runs)" for u in redirect_unknown
        if u.within is None})
    return Touched(
        reads=_unique(reads), redirect_writes=_unique(redirect_writes),
        program_writes=_unique(out.writes), recursive_reads=_unique(out.recursive_reads),
        recursive_writes=_unique(out.recursive_writes),
        unknown_reads=tuple(dict.fromkeys(collect.unknown_reads)),
        unknown_writes=tuple(dict.fromkeys(collect.unknown_writes)),
        repositories=_unique(out.repositories), network=tuple(network),
        runs=tuple(dict.fromkeys(out.runs)), folders=folders,
        argument_reads=_unique(out.argument_reads),
        argument_unknown=tuple(dict.fromkeys(out.argument_unknown)))


@dataclass
class _Found:
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    recursive_reads: list[str] = field(default_factory=list)
    recursive_writes: list[str] = field(default_factory=list)
    repositories: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    argument_reads: list[str] = field(default_factory=list)
    argument_unknown: list[Unknown] = field(default_factory=list)


def _command(simple: SimpleCommand, collect: _Collector, out: _Found) -> list[Arg]:
    """Add what one simple command touches to ``out``; returns the folders it reads
    recursively (a find's start points)."""
    found = effects(simple.argv, simple.dynamic, simple.globbed)
    out.reads += collect.resolve_all(found.reads, collect.unknown_reads)
    out.writes += collect.resolve_all(found.writes, collect.unknown_writes)
    out.recursive_reads += collect.resolve_all(found.recursive_reads, collect.unknown_reads)
    out.recursive_writes += collect.resolve_all(found.recursive_writes, collect.unknown_writes)
    for folder in found.writes_into:
        base = [real(p, collect.cwd) for p in collect.resolve(folder, [])] if folder else list(
            collect.folders)
        within = base[0] if len(base) == 1 and (folder is None or not folder.dynamic) else None
        collect.unknown_writes.append(Unknown(simple.text[:80], within))
    for repository in found.repositories:
        roots = collect.resolve(repository, []) if repository is not None else list(
            collect.folders)
        out.repositories += [r if r.endswith("/.git") else posixpath.join(r, ".git")
                             for r in roots]
        if (repository is not None and repository.dynamic) or not roots:
            collect.unknown_writes.append(Unknown(simple.text[:80], None))
    out.runs += found.runs
    if not found.known:
        _best_effort(simple, collect, out)
    return found.recursive_reads


def _best_effort(simple: SimpleCommand, collect: _Collector, out: _Found) -> None:
    """Arguments of a program the table does not know, for Read deny rules: plain words and
    ``key=value`` values as paths (globs and braces expanded), and path-shaped words only
    known at run time as unknown."""
    for text, dynamic, globbed in _words(simple)[1:]:
        arg = Arg(text, dynamic, globbed)
        if not dynamic and text.startswith("-") and "=" not in text:
            continue
        if dynamic and "/" not in text:
            continue
        key, eq, _ = text.partition("=")
        if eq and not dynamic and key:
            arg = arg.after(len(key) + 1)
        out.argument_reads += collect.resolve(arg, out.argument_unknown)


def _unique(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(paths))
