"""Recognise the safe `sed -i 's/.../.../'` forms, so they can be shown and applied as diffs.

A model often edits a file with `sed -i`. When the command is a single plain substitution on a
single file, the edit can be computed here and shown as a diff to approve, instead of a raw shell
run. Anything outside that narrow, fully understood form is left to the shell path: options with
side effects, backups, several files, expansions, and regular expressions whose meaning (or cost)
in Python could differ from sed's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["SedEdit", "parse_sed_edit"]


@dataclass(frozen=True)
class SedEdit:
    """One `s/PATTERN/REPLACEMENT/FLAGS` edit of one file, with the pattern in Python syntax."""

    file: str
    pattern: str
    replacement: str
    occurrence: int | None
    global_: bool
    extended: bool

    @property
    def unbounded(self) -> int:
        """How many unbounded quantifiers the pattern has: ``*``, ``+``, ``{n,}``, and intervals
        whose upper bound exceeds ``LONG_INTERVAL`` (``.{0,3000}`` backtracks like ``.*``)."""
        count, i, pattern = 0, 0, self.pattern
        while i < len(pattern):
            ch = pattern[i]
            if ch == "\\":
                i += 2
                continue
            if ch == "[":
                i = _class_end(pattern, i)
                continue
            interval = _INTERVAL_AT.match(pattern, i) if ch == "{" else None
            if ch in "*+" or (interval is not None and (
                    not interval.group(1) or int(interval.group(1)) > LONG_INTERVAL)):
                count += 1
            i += 1
        return count

    def work(self, text: str) -> int:
        """An upper estimate of the regex steps ``apply`` takes on ``text``.

        Why: Python's regex backtracks, so on a line that does not match, each unbounded
        quantifier multiplies the work by the line's length (``.*a.*b`` on 10,000 letters takes
        minutes). The caller applies the edit only when this is small.
        """
        power = self.unbounded + 1
        return sum(len(line) ** power for line in text.split("\n"))

    def apply(self, text: str) -> str:
        """The file text after the edit, line by line as sed does, line endings kept.

        Why: the diff shown for approval has to be exactly what `sed -i` would write.
        """
        regex = re.compile(self.pattern)
        expand = _replacer(self.replacement)
        lines = text.split("\n")
        last = len(lines) - 1
        out = [
            line if index == last and line == "" else self._line(regex, expand, line)
            for index, line in enumerate(lines)
        ]
        return "\n".join(out)

    def _line(self, regex: re.Pattern[str], expand: Callable[[re.Match[str]], str],
              line: str) -> str:
        """Substitute within one line (without its newline), following GNU sed's scan."""
        wanted = self.occurrence or 1
        out: list[str] = []
        pos = count = 0
        previous_end = -1
        while pos <= len(line):
            match = regex.search(line, pos)
            if match is None:
                break
            start, end = match.span()
            if start == end and start == previous_end:
                # sed never takes an empty match right where the previous match ended.
                if start >= len(line):
                    break
                out.append(line[pos:start + 1])
                pos = start + 1
                continue
            count += 1
            out.append(line[pos:start])
            replaced = count >= wanted
            out.append(expand(match) if replaced else match.group(0))
            previous_end = pos = end
            if replaced and not self.global_:
                break
            if start == end:
                if end >= len(line):
                    break
                out.append(line[end])
                pos = end + 1
        out.append(line[pos:])
        return "".join(out)


_INTERVAL_AT = re.compile(r"\{\d*,(\d*)\}")
#: An interval with an upper bound above this counts as unbounded in ``SedEdit.unbounded``.
LONG_INTERVAL = 16


def _members_start(pattern: str, start: int) -> int:
    """Where the `]` closing the bracket opened at ``pattern[start]`` may stand: past a `^`
    and a `]` right after it (a member there, not the end)."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    return i


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class that opens at ``pattern[start]``."""
    i = _members_start(pattern, start)
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _replacer(replacement: str) -> Callable[[re.Match[str]], str]:
    """A function building sed's replacement text: `&` the match, `\\N` a group."""
    parts: list[str | int] = []
    literal: list[str] = []
    i = 0
    while i < len(replacement):
        ch = replacement[i]
        if ch == "\\" and i + 1 < len(replacement):
            nxt = replacement[i + 1]
            if nxt.isdigit():
                parts.append("".join(literal))
                literal = []
                parts.append(int(nxt))
            else:
                literal.append(nxt)
            i += 2
            continue
        if ch == "&":
            parts.append("".join(literal))
            literal = []
            parts.append(0)
        else:
            literal.append(ch)
        i += 1
    parts.append("".join(literal))

    def expand(match: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in parts)

    return expand


