"""Ignore rules as ripgrep applies them, for the pure-Python grep, glob and ls.

The fallback grep must skip exactly the files ``rg`` skips, and glob and ls should agree with
grep about what "ignored" means; so this follows the ``ignore`` crate ripgrep is built on:
``.rgignore`` > ``.ignore`` > ``.gitignore`` > ``.git/info/exclude`` > the global excludes file,
the closest directory's last matching line deciding within each kind; ``.gitignore`` only counts
inside a git repository (and not above its root); ignore files of the search root's parents
apply too; ``--glob`` overrides and file types can whitelist a hidden or ignored file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

#: Ignore files read in every directory, highest precedence first (custom, then .ignore).
_PLAIN_FILES = (".rgignore", ".ignore")
#: Stop-check interval of the walk, in directory entries.
_CHECK_EVERY = 256
#: Paths use a separator other than "/" (Windows): ignore rules are written with "/".
_NATIVE_SEP = os.sep != "/"


class ReadDenied(Protocol):
    """The session's read rules: True when the model may not see ``path`` (the services key).

    Search results under a denied path are dropped and counted, never shown.
    """

    def __call__(self, path: Path) -> bool: ...


class GlobError(ValueError):
    """A glob that cannot be compiled; the message says what is wrong with it."""


def glob_regex(glob: str, *, separator: bool = True) -> str:
    """The regex body for a globset-style glob (``*``, ``?``, ``[..]``, ``{a,b}``, ``**``).

    With ``separator`` (path globs), ``*``, ``?`` and classes never match ``/``.
    """
    out: list[str] = []
    depth = 0
    i, n = 0, len(glob)
    star = "[^/]*" if separator else ".*"
    while i < n:
        c = glob[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        elif c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            before = glob[i - 1] if i else "/"
            after = glob[j] if j < n else "/"
            recursive = j - i >= 2 and separator and before in "/{," and after in "/,}"
            if recursive and after == "/":
                out.append("(?:.*/)?")
                j += 1
            else:
                out.append(".*" if recursive else star)
            i = j
        elif c == "?":
            out.append("[^/]" if separator else ".")
            i += 1
        elif c == "[":
            body, i = _char_class(glob, i, separator)
            out.append(body)
        elif c == "{":
            depth += 1
            out.append("(?:")
            i += 1
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
            i += 1
        elif c == "," and depth:
            out.append("|")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    if depth:
        raise GlobError(f"glob {glob!r} has an unclosed '{{'")
    return "".join(out)


def _char_class(glob: str, start: int, separator: bool) -> tuple[str, int]:
    i = start + 1
    negate = i < len(glob) and glob[i] in "!^"
    i += negate
    items: list[str] = []
    first = True
    while i < len(glob) and (glob[i] != "]" or first):
        c = glob[i]
        items.append("-" if c == "-" and not first and glob[i + 1:i + 2] != "]" else re.escape(c))
        first = False
        i += 1
    if i >= len(glob):
        raise GlobError(f"glob {glob!r} has an unclosed character class '['")
    if negate and separator:
        items.append("/")
    return "[" + ("^" if negate else "") + "".join(items) + "]", i + 1


def _join(directory: str, name: str) -> str:
    """``directory/name`` as a string (the walk's hot path works on strings, not Paths)."""
    return directory + name if directory.endswith(os.sep) else directory + os.sep + name


@dataclass(frozen=True)
class _Line:
    regex: re.Pattern[str]
    whitelist: bool
    dir_only: bool


def _parse_line(raw: str, *, ignore_case: bool = False) -> _Line | None:
    """One gitignore line as the ``ignore`` crate reads it; None for blanks, comments, errors."""
    line = raw if raw.endswith("\\ ") else raw.rstrip()
    if not line or line.startswith("#"):
        return None
    whitelist = absolute = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
        absolute = line.startswith("/")
    else:
        if line.startswith("!"):
            whitelist, line = True, line[1:]
        if line.startswith("/"):
            absolute, line = True, line[1:]
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
        if line.endswith("\\"):
            line = line[:-1]
    if not line:
        return None
    if not absolute and "/" not in line and not line.startswith("**/") and line != "**":
        line = "**/" + line
    if line.endswith("/**"):
        line += "/*"
    try:
        flags = re.IGNORECASE if ignore_case else 0
        regex = re.compile(f"(?s:{glob_regex(line)})\\Z", flags)
    except (GlobError, re.error):
        return None
    return _Line(regex, whitelist, dir_only)


class Rules:
    """The lines of one ignore file (or one set of overrides); the last matching line decides."""

    def __init__(self, lines: Sequence[str], *, ignore_case: bool = False) -> None:
        parsed = (_parse_line(x, ignore_case=ignore_case) for x in lines)
        self.lines = [x for x in parsed if x is not None]
        self.ignores = sum(not x.whitelist for x in self.lines)

    def __bool__(self) -> bool:
        return bool(self.lines)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: whitelisted (``!``); None: no line matches ``rel``."""
        for line in reversed(self.lines):
            if (is_dir or not line.dir_only) and line.regex.match(rel):
                return not line.whitelist
        return None

    @classmethod
    def load(cls, path: str) -> Rules | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                rules = cls(fh.read().split("\n"))
        except OSError:
            return None
        return rules or None


class Overrides:
    """``rg --glob`` globs: a match whitelists or excludes (``!``) regardless of other rules.

    With at least one positive glob, a file matching none of them is excluded.
    """

    def __init__(self, globs: Sequence[str], *, ignore_case: bool = False) -> None:
        for g in globs:
            glob_regex(g.removeprefix("!"))  # raises GlobError naming the bad glob
        self.rules = Rules(list(globs), ignore_case=ignore_case)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: exclude; False: include; None: the other rules decide."""
        found = self.rules.match(rel, is_dir)
        if found is None:
            return True if self.rules.ignores and not is_dir else None
        return not found


@dataclass
class _Frame:
    """The ignore files of one directory, linked to its closest parent that has any."""

    dir: str
    parent: _Frame | None
    custom: Rules | None = None
    ignore: Rules | None = None
    git: Rules | None = None
    exclude: Rules | None = None
    has_git: bool = False
    any_git: bool = field(init=False)

    def __post_init__(self) -> None:
        self.any_git = self.has_git or (self.parent is not None and self.parent.any_git)

    def rel(self, path: str) -> str:
        return _relative(self.dir, path)


def _relative(directory: str, path: str) -> str:
    """``path`` (inside ``directory``) relative to it, with ``/`` separators."""
    rel = path[len(directory):].lstrip(os.sep)
    return rel.replace(os.sep, "/") if _NATIVE_SEP else rel


def _frame(directory: str, parent: _Frame | None) -> _Frame | None:
    """The frame for ``directory``, or None when it holds no ignore file and no ``.git``."""
    custom, plain = (Rules.load(_join(directory, name)) for name in _PLAIN_FILES)
    git = Rules.load(_join(directory, ".gitignore"))
    dot_git = Path(directory, ".git")
    has_git = dot_git.exists()
    exclude = Rules.load(str(dot_git / "info" / "exclude")) if has_git else None
    if not (custom or plain or git or exclude or has_git):
        return None
    return _Frame(directory, parent, custom, plain, git, exclude, has_git)


def _ancestors_frame(root: str) -> _Frame | None:
    """Frames for ``root``'s parents, outermost first, as ripgrep reads them."""
    parts = Path(root).parents
    frame: _Frame | None = None
    for parent in reversed(parts):
        frame = _frame(str(parent), frame) or frame
    return frame


def _global_rules(home: str, xdg: str) -> Rules | None:
    """The global git excludes: ``core.excludesFile``, else ``$XDG_CONFIG_HOME/git/ignore``."""
    config_home = Path(xdg) if xdg else Path(home, ".config")
    path = config_home / "git" / "ignore"
    for config in (Path(home, ".gitconfig"), config_home / "git" / "config"):
        found = _excludes_file(config)
        if found:
            path = Path(found).expanduser()
    return Rules.load(str(path))


def _excludes_file(config: Path) -> str | None:
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section, found = "", None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "core" and "=" in line:
            key, value = line.split("=", 1)
            if key.strip().lower() == "excludesfile":
                found = value.strip().strip('"')
    return found


class IgnoreChecker:
    """Whether a path below ``root`` is ignored by ignore files (hidden-ness not included)."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        parents = _ancestors_frame(self.root)
        self.frame = _frame(self.root, parents) or parents
        self.global_rules = _global_rules(str(Path.home()),
                                          os.environ.get("XDG_CONFIG_HOME", ""))

    def child(self, directory: str, frame: _Frame | None) -> _Frame | None:
        return _frame(directory, frame) or frame

    def decide(self, frame: _Frame | None, path: str, is_dir: bool) -> bool | None:
        """True ignored, False whitelisted, None undecided, for ``path`` inside ``frame``'s dir."""
        found: list[bool | None] = [None, None, None, None]
        any_git = frame is not None and frame.any_git
        saw_git = False
        f = frame
        while f is not None:
            rel = f.rel(path)
            for slot, rules in enumerate((f.custom, f.ignore)):
                if found[slot] is None and rules is not None:
                    found[slot] = rules.match(rel, is_dir)
            if any_git and not saw_git:
                for slot, rules in ((2, f.git), (3, f.exclude)):
                    if found[slot] is None and rules is not None:
                        found[slot] = rules.match(rel, is_dir)
            saw_git = saw_git or f.has_git
            f = f.parent
        for verdict in found:
            if verdict is not None:
                return verdict
        if any_git and self.global_rules is not None:
            return self.global_rules.match(_relative(self.root, path), is_dir)
        return None

    def ignored(self, name: str, is_dir: bool) -> bool:
        """Whether the entry ``name`` directly inside ``root`` is ignored."""
        return self.decide(self.frame, _join(self.root, name), is_dir) is True


@dataclass
class Walk:
    """A ripgrep-style walk of the regular files below ``root`` (symlinks never followed).

    ``types`` maps a file name to True (wanted), False (not wanted) or None (no type selected).
    """

    root: Path
    hidden: bool = False
    overrides: Overrides | None = None
    types: Callable[[str], bool | None] | None = None
    skip_git_dir: bool = False
    #: Directory levels to descend below ``root`` (None: all).
    max_depth: int | None = None
    stop: Callable[[], bool] = lambda: False
    errors: list[str] = field(default_factory=list)
    stopped: bool = False

    def files(self) -> Iterator[str]:
        """Absolute paths of the files to search, in no particular order."""
        checker = IgnoreChecker(self.root)
        stack: list[tuple[str, _Frame | None, int]] = [(checker.root, checker.frame, 0)]
        seen = 0
        while stack:
            directory, frame, depth = stack.pop()
            try:
                with os.scandir(directory) as it:
                    entries = list(it)
            except OSError as err:
                self.errors.append(f"{directory}: {err.strerror or err}")
                continue
            for entry in entries:
                seen += 1
                if seen % _CHECK_EVERY == 0 and self.stop():
                    self.stopped = True
                    return
                try:
                    if entry.is_symlink():
                        continue
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if not is_dir and not entry.is_file(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                if is_dir and self.skip_git_dir and entry.name == ".git":
                    continue
                if self._skip(checker, frame, entry, is_dir=is_dir):
                    continue
                if is_dir:
                    if self.max_depth is None or depth + 1 < self.max_depth:
                        stack.append((entry.path, checker.child(entry.path, frame), depth + 1))
                else:
                    yield entry.path

    def _skip(self, checker: IgnoreChecker, frame: _Frame | None, entry: os.DirEntry[str], *,
              is_dir: bool) -> bool:
        """ripgrep's order: overrides, then ignore files, then types, then hidden-ness."""
        path, name = entry.path, entry.name
        if self.overrides is not None:
            forced = self.overrides.match(_relative(checker.root, path), is_dir)
            if forced is not None:
                return forced
        verdict = checker.decide(frame, path, is_dir)
        if verdict is True:
            return True
        whitelisted = verdict is False
        if self.types is not None and not is_dir:
            wanted = self.types(name)
            if wanted is False:
                return True
            whitelisted = whitelisted or wanted is True
        return not whitelisted and not self.hidden and name.startswith(".")
