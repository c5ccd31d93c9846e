"""Commands as deny rules should see them: global options removed, option clusters as sets.

`deny: Bash(git push *)` has to match `git -C . push` and `git --no-pager push`, and
`deny: Bash(rm -rf *)` has to match `rm -fr`, `rm -r -f` and `rm --recursive --force`. So for
deny and ask rules a command is also compared with its program's global options (the words
between the program and its subcommand) taken out, and, for rules made of plain words, with
options compared as sets wherever they stand. Allow rules never use this: they stay literal.
"""

from __future__ import annotations

from ._global_options import GLOBAL_OPTIONS
from .rules import DYNAMIC, Rule

#: Long options that mean a short one, per program (for comparing options as sets).
ALIASES: dict[str, dict[str, str]] = {
    "rm": {"-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d",
           "--interactive": "-i", "--verbose": "-v"},
    "cp": {"-R": "-r", "--recursive": "-r", "--force": "-f", "--archive": "-a"},
    "mv": {"--force": "-f", "--no-clobber": "-n"},
    "chmod": {"--recursive": "-R"}, "chown": {"--recursive": "-R"},
    "git": {"--force": "-f", "--delete": "-d", "--all": "-a", "--quiet": "-q",
            "--set-upstream": "-u", "--dry-run": "-n", "--message": "-m"},
}


def strip_globals(argv: list[object]) -> list[object]:
    """``argv`` without the global options between the program and its subcommand.

    Words are strings, or ``DYNAMIC`` for one only known at run time (kept: it could be
    anything, including the subcommand).
    """
    if not argv or not isinstance(argv[0], str):
        return argv
    name = argv[0].rsplit("/", 1)[-1]
    spec = GLOBAL_OPTIONS.get(name)
    if spec is None:
        return argv
    index = 1
    while index < len(argv):
        word = argv[index]
        if not isinstance(word, str) or not word.startswith("-") or word in ("-", "--"):
            if word == "--":
                index += 1
            break
        head = word.partition("=")[0]
        if word in spec.valued:
            index += 2
        elif head in spec.valued or head in spec.flags or word in spec.flags or (
                len(word) > 2 and word[:2] in spec.valued and not word.startswith("--")):
            index += 1
        else:
            break
    if name == "cargo" and index < len(argv) and str(argv[index]).startswith("+"):
        index += 1
    return [argv[0], *argv[index:]]


def option_set(name: str, words: list[str]) -> set[str]:
    """The options among ``words``, clusters split (``-rf`` → ``-r``, ``-f``), aliases
    mapped, values after ``=`` dropped."""
    aliases = ALIASES.get(name, {})
    found: set[str] = set()
    for word in words:
        if word == "--":
            break
        if word.startswith("--") and len(word) > 2:
            long = word.partition("=")[0]
            found.add(aliases.get(long, long))
        elif word.startswith("-") and len(word) > 1 and not word[1].isdigit():
            for letter in word[1:]:
                short = "-" + letter
                found.add(aliases.get(short, short))
    return found


def _plain(spec: str) -> tuple[list[str], bool] | None:
    """A rule's words and whether it ends in ``*``, when it is plain words (else None)."""
    body = spec.strip()
    if body.endswith(":*"):
        body = body[:-2].rstrip() + " *"
    star = body.endswith(" *") or body == "*"
    if star:
        body = body[:-1].rstrip()
    if any(c in body for c in "*\\"):
        return None
    words = body.split()
    return (words, star) if words else None


def option_hit(rule: Rule, argv: list[object]) -> bool:
    """Whether a plain-word rule matches ``argv`` with options compared as sets.

    The rule's leading words (up to its first option) must start the command, its options
    must all be among the command's, and its other words must appear in order (with nothing
    else when the rule has no trailing ``*``). A run-time word could be any of them.
    """
    plain = _plain(rule.specifier or "")
    if plain is None:
        return False
    words, star = plain
    head: list[str] = []
    for word in words:
        if word.startswith("-"):
            break
        head.append(word)
    tail = words[len(head):]
    if not tail or not head:
        return False
    argv = strip_globals(argv)
    if len(argv) < len(head) or any(
            a is not DYNAMIC and a != w for a, w in zip(argv, head, strict=False)):
        return False
    rest = argv[len(head):]
    dynamic = any(a is DYNAMIC for a in rest)
    name = head[0].rsplit("/", 1)[-1]
    have = option_set(name, [a for a in rest if isinstance(a, str)])
    wanted = option_set(name, [w for w in tail if w.startswith("-")])
    if not wanted <= have and not dynamic:
        return False
    rule_words = [w for w in tail if not w.startswith("-")]
    command_words = [a for a in rest if a is DYNAMIC or not str(a).startswith("-")]
    return dynamic or _in_order(rule_words, command_words, exact=not star)


def _in_order(wanted: list[str], words: list[object], *, exact: bool) -> bool:
    if exact:
        return wanted == words
    position = 0
    for word in words:
        if position < len(wanted) and word == wanted[position]:
            position += 1
    return position == len(wanted)