# -- command line --------------------------------------------------------------------------------

_SED_PREFIX = re.compile(r"sed\s")
_SHELL_OPERATORS = frozenset(";&|<>()\n")
_GLOB_OR_BRACE = frozenset("*?[]{}")
_EXPANSION = re.compile(r"\$(?:[A-Za-z_{(\[0-9#?@$!*-])|`")
_FLAGS = re.compile(r"g?|[1-9][0-9]*g?|g[1-9][0-9]*")
_REPLACEMENT_ESCAPES = frozenset("\\/&123456789")


def _tokenize(text: str) -> list[str] | None:
    """Split shell-style; None if any operator, redirection, glob, or unusual quoting appears.

    Why: only a plain word list is a single `sed` run whose arguments are known exactly.
    """
    words: list[str] = []
    current: list[str] = []
    in_word = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " \t":
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
            i += 1
            continue
        if ch in _SHELL_OPERATORS or ch in _GLOB_OR_BRACE or ch == "`":
            return None
        if ch == "#" and not in_word:
            return None
        in_word = True
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return None
            current.append(text[i + 1:end])
            i = end + 1
        elif ch == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
                    if text[i + 1] != "\n":
                        current.append(text[i + 1])
                    i += 2
                    continue
                current.append(text[i])
                i += 1
            if i >= n:
                return None
            i += 1
        elif ch == "\\":
            if i + 1 >= n:
                return None
            if text[i + 1] != "\n":
                current.append(text[i + 1])
            i += 2
        elif ch == "$" and i + 1 < n and text[i + 1] in "'\"":
            return None
        else:
            current.append(ch)
            i += 1
    if in_word:
        words.append("".join(current))
    return words


@dataclass
class _Options:
    in_place: bool = False
    extended: bool = False
    script: str | None = None


def _read_options(args: list[str]) -> tuple[_Options, list[str]] | None:
    """Options and positional words, or None when anything besides the safe set appears."""
    options = _Options()
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-i", "--in-place"):
            options.in_place = True
            if i + 1 < len(args) and args[i + 1] == "":
                i += 1
        elif arg == "--in-place=":
            options.in_place = True
        elif arg in ("-E", "-r", "--regexp-extended"):
            options.extended = True
        elif arg in ("-e", "--expression"):
            if options.script is not None or i + 1 >= len(args):
                return None
            options.script = args[i + 1]
            i += 1
        elif arg.startswith("--expression="):
            if options.script is not None:
                return None
            options.script = arg.partition("=")[2]
        elif arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            # `-i` takes everything after it as a backup suffix, so it can only come last.
            if letters[0] == "i" or not set(letters) <= set("Eri") or "i" in letters[:-1]:
                return None
            options.in_place = options.in_place or letters.endswith("i")
            options.extended = options.extended or bool(set(letters) & set("Er"))
        else:
            positional.append(arg)
        i += 1
    return options, positional


def parse_sed_edit(command: str) -> SedEdit | None:
    """The edit a `sed -i` command makes, or None when it is not one of the safe forms.

    Why: a recognised edit is shown as a diff and applied exactly; everything else goes
    through the ordinary shell permission path.
    """
    if not _SED_PREFIX.match(command):
        return None
    args = _tokenize(command[3:])
    if args is None:
        return None
    parsed = _read_options(args)
    if parsed is None:
        return None
    options, positional = parsed
    if not options.in_place:
        return None
    script = options.script
    if script is None:
        if not positional:
            return None
        script = positional.pop(0)
    if len(positional) != 1:
        return None
    file = positional[0]
    if not file or file.startswith("~") or "$" in file:
        return None
    if _EXPANSION.search(script) or "\n" in script:
        return None
    parts = _split_substitution(script)
    if parts is None:
        return None
    pattern, replacement, flags = parts
    if not pattern or not _FLAGS.fullmatch(flags):
        return None
    digits = flags.replace("g", "")
    occurrence = int(digits) if digits else None
    converted = convert_pattern(pattern, extended=options.extended)
    if converted is None:
        return None
    try:
        groups = re.compile(converted).groups
    except re.error:
        return None
    if not _replacement_ok(replacement, groups):
        return None
    return SedEdit(file=file, pattern=converted, replacement=replacement,
                   occurrence=occurrence, global_="g" in flags, extended=options.extended)


