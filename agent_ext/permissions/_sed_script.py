"""What a sed script does besides editing its stream: files it reads or writes, commands it runs.

`sed -n 'p'` only prints, but `sed 'w out'` writes a file, `sed 'e rm -rf x'` and `s/x/y/e` run
commands, and `r file` reads one. An allow rule for `sed -n *` must not approve those, so the
script is parsed command by command (GNU syntax); text the parser does not understand counts as
running code, which no allow rule covers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_NO_ARGUMENT = frozenset("=dDgGhHlnNpPxzF")
_LABEL = frozenset("btT:")
_EXIT = frozenset("qQlL")
_TEXT = frozenset("aic")


@dataclass
class SedEffects:
    """Files the script reads and writes, and why it runs code (empty when it does not)."""

    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)


def sed_effects(script: str) -> SedEffects:
    """Parse ``script``; anything not understood is reported in ``runs``."""
    out = SedEffects()
    try:
        _Parser(script, out).parse()
    except _UnknownError as exc:
        out.runs.append(f"sed script not understood ({exc})")
    return out


class _UnknownError(Exception):
    pass


class _Parser:
    def __init__(self, script: str, out: SedEffects) -> None:
        self.s = script
        self.i = 0
        self.out = out

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def blanks(self, newlines: bool = False) -> None:
        skip = " \t;\n" if newlines else " \t"
        while self.peek() and self.peek() in skip:
            self.i += 1

    def parse(self) -> None:
        while True:
            self.blanks(newlines=True)
            if not self.peek():
                return
            if self.peek() == "#":
                self.to_line_end()
                continue
            self.address()
            self.blanks()
            if self.peek() == ",":
                self.i += 1
                self.blanks()
                self.address(second=True)
                self.blanks()
            while self.peek() == "!":
                self.i += 1
                self.blanks()
            self.command()

    def to_line_end(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text = self.s[self.i:end]
        self.i = end
        return text

    def address(self, *, second: bool = False) -> None:
        ch = self.peek()
        if ch.isdigit() or (second and ch in "+~"):
            self.i += 1
            while self.peek().isdigit() or self.peek() == "~":
                self.i += 1
        elif ch == "$":
            self.i += 1
        elif ch in ("/", "\\"):
            if ch == "\\":
                self.i += 1
            self.delimited(self.peek())
            while self.peek() in ("I", "M"):
                self.i += 1

    def delimited(self, delimiter: str, *, brackets: bool = True) -> str:
        """Read up to an unescaped ``delimiter`` (after the opening one)."""
        if not delimiter or delimiter in "\n\\":
            raise _UnknownError("bad delimiter")
        self.i += 1
        start = self.i
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "\\":
                self.i += 2
                continue
            if ch == delimiter:
                text = self.s[start:self.i]
                self.i += 1
                return text
            if ch == "[" and brackets and delimiter != "[":
                self.bracket()
                continue
            self.i += 1
        raise _UnknownError("unterminated expression")

    def bracket(self) -> None:
        close = self.s.find("]", self.i + 2 if self.s[self.i + 1:self.i + 2] in ("]", "^")
                            else self.i + 1)
        if close < 0:
            raise _UnknownError("unterminated bracket")
        self.i = close + 1

    def filename(self) -> str:
        self.blanks()
        return self.to_line_end()

    def command(self) -> None:
        ch = self.peek()
        if not ch:
            raise _UnknownError("missing command")
        self.i += 1
        if ch in "{}" or ch in _NO_ARGUMENT:
            return
        if ch in _LABEL or ch in _EXIT:
            self.argument_to_separator()
        elif ch in _TEXT:
            self.text_argument()
        elif ch in "rR":
            self.out.reads.append(self.filename())
        elif ch in "wW":
            self.out.writes.append(self.filename())
        elif ch == "e":
            self.out.runs.append("sed's e command runs a shell command")
            self.to_line_end()
        elif ch == "v":
            self.argument_to_separator()
        elif ch == "s":
            self.substitute()
        elif ch == "y":
            delimiter = self.peek()
            self.delimited(delimiter, brackets=False)
            self.i -= 1
            self.delimited(delimiter, brackets=False)
        else:
            raise _UnknownError(f"command {ch!r}")

    def argument_to_separator(self) -> None:
        while self.peek() and self.peek() not in ";\n}":
            self.i += 1

    def text_argument(self) -> None:
        """`a text`, `a\\` NEWLINE `text` (continued by trailing backslashes)."""
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "\\":
                self.i += 2
                continue
            if ch == "\n":
                return
            self.i += 1

    def substitute(self) -> None:
        delimiter = self.peek()
        self.delimited(delimiter)
        self.i -= 1
        self.delimited(delimiter, brackets=False)
        while self.peek() and self.peek() not in ";\n}":
            flag = self.peek()
            self.i += 1
            if flag == "e":
                self.out.runs.append("s///e runs the pattern space as a shell command")
            elif flag == "w":
                self.out.writes.append(self.filename())
                return
            elif not (flag.isdigit() or flag in "gpiImM \t"):
                raise _UnknownError(f"s flag {flag!r}")
