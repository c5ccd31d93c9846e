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


@dataclass
class _Collector:
    cwd: str
    home: str | None
    folders: tuple[str, ...]
    reads: list[str] = field(default_factory=list)
    unknown_reads: list[Unknown] = field(default_factory=list)
    unknown_writes: list[Unknown] = field(default_factory=list)

    def resolve(self, arg: Arg, unknown: list[Unknown]) -> list[str]:
        """The resolved paths ``arg`` names; what cannot be known goes to ``unknown``."""
        if len(arg.text) > 4096 or ("\n" in arg.text and not arg.dynamic):
            unknown.append(Unknown(arg.text[:80], None))
            return []
        if arg.dynamic and not _EXPANDS.search(arg.text) and not has_brace_expansion(arg.text):
            # A word the analyser filled in itself (xargs input, find's `{}`): anything.
            unknown.append(Unknown(arg.text[:80], None))
            return []
        expanded = expand_word(arg.source(), self.folders, self.home)
        unknown.extend(expanded.unknown)
        out: list[str] = []
        for path in expanded.paths:
            if "\x00" in path:
                unknown.append(Unknown(arg.text[:80], None))
                continue
            out += [real(path, self.cwd), real(lexical(path, self.cwd), self.cwd)]
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
                    if d or not w.startswith("-") or w == "-"]
        if not operands:
            if home is None:
                return ()
            found.append(home)
            continue
        word, dynamic, globbed = operands[0]
        if word == "-" and not dynamic:
            return ()
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


def touched(analysis: ShellAnalysis, command: str, cwd: str) -> Touched:
    """Resolve everything ``analysis`` (of ``command``, run in ``cwd``) reads and writes."""
    home = str(Path("~").expanduser()) if home_is_known(command) else None
    folders = folders_of(analysis.commands, cwd, home)
    collect = _Collector(cwd, home, folders)
    reads = collect.resolve_all((_target(t) for t in analysis.reads), collect.unknown_reads)
    redirect_writes = collect.resolve_all((_target(t) for t in analysis.writes),
                                          collect.unknown_writes)
    program_writes: list[str] = []
    recursive_reads: list[str] = []
    recursive_writes: list[str] = []
    repositories: list[str] = []
    runs: list[str] = []
    for simple in analysis.commands:
        found = effects(simple.argv, simple.dynamic, simple.globbed)
        reads += collect.resolve_all(found.reads, collect.unknown_reads)
        program_writes += collect.resolve_all(found.writes, collect.unknown_writes)
        recursive_reads += collect.resolve_all(found.recursive_reads, collect.unknown_reads)
        recursive_writes += collect.resolve_all(found.recursive_writes, collect.unknown_writes)
        for folder in found.writes_into:
            base = [real(p, cwd) for p in collect.resolve(folder, [])] if folder else list(
                folders)
            within = base[0] if len(base) == 1 and (folder is None or not folder.dynamic) \
                else None
            collect.unknown_writes.append(Unknown(simple.text[:80], within))
        for repository in found.repositories:
            roots = collect.resolve(repository, []) if repository is not None else list(folders)
            repositories += [posixpath.join(r, ".git") if not r.endswith(".git") else r
                             for r in roots]
            if (repository is not None and repository.dynamic) or not roots:
                collect.unknown_writes.append(Unknown(simple.text[:80], None))
        runs += found.runs
    network = sorted({m.group(0) for m in _NETWORK.finditer(command)} | {
        p for p in (*reads, *redirect_writes, *program_writes) if _NETWORK.match(p)})
    return Touched(
        reads=_unique(reads), redirect_writes=_unique(redirect_writes),
        program_writes=_unique(program_writes), recursive_reads=_unique(recursive_reads),
        recursive_writes=_unique(recursive_writes),
        unknown_reads=tuple(dict.fromkeys(collect.unknown_reads)),
        unknown_writes=tuple(dict.fromkeys(collect.unknown_writes)),
        repositories=_unique(repositories), network=tuple(network),
        runs=tuple(dict.fromkeys(runs)), folders=folders)


def _unique(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(paths))