def _split_substitution(script: str) -> tuple[str, str, str] | None:
    """`s/P/R/F` into (P, R, F) with `/` as the only delimiter; backslashes kept."""
    if not script.startswith("s/"):
        return None
    fields: list[str] = []
    current: list[str] = []
    i = 2
    while i < len(script) and len(fields) < 2:
        ch = script[i]
        if ch == "\\" and i + 1 < len(script):
            current.append(script[i:i + 2])
            i += 2
            continue
        if ch == "/":
            fields.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    if len(fields) < 2:
        return None
    return fields[0], fields[1], script[i:]


def _replacement_ok(replacement: str, groups: int) -> bool:
    i = 0
    while i < len(replacement):
        if replacement[i] == "\\":
            if i + 1 >= len(replacement) or replacement[i + 1] not in _REPLACEMENT_ESCAPES:
                return False
            if replacement[i + 1].isdigit() and int(replacement[i + 1]) > groups:
                return False
            i += 2
            continue
        i += 1
    return True


# -- regular expressions -------------------------------------------------------------------------

_POSIX_CLASS = re.compile(r"\[[:.=]")
# Escapes that mean the same single character in sed and in Python.
_CHAR_ESCAPES = {"n": "\n", "t": "\t"}
_LITERAL_ESCAPES = frozenset(".*[]^$\\/")
_INTERVAL = re.compile(r"([0-9]*)(?:(,)([0-9]*))?")


@dataclass
class _Group:
    """An open group while converting.

    `branches` holds each alternative's literal text, or is None once anything but literals
    appears; `alternation` says the group has its own `|`.
    """

    branches: list[list[str]] | None = field(default_factory=lambda: [list[str]()])
    alternation: bool = False


