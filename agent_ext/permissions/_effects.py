"""Arguments of a simple command, how options are scanned, and what a command does to files.

Shared by the program table (``programs.py``), its special cases (``_handlers.py``) and git.
"""

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


# -- option scanning ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Options:
    """How one program's options are laid out: which short letters and long names take a
    value (attached, after ``=``, or the next word)."""

    short: str = ""
    long: frozenset[str] = frozenset()


def option_spec(short: str = "", long: str = "") -> Options:
    return Options(short, frozenset(long.split()))


@dataclass
class Scan:
    """Options (name and value) and operands, in order."""

    options: list[tuple[str, Arg | None]] = field(default_factory=list)
    operands: list[Arg] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[Arg]:
        return [value for name, value in self.options if name in names and value is not None]


def scan(args: list[Arg], spec: Options) -> Scan:
    """Split ``args`` into options and operands the way getopt_long does (GNU permutes)."""
    out = Scan()
    index = 0
    while index < len(args):
        arg = args[index]
        text = arg.text
        index += 1
        if arg.dynamic or not text.startswith("-") or text == "-":
            out.operands.append(arg)
            continue
        if text == "--":
            out.operands.extend(args[index:])
            break
        if text.startswith("--"):
            name, eq, _ = text.partition("=")
            if eq:
                out.options.append((name, arg.after(len(name) + 1)))
            elif name[2:] in spec.long and index < len(args):
                out.options.append((name, args[index]))
                index += 1
            else:
                out.options.append((name, None))
            continue
        for position in range(1, len(text)):
            letter = text[position]
            if letter in spec.short:
                if position + 1 < len(text):
                    out.options.append(("-" + letter, arg.after(position + 1)))
                elif index < len(args):
                    out.options.append(("-" + letter, args[index]))
                    index += 1
                else:
                    out.options.append(("-" + letter, None))
                break
            out.options.append(("-" + letter, None))
    return out
