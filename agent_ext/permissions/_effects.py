"""An argument of a simple command, and what a command does to files: shared by the tables."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Arg:
    """One argument: its text (the source text when only known at run time)."""

    text: str
    dynamic: bool = False
    globbed: bool = False
    #: ``text`` is shell source with its own quoting (a redirection target).
    raw: bool = False

    def after(self, count: int) -> Arg:
        """The argument without its first ``count`` characters (``if=x`` → ``x``)."""
        return Arg(self.text[count:], self.dynamic, self.globbed)

    def source(self) -> str:
        """The word as a shell source, for expansion: static words keep only their globs."""
        if self.dynamic or self.raw:
            return self.text
        keep = "*?[" if self.globbed else ""
        out = []
        for index, ch in enumerate(self.text):
            if ch.isalnum() or ch in "/._-+=@%:," or ch in keep or (ch == "~" and not index):
                out.append(ch)
            else:
                out.append("\\" + ch)
        return "".join(out)


@dataclass
class Effects:
    """What one simple command does to files, as far as its arguments tell."""

    reads: list[Arg] = field(default_factory=list)
    writes: list[Arg] = field(default_factory=list)
    #: Folders read (or written) with everything below them.
    recursive_reads: list[Arg] = field(default_factory=list)
    recursive_writes: list[Arg] = field(default_factory=list)
    #: Folders under which the program writes files whose names it picks (None: the cwd).
    writes_into: list[Arg | None] = field(default_factory=list)
    #: Why the program may run code no rule about it can see.
    runs: list[str] = field(default_factory=list)
    #: Git repositories written (the ``-C`` folder, or None for the cwd).
    repositories: list[Arg | None] = field(default_factory=list)
    #: Whether the program is in the table (otherwise argument paths are best effort).
    known: bool = True