class _Converter:
    """POSIX BRE/ERE to Python `re`, refusing whatever either could read differently.

    sed takes the leftmost-longest match (POSIX) where Python backtracks to the first match
    that succeeds. They agree when alternatives are distinct literals (see `_unambiguous`),
    quantifiers apply to single characters or classes and the pattern has no backreference;
    a quantified group is refused outright, which is also where catastrophic backtracking
    (a quantifier over a group holding alternation or another quantifier) would come from.
    """

    def __init__(self, pattern: str, *, extended: bool) -> None:
        self.pattern = pattern
        self.extended = extended
        self.out: list[str] = []
        self.stack: list[_Group] = [_Group()]
        self.branch_start = True
        self.only_anchor = False
        self.can_quantify = False
        self.last_quantified = False
        self.after_group = False

    def _step(self, text: str, *, quantifiable: bool, literal: str | None = None) -> None:
        self.out.append(text)
        group = self.stack[-1]
        if group.branches is not None:
            if literal is None:
                group.branches = None
            else:
                group.branches[-1].append(literal)
        self.branch_start = False
        self.only_anchor = False
        self.can_quantify = quantifiable
        self.last_quantified = False
        self.after_group = False

    def literal(self, text: str) -> None:
        self._step(re.escape(text), quantifiable=True, literal=text)

    def atom(self, text: str) -> None:
        self._step(text, quantifiable=True)

    def anchor(self, text: str) -> None:
        at_start = self.branch_start
        self._step(text, quantifiable=False)
        self.only_anchor = at_start

    def quantifier(self, text: str) -> bool:
        if not self.can_quantify or self.last_quantified or self.after_group:
            return False
        self._step(text, quantifiable=False)
        self.last_quantified = True
        return True

    def open_group(self) -> None:
        self._step("(", quantifiable=False)
        self.stack.append(_Group())
        self.branch_start = True

    def close_group(self) -> bool:
        if len(self.stack) < 2:
            return False
        group = self.stack.pop()
        if group.alternation and not _unambiguous(group.branches):
            return False
        self._step(")", quantifiable=True)
        self.after_group = True
        return True

    def alternate(self) -> None:
        group = self.stack[-1]
        self.out.append("|")
        group.alternation = True
        if group.branches is not None:
            group.branches.append([])
        self.branch_start = True
        self.only_anchor = False
        self.can_quantify = False
        self.last_quantified = False
        self.after_group = False

    def convert(self) -> str | None:
        pattern, extended = self.pattern, self.extended
        if _POSIX_CLASS.search(pattern):
            return None
        i, n = 0, len(pattern)
        while i < n:
            ch = pattern[i]
            if ch == "[":
                end = _bracket_end(pattern, i)
                converted = None if end is None else _convert_bracket(pattern[i + 1:end])
                if end is None or converted is None:
                    return None
                self.atom(converted)
                i = end + 1
                continue
            escaped = ch == "\\"
            if escaped:
                if i + 1 >= n:
                    return None
                ch = pattern[i + 1]
            i += 2 if escaped else 1
            if ch in "(){}+?|":
                end = self.special(ch, i, escaped=escaped)
                if end is None:
                    return None
                i = end
            elif escaped:
                if ch in _LITERAL_ESCAPES:
                    self.literal(ch)
                elif ch in _CHAR_ESCAPES:
                    self.literal(_CHAR_ESCAPES[ch])
                else:
                    return None
            elif ch == "*":
                if not extended and (self.branch_start or self.only_anchor):
                    self.literal("*")
                elif not self.quantifier("*"):
                    return None
            elif ch == ".":
                self.atom(".")
            elif ch == "^":
                if extended or self.branch_start:
                    self.anchor("^")
                else:
                    self.literal("^")
            elif ch == "$":
                if extended or i >= n or pattern.startswith(("\\)", "\\|"), i):
                    self.anchor("$")
                else:
                    self.literal("$")
            else:
                self.literal(ch)
        if len(self.stack) != 1:
            return None
        top = self.stack[0]
        if top.alternation and not _unambiguous(top.branches):
            return None
        return "".join(self.out)

    def special(self, op: str, i: int, *, escaped: bool) -> int | None:
        """Handle one of `( ) { } + ? |`; returns where scanning resumes, or None.

        Escaped it is an operator in basic syntax and a literal in extended syntax; unescaped,
        the other way round.
        """
        if escaped == self.extended:
            self.literal(op)
            return i
        if op == "(":
            self.open_group()
            return i
        if op == ")":
            return i if self.close_group() else None
        if op == "|":
            self.alternate()
            return i
        if op in "+?":
            return i if self.quantifier(op) else None
        if op != "{":
            return None
        closer = "}" if self.extended else "\\}"
        end = self.pattern.find(closer, i)
        if end < 0:
            return None
        match = _INTERVAL.fullmatch(self.pattern, i, end)
        if match is None or not (match.group(1) or match.group(3)):
            return None
        low = int(match.group(1) or "0")
        if match.group(2) is None:
            text = f"{{{low}}}"
        else:
            high = match.group(3)
            if high and int(high) < low:
                return None
            text = f"{{{low},{int(high) if high else ''}}}"
        return end + len(closer) if self.quantifier(text) else None


def _unambiguous(branches: list[list[str]] | None) -> bool:
    """Alternatives are safe only as distinct plain literals none of which starts another.

    Why: sed picks the longest alternative (POSIX leftmost-longest), Python the first that
    matches; the two agree only when at most one alternative can match at any position.
    """
    if branches is None:
        return False
    words = ["".join(b) for b in branches]
    if not all(words) or len(set(words)) != len(words):
        return False
    return not any(a != b and b.startswith(a) for a in words for b in words)


def _bracket_end(pattern: str, start: int) -> int | None:
    """Index of the `]` closing the bracket expression opened at `start`."""
    end = pattern.find("]", _members_start(pattern, start))
    return end if end >= 0 else None


def _convert_bracket(body: str) -> str | None:
    """A POSIX bracket expression body as a Python set, every member escaped."""
    negate = body.startswith("^")
    members = body[1:] if negate else body
    if not members or "\\" in members:
        return None
    out: list[str] = []
    last_range = -2
    for index, ch in enumerate(members):
        if ch == "-" and 0 < index < len(members) - 1:
            if index - last_range == 2:
                return None
            last_range = index
            out.append("-")
        else:
            out.append(re.escape(ch))
    return "[" + ("^" if negate else "") + "".join(out) + "]"


def convert_pattern(pattern: str, *, extended: bool) -> str | None:
    """A sed pattern in Python syntax, or None if it is unsupported or risky.

    Why: POSIX and Python regular expressions disagree on which characters are operators, and
    a nested quantifier could make the edit take exponential time on a crafted line.
    """
    converted = _Converter(pattern, extended=extended).convert()
    if converted is None:
        return None
    try:
        re.compile(converted)
    except re.error:
        return None
    return converted
