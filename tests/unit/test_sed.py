"""`sed -i` edits: which commands are recognised, and that applying one matches GNU sed exactly."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_ext.permissions.sed import SedEdit, parse_sed_edit


def _gnu_sed() -> str | None:
    path = shutil.which("sed")
    if path is None:
        return None
    version = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    return path if "GNU sed" in version.stdout else None


SED = _gnu_sed()
needs_sed = pytest.mark.skipif(SED is None, reason="GNU sed is not installed on this machine, "
                               "so apply() cannot be compared against it")

LINES = "foo bar foo\nbaz foo\n\nfoofoo end\n"
ABC = "abc abc abc\naaa bbb\nxbbx\n"

# (options and script as typed after `sed`, file text). Each is run through GNU sed too.
APPLY_CASES: list[tuple[str, str]] = [
    ("-i 's/foo/bar/'", LINES),
    ("-i 's/foo/bar/g'", LINES),
    ("-i 's/foo/X/2'", LINES),
    ("-i 's/foo/X/2g'", LINES),
    ("-i 's/foo/X/g2'", LINES),
    ("-i 's/o/0/3'", LINES),
    ("-i 's/^/# /'", LINES),
    ("-i 's/$/;/'", LINES),
    ("-i 's/^foo/X/'", LINES),
    ("-i 's/foo$/X/'", "foo\nafoo\nfoo foo\n"),
    ("-i 's/^baz foo$/whole/'", LINES),
    ("-i 's/\\(foo\\) \\(bar\\)/\\2 \\1/'", LINES),
    ("-i 's/\\(a\\)\\(b\\)\\(c\\)/\\3\\2\\1/g'", ABC),
    ("-i 's/[0-9]\\+/<&>/g'", "a1 b22 c333\nno digits\n"),
    ("-i 's/a*/-/g'", ABC),
    ("-i 's/b*/-/g'", ABC),
    ("-i 's/x*/-/2'", ABC),
    ("-i 's/\\./!/g'", "a.b.c\n...\n"),
    ("-i 's/a.c/X/g'", ABC),
    ("-i 's/[^a-z]/_/g'", "Hello, World 42\n"),
    ("-i 's/a\\{2\\}/X/g'", "a aa aaa aaaa\n"),
    ("-i 's/a\\{2,\\}/X/g'", "a aa aaa aaaa\n"),
    ("-i 's/a\\{1,2\\}/X/g'", "a aa aaa aaaa\n"),
    ("-i 's/a+b/X/'", "aab a+b\n"),
    ("-i 's/(x)/[&]/'", "f(x) = (x)\n"),
    ("-i 's/a|b/X/g'", "a|b a b\n"),
    ("-i 's/foo\\|bar/X/g'", LINES),
    ("-i 's/a\\?b/X/g'", "ab b aab\n"),
    ("-i 's/*/X/'", "2*3*4\n"),
    ("-i 's/a^b/X/'", "a^b ab\n"),
    ("-i 's/\\//|/g'", "/usr/local/bin\n"),
    ("-i 's/a/\\//g'", ABC),
    ("-i 's/a/\\&/g'", ABC),
    ("-i 's/a/\\\\/g'", ABC),
    ("-i 's/b/[&&]/2'", ABC),
    ("-i 's/\\(ab\\)c/[\\1]/g'", ABC),
    ("-i 's/[[]/(/g'", "a[1] b[2]\n"),
    ("-i 's/[]]/)/g'", "a[1] b[2]\n"),
    ("-i 's/[a-]/X/g'", "a-b-c\n"),
    ("-i 's/\\t/T/g'", "a\tb\t\tc\n"),
    ("-i 's/\\n/X/'", ABC),
    ("-i 's/$/!/'", "crlf\r\nlines\r\n"),
    ("-i 's/b/X/g'", "ab\r\nbb\r\n"),
    ("-i 's/c/X/'", "a\nbc"),
    ("-i 's/c/X/'", ""),
    ("-i 's/é/e/g'", "café éé\n"),
    ("-i 's/.$/!/'", "naïve\nñ\n"),
    ("-E -i 's/(foo|bar)baz/X/g'", "foobaz barbaz bazbaz\n"),
    ("-E -i 's/[0-9]+/N/g'", "a1 b22 c333\n"),
    ("-E -i 's/a{2,3}/X/g'", "a aa aaa aaaa\n"),
    ("-r -i 's/(a)(b*)/[\\2\\1]/g'", ABC),
    ("-i -E 's/\\(x\\)/Y/'", "f(x)\n"),
    ("-E -i 's/a\\+/X/'", "aa a+\n"),
    ("--regexp-extended -i 's/(cat|dog)s?/pet/g'", "cats dogs cat dog cow\n"),
    ("-Ei 's/x?y/Z/g'", "xy y xxy\n"),
    ("-rEi 's/.*/[&]/'", LINES),
    ("-E -i 's/a|b/X/2'", ABC),
    ("-E -i 's/^(foo|baz) /<\\1>/'", LINES),
    ("-i -e 's/foo/bar/'", LINES),
    ("-i --expression='s/foo/bar/g'", LINES),
    ("-i --expression 's/foo/bar/g'", LINES),
    ("--in-place 's/foo/bar/'", LINES),
    ("--in-place= 's/foo/bar/'", LINES),
    ("-i s/foo/bar/g", LINES),
    ("-i \"s/foo/bar/\"", LINES),
    ("-i 's/fo\\{1,\\}/F/g'", LINES),
]


@needs_sed
@pytest.mark.parametrize(("options", "text"), APPLY_CASES,
                         ids=[f"{o} #{i}" for i, (o, _t) in enumerate(APPLY_CASES)])
def test_apply_matches_gnu_sed(options: str, text: str, tmp_path: Path) -> None:
    assert SED is not None
    edit = parse_sed_edit(f"sed {options} notes.txt")
    assert edit is not None, options
    assert edit.file == "notes.txt"
    target = tmp_path / "notes.txt"
    target.write_bytes(text.encode("utf-8"))
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    subprocess.run([SED, *shlex.split(options), str(target)], check=True, env=env,
                   capture_output=True)
    assert edit.apply(text) == target.read_bytes().decode("utf-8")


def test_apply_table_is_large() -> None:
    assert len(APPLY_CASES) >= 40


def test_fields() -> None:
    edit = parse_sed_edit("sed -i -E 's/(a+)b/\\1&/3g' src/x.py")
    assert edit == SedEdit(file="src/x.py", pattern="(a+)b", replacement="\\1&", occurrence=3,
                           global_=True, extended=True)
    basic = parse_sed_edit("sed -i 's/a+(b)/c/' f")
    assert basic is not None
    assert basic.pattern == "a\\+\\(b\\)"
    assert not basic.extended
    assert basic.occurrence is None
    assert not basic.global_


def test_bsd_empty_suffix_is_consumed() -> None:
    edit = parse_sed_edit("sed -i '' 's/a/b/' file.txt")
    assert edit is not None
    assert edit.file == "file.txt"
    assert parse_sed_edit("sed --in-place '' 's/a/b/' file.txt") is not None


def test_apply_keeps_line_endings_and_missing_final_newline() -> None:
    edit = parse_sed_edit("sed -i 's/x/y/g' f")
    assert edit is not None
    assert edit.apply("x\r\nx\nx") == "y\r\ny\ny"
    assert edit.apply("") == ""
    assert edit.apply("\n\n") == "\n\n"


@pytest.mark.parametrize("command", [
    # Not sed, or not a plain word list.
    "sedx -i 's/a/b/' f",
    "  sed -i 's/a/b/' f",
    "sed",
    "sed -i 's/a/b/' f; rm -rf ~",
    "sed -i 's/a/b/' f && echo",
    "sed -i 's/a/b/' f | cat",
    "sed -i 's/a/b/' f > g",
    "sed -i 's/a/b/' < f",
    "sed -i 's/a/b/' *.txt",
    "sed -i 's/a/b/' f?",
    "sed -i 's/a/b/' {f,g}",
    "sed -i 's/a/b/' f # comment",
    "sed -i 's/a/b/ f",
    "sed -i $'s/a/b/' f",
    # In-place is required; backups are refused.
    "sed 's/a/b/' f",
    "sed -e 's/a/b/' f",
    "sed -i.bak 's/a/b/' f",
    "sed --in-place=.bak 's/a/b/' f",
    "sed -iE 's/a/b/' f",
    "sed -ie 's/a/b/' f",
    "sed -Eir 's/a/b/' f",
    # Only -E/-r/-i may be combined; any other option is refused.
    "sed -n -i 's/a/b/' f",
    "sed -i -s 's/a/b/' f",
    "sed -i -z 's/a/b/' f",
    "sed -Ein 's/a/b/' f",
    "sed -i --posix 's/a/b/' f",
    "sed -i --debug 's/a/b/' f",
    "sed -i -f script.sed f",
    "sed -i -- 's/a/b/' f",
    # Exactly one script and one file.
    "sed -i -e 's/a/b/' -e 's/c/d/' f",
    "sed -i --expression=s/a/b/ -e s/c/d/ f",
    "sed -i 's/a/b/' f g",
    "sed -i 's/a/b/'",
    "sed -i",
    "sed -i -e",
    # Expansions and special paths.
    "sed -i 's/$HOME/x/' f",
    "sed -i 's/${HOME}/x/' f",
    "sed -i 's/$(id)/x/' f",
    "sed -i 's/a/$1/' f",
    "sed -i 's/a/$#/' f",
    "sed -i 's/a/$?/' f",
    "sed -i 's/a/$@/' f",
    "sed -i 's/a/$$/' f",
    "sed -i 's/a/$!/' f",
    "sed -i 's/a/$*/' f",
    "sed -i \"s/a/$-/\" f",
    "sed -i 's/a/`id`/' f",
    "sed -i 's/a/b/' ~/f",
    "sed -i 's/a/b/' '~/f'",
    "sed -i 's/a/b/' 'dir$x/f'",
    "sed -i 's/a/b/' ''",
    # Only s/// with the / delimiter, one line, non-empty pattern.
    "sed -i 's|a|b|' f",
    "sed -i 's#a#b#' f",
    "sed -i 'y/a/b/' f",
    "sed -i '/a/d' f",
    "sed -i '1s/a/b/' f",
    "sed -i 's/a/b/;s/c/d/' f",
    "sed -i 's/a/b' f",
    "sed -i 's//b/' f",
    "sed -i 's/a\nb/c/' f",
    # Flags: g and one positive number only.
    "sed -i 's/a/b/gg' f",
    "sed -i 's/a/b/0' f",
    "sed -i 's/a/b/02' f",
    "sed -i 's/a/b/2g3' f",
    "sed -i 's/a/b/i' f",
    "sed -i 's/a/b/p' f",
    "sed -i 's/a/b/w out' f",
    "sed -i 's/a/b/e' f",
    "sed -i 's/a/b/m' f",
    # Replacement escapes.
    "sed -i 's/a/\\n/' f",
    "sed -i 's/a/\\t/' f",
    "sed -i 's/a/\\L&/' f",
    "sed -i 's/a/\\0/' f",
    "sed -i 's/a/\\1/' f",
    "sed -i 's/\\(a\\)/\\2/' f",
    "sed -i 's/a/b\\/' f",
    # Pattern: POSIX classes, unsupported escapes, bad syntax.
    "sed -i 's/[[:alpha:]]/x/' f",
    "sed -i 's/[[:space:]]*/x/' f",
    "sed -i 's/[[.a.]]/x/' f",
    "sed -i 's/[[=a=]]/x/' f",
    "sed -i 's/\\</x/' f",
    "sed -i 's/\\>/x/' f",
    "sed -i 's/\\d/x/' f",
    "sed -i 's/\\D/x/' f",
    "sed -i 's/\\w/x/' f",
    "sed -i 's/\\W/x/' f",
    "sed -i 's/\\s/x/' f",
    "sed -i 's/\\S/x/' f",
    "sed -i 's/\\b/x/' f",
    "sed -i 's/[\\n]/x/' f",
    "sed -i 's/[z-a]/x/' f",
    "sed -i 's/[abc/x/' f",
    "sed -i 's/\\(a/x/' f",
    "sed -i 's/a\\)/x/' f",
    "sed -i -E 's/(a/x/' f",
    "sed -i -E 's/*a/x/' f",
    "sed -i -E 's/a{b/x/' f",
    "sed -i 's/a**/x/' f",
    "sed -i -E 's/a+?/x/' f",
    "sed -i -E 's/a*+/x/' f",
    "sed -i 's/a\\{3,2\\}/x/' f",
    "sed -i 's/\\(a\\)\\1/x/' f",
    # ReDoS guard: a quantified group holding alternation or a quantifier.
    "sed -i -E 's/(a|b)*/x/' f",
    "sed -i -E 's/(a+)+/x/' f",
    "sed -i -E 's/((a|b)c)+/x/' f",
    "sed -i 's/\\(a*\\)*/x/' f",
    "sed -i 's/\\(a\\|b\\)\\{2,\\}/x/' f",
    # Alternation sed and Python would resolve differently (longest vs first match).
    "sed -i -E 's/a|ab/x/' f",
    "sed -i -E 's/(ab|a)c/x/' f",
    "sed -i -E 's/a|/x/' f",
    "sed -i -E 's/a.|b/x/' f",
])
def test_rejected(command: str) -> None:
    assert parse_sed_edit(command) is None


@pytest.mark.parametrize("command", [
    "sed -i 's/a/b/' f",
    "sed -i -E 's/a/b/' f",
    "sed -r -i 's/a/b/' f",
    "sed -Ei 's/a/b/' f",
    "sed -rEi 's/a/b/' f",
    "sed -i -e 's/a/b/' f",
    "sed -i --expression=s/a/b/ f",
    "sed --in-place= 's/a/b/' f",
    "sed\t-i 's/a/b/' f",
    "sed -i 's/a$/b/' f",
    "sed -i \"s/a\\$/b/\" f",
    "sed -i 's/a/b/' 'my file.txt'",
    "sed -i 's/a/b/' ./src/../f",
])
def test_accepted(command: str) -> None:
    assert parse_sed_edit(command) is not None


def test_redos_pattern_is_not_catastrophic() -> None:
    edit = parse_sed_edit("sed -i -E 's/(ab)+c/x/' f")
    assert edit is None
    safe = parse_sed_edit("sed -i -E 's/a+c/x/g' f")
    assert safe is not None
    assert safe.apply("a" * 5000 + "b\n") == "a" * 5000 + "b\n"


@pytest.mark.parametrize(("command", "unbounded"), [
    ("sed -i 's/foo/bar/' f", 0),
    ("sed -i 's/a\\*b/x/' f", 0),
    ("sed -i 's/[*+]x/y/' f", 0),
    ("sed -i 's/ *$//' f", 1),
    ("sed -i 's/a.*b.*c/x/' f", 2),
    ("sed -i -E 's/a{2,}b+c{1,3}/x/' f", 2),
    ("sed -i -E 's/.{0,3000}a.{0,3000}b/x/' f", 2),
    ("sed -i -E 's/a{1,16}b{3}/x/' f", 0),
])
def test_unbounded_quantifiers_are_counted(command: str, unbounded: int) -> None:
    edit = parse_sed_edit(command)
    assert edit is not None and edit.unbounded == unbounded


@pytest.mark.timeout(20)
def test_an_edit_too_costly_to_compute_runs_as_the_command(tmp_path: Path) -> None:
    from agent_ext.tools.shell import plan_sed

    # Python's backtracking would take minutes on this line (sed takes milliseconds).
    crafted = tmp_path / "crafted.txt"
    crafted.write_text("a" * 10_000 + "\n")
    costly = parse_sed_edit("sed -i 's/.*a.*b/x/' crafted.txt")
    assert costly is not None and costly.work(crafted.read_text()) >= 10**12
    assert plan_sed(crafted, costly) is None
    # the same file with a cheap pattern is still shown as a diff
    cheap = parse_sed_edit("sed -i 's/aaa/b/' crafted.txt")
    assert cheap is not None
    plan = plan_sed(crafted, cheap)
    assert plan is not None and plan.proposed.startswith("b")
