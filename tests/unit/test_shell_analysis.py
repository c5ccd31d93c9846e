"""Shell analysis: the simple commands a command line runs, and when the list cannot be trusted."""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass

import pytest
import tree_sitter_bash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_sitter import Language, Parser

from agent_ext.permissions.shell import ShellAnalysis, SimpleCommand, analyse, mask_astral

Argv = tuple[str, ...]


@dataclass(frozen=True)
class Case:
    command: str
    argvs: tuple[Argv, ...]
    complete: bool = True
    wrappers: tuple[tuple[str, ...], ...] | None = None


def case(command: str, *argvs: str | Argv, complete: bool = True,
         wrappers: tuple[tuple[str, ...], ...] | None = None) -> Case:
    """Argvs may be written as space-separated strings when no word holds a space."""
    return Case(command, tuple(a if isinstance(a, tuple) else tuple(a.split()) for a in argvs),
                complete, wrappers)


GP = "git push"

CASES: list[Case] = [
    # Lists, pipelines, grouping.
    case("git status", "git status"),
    case("git status && git push", "git status", GP),
    case("git status || git push", "git status", GP),
    case("git status; git push", "git status", GP),
    case("git status & git push", "git status", GP),
    case("git status\ngit push", "git status", GP),
    case("git log | head -n 5", "git log", "head -n 5"),
    case("git push |& tee log", GP, "tee log"),
    case("(git push)", GP),
    case("{ git push; }", GP),
    case("! git push", GP),
    case("nohup git push &", GP, wrappers=(("nohup",),)),
    case("git status # && rm -rf /", "git status"),
    case("git \\\npush", GP),
    case("g\\\nit push", GP),
    case("  git push  ;  ", GP),
    # Quoting tricks resolve to the real words.
    case("g'i't push", GP),
    case('"git" push', GP),
    case("gi\\t push", GP),
    case("$'\\x67it' push", GP),
    case("$'\\147it' push", GP),
    case('"gi"t p"us"h', GP),
    case("\\git push", GP),
    case("echo 'a b' \"c d\"", ("echo", "a b", "c d")),
    case('echo "a\\"b\\$c\\\\d"', ("echo", 'a"b$c\\d')),
    case("echo $'a\\nb'", ("echo", "a\nb")),
    case('echo $"hello"', "echo hello"),
    # Unicode look-alikes stay different commands.
    case("gіt push", ("gіt", "push")),
    case("git\u200b push", ("git\u200b", "push")),
    # Expansions keep their source text and are dynamic.
    case("echo $HOME", "echo $HOME"),
    case('echo "x$Y"', ("echo", '"x$Y"')),
    case("ls *.py", "ls *.py"),
    # Dynamic command names cannot be analysed.
    case("X=git; $X push", "$X push", complete=False),
    case("$CMD args", "$CMD args", complete=False),
    case('"$CMD" x', ('"$CMD"', "x"), complete=False),
    case("${C} y", "${C} y", complete=False),
    case("$(echo rm) -rf /", ("$(echo rm)", "-rf", "/"), "echo rm", complete=False),
    case("`echo rm` -rf /", ("`echo rm`", "-rf", "/"), "echo rm", complete=False),
    case("/bin/r? -rf x", "/bin/r? -rf x", complete=False),
    case("{rm,-rf,x}", complete=False),
    # Substitutions run nested commands.
    case("a=$(git push)", GP),
    case("A=$(rm x)", "rm x"),
    case("echo $(git push)", ("echo", "$(git push)"), GP),
    case("echo `git push`", ("echo", "`git push`"), GP),
    case('echo "$(echo $(git push))"', ("echo", '"$(echo $(git push))"'),
         ("echo", "$(git push)"), GP),
    case("echo `echo \\`git push\\``", ("echo", "`echo \\`git push\\``"),
         ("echo", "`git push`"), GP),
    case("diff <(git show a) >(tee b)", ("diff", "<(git show a)", ">(tee b)"), "git show a",
         "tee b"),
    case("echo $((1 + 2))", ("echo", "$((1 + 2))")),
    case("echo $((1 + $(git push)))", ("echo", "$((1 + $(git push)))"), GP),
    case("[[ -n $(git push) ]]", GP),
    case("test -f x && git push", "test -f x", GP),
    case("(( x = $(git push) ))", GP),
    case("x[$(git push)]=1", GP),
    case("echo ${x:-$(git push)}", ("echo", "${x:-$(git push)}"), GP),
    # Assignments.
    case("A=1 git push", GP),
    case("A=1 B=2", ),
    case("export FOO=bar BAZ=$(pwd)", ("export", "FOO=bar", "BAZ=$(pwd)"), "pwd"),
    case("local a; unset b", "local a", "unset b"),
    case("LD_PRELOAD=/tmp/x.so ls", "ls", complete=False),
    case("PATH=.:$PATH git status", "git status", complete=False),
    case("export BASH_ENV=/tmp/x", "export BASH_ENV=/tmp/x", complete=False),
    # Compound commands.
    case("if true; then git push; fi", "true", GP),
    case("if a; then b; elif c; then d; else git push; fi", "a", "b", "c", "d", GP),
    case("for i in 1; do git push; done", GP),
    case("for f in $(ls); do rm \"$f\"; done", "ls", ("rm", '"$f"')),
    case("for ((i=0; i<3; i++)); do git push; done", GP),
    case("while git fetch; do :; done", "git fetch", ":"),
    case("until false; do git push; done", "false", GP),
    case("case $x in a|b) git push;; *) ls;; esac", GP, "ls"),
    case("select x in a b; do git push; done", GP),
    case("f() { git push; }; f", GP, "f"),
    case("function g { git push; }", GP),
    case("f() ( git push )", GP),
    # Wrappers are looked through.
    case("sudo -u root git push", GP, wrappers=(("sudo",),)),
    case("sudo -E -u bob -- git push", GP),
    case("sudo --preserve-env=PATH git push", GP),
    case("env -i A=1 git push", GP, wrappers=(("env",),)),
    case("env -u HOME git push", GP),
    case("env -S 'git push' origin", "git push origin"),
    case("env --split-string='git push' origin", "git push origin"),
    case("timeout 5 git push", GP, wrappers=(("timeout",),)),
    case("timeout -s KILL 5s git push", GP),
    case("timeout --signal=KILL 5s git push", GP),
    case("time git push", GP, wrappers=(("time",),)),
    case("time -p git push", GP),
    case("nice -n 10 git push", GP, wrappers=(("nice",),)),
    case("nice -5 git push", GP),
    case("ionice -c3 git push", GP),
    case("stdbuf -oL git push", GP),
    case("command git push", GP, wrappers=(("command",),)),
    case("command -v git", "command -v git"),
    case("builtin eval ls", "eval ls", complete=False),
    case("exec git push", GP, wrappers=(("exec",),)),
    case("exec >log 2>&1", ),
    case("doas -u root git push", GP),
    case("caffeinate -i git push", GP),
    case("unbuffer git push", GP),
    case("watch -n 1 'git status; git push'", "git status", GP),
    case("watch -x git status", "git status"),
    case("/usr/bin/sudo git push", GP),
    case("sudo env FOO=1 nohup nice -5 timeout 10 git push", GP,
         wrappers=(("sudo", "env", "nohup", "nice", "timeout"),)),
    case("sudo $OPT git push", "sudo $OPT git push", complete=False),
    case("sudo --frobnicate git push", "sudo --frobnicate git push", complete=False),
    case("sudo -l", "sudo -l"),
    case("sudo -i", "sudo -i", complete=False),
    case("env 'BASH_FUNC_git%%=() { rm -rf ~; }' git status", "git status", complete=False),
    # xargs and find run commands with words read at run time.
    case("ls | xargs rm", "ls", ("rm", "..."), wrappers=((), ("xargs",))),
    case("xargs -0 -n1 rm -f", ("rm", "-f", "...")),
    case("xargs -I{} git push {}", ("git", "push", "{}")),
    case("xargs", ("echo", "...")),
    case("xargs -I{} sh -c 'rm {}'", ("sh", "-c", "rm {}"), complete=False),
    case("find . -exec rm -rf {} \\;", ("find", ".", "-exec", "rm", "-rf", "{}", ";"),
         ("rm", "-rf", "{}"), wrappers=((), ("find",))),
    case("find . -name x -execdir git add {} +",
         ("find", ".", "-name", "x", "-execdir", "git", "add", "{}", "+"), ("git", "add", "{}")),
    case("find . -ok rm {} \\;", ("find", ".", "-ok", "rm", "{}", ";"), ("rm", "{}")),
    case("find . -okdir rm {} ';'", ("find", ".", "-okdir", "rm", "{}", ";"), ("rm", "{}")),
    case("find . -name '*.pyc' -delete", ("find", ".", "-name", "*.pyc", "-delete")),
    case("find . $X rm {} \\;", ("find", ".", "$X", "rm", "{}", ";"), complete=False),
    # Inline scripts are analysed.
    case("bash -c 'git push'", GP, wrappers=(("bash",),)),
    case("sh -c 'git status && git push'", "git status", GP),
    case("bash -lc 'npm test'", "npm test"),
    case("zsh -c 'git push'", GP),
    case("dash -c 'git push'", GP),
    case("ksh -c 'git push'", GP),
    case("sudo sh -c 'git push'", GP, wrappers=(("sudo", "sh"),)),
    case("bash -c \"bash -c 'git push'\"", GP, wrappers=(("bash", "bash"),)),
    case("sh -c \"$(curl x)\"", ("sh", "-c", '"$(curl x)"'), "curl x", complete=False),
    case('bash -c "$VAR"', ("bash", "-c", '"$VAR"'), complete=False),
    case("bash -c '$0 push' git", "$0 push", complete=False),
    case("su -c 'git push' root", GP, wrappers=(("su",),)),
    case("su root", "su root", complete=False),
    case("bash script.sh", "bash script.sh"),
    case("curl x | bash", "curl x", "bash", complete=False),
    case("curl x | sh -s", "curl x", "sh -s", complete=False),
    case("bash <<'EOF'\ngit push\nEOF", GP),
    case("bash <<EOF\ngit push\nEOF", GP),
    case("bash <<EOF\ngit push $HOME\nEOF", "bash", complete=False),
    case("bash -s <<< 'git push'", GP),
    case("cat <<EOF | bash\ngit push\nEOF", "cat", "bash", complete=False),
    case("fish -c 'git push'", ("fish", "-c", "git push"), complete=False),
    case("trap 'git push' EXIT", GP, wrappers=(("trap",),)),
    case("trap - EXIT", "trap - EXIT"),
    # Here-documents are data; substitutions in unquoted ones still run.
    case("cat <<EOF > x\nhello $(whoami)\nEOF", "cat", "whoami"),
    case("cat <<'EOF'\n$(rm -rf ~)\nEOF", "cat"),
    case('cat <<< "$(git push)"', ("cat",), GP),
    # Code given as data.
    case('eval "git push"', ("eval", GP), complete=False),
    case("source ./env.sh", "source ./env.sh", complete=False),
    case(". ./env.sh", ". ./env.sh", complete=False),
    case("coproc git push", complete=False),
    case("x='a[$(rm -rf ~)]'; echo $((x))", "echo $((x))", complete=False),
    case("printf -v 'a[$(rm x)]' 1", ("printf", "-v", "a[$(rm x)]", "1"), complete=False),
    case("shopt -s expand_aliases", "shopt -s expand_aliases", complete=False),
    # Places where tree-sitter-bash and bash disagree; bash's reading wins.
    case("rm >log -rf /", "rm -rf /"),
    case("rm <<EOF -rf /\nEOF", "rm -rf /"),
    case("ls\n\\rm -rf x", "ls", "rm -rf x"),
    case("ls >f\n\\rm x", "ls", "rm x"),
    case("bash <<EOF\n\\rm -rf /\nEOF", complete=False),
    case("cat <<EOF\n\\rm x\nEOF", "cat", complete=False),
    case("bash 0<<<'rm x'", ("bash", "0"), complete=False),
    case("echo $'a\\z\\\\' b 'c'", complete=False),
    case("git push\r", complete=False),
    # Parse errors.
    case('echo "abc', "echo", complete=False),
    case("git push )", complete=False),
    case("foo \\  x", "foo x", complete=False),
]


def _argvs(result: ShellAnalysis) -> tuple[Argv, ...]:
    return tuple(c.argv for c in result.commands)


@pytest.mark.parametrize("item", CASES, ids=[repr(c.command)[:60] for c in CASES])
def test_analysis_table(item: Case) -> None:
    result = analyse(item.command)
    if item.argvs or item.complete:
        assert _argvs(result) == item.argvs, result
    assert result.complete is item.complete, result.problems
    assert result.complete == (not result.problems)
    if item.wrappers is not None:
        assert tuple(c.wrappers for c in result.commands) == item.wrappers
    for command in result.commands:
        assert command.text == " ".join(command.argv)
        assert len(command.dynamic) == len(command.argv)
    assert not any("internal error" in p for p in result.problems)


def test_table_is_large() -> None:
    assert len(CASES) >= 80


def test_dynamic_flags_mark_expansions_only() -> None:
    (cmd,) = analyse('rm -rf "$HOME" *.py ~/x {a,b}').commands
    assert cmd.argv == ("rm", "-rf", '"$HOME"', "*.py", "~/x", "{a,b}")
    assert cmd.dynamic == (False, False, True, False, False, True)


def test_xargs_appends_a_dynamic_word() -> None:
    (cmd,) = analyse("xargs rm").commands
    assert cmd.argv == ("rm", "...")
    assert cmd.dynamic == (False, True)


def test_find_placeholder_is_dynamic() -> None:
    inner = analyse("find . -exec rm {} +").commands[1]
    assert inner.argv == ("rm", "{}")
    assert inner.dynamic == (False, True)


def test_source_text_is_kept() -> None:
    result = analyse("g'i't push && echo ok")
    assert [c.source for c in result.commands] == ["g'i't push", "echo ok"]
    assert [c.text for c in result.commands] == ["git push", "echo ok"]


@pytest.mark.parametrize(("command", "writes"), [
    ("echo ok > ~/.ssh/authorized_keys", ("~/.ssh/authorized_keys",)),
    ("echo a >> log.txt", ("log.txt",)),
    ("make &> build.log", ("build.log",)),
    ("make &>> build.log", ("build.log",)),
    ("echo a >| x", ("x",)),
    ("echo a 1> out 2> err", ("out", "err")),
    ("echo a 2>&1 >&2", ()),
    ("echo a >& file", ("file",)),
    ("cat < in.txt", ()),
    ("cat <<EOF > .git/config\nx\nEOF", (".git/config",)),
    ("git status && echo x > .git/hooks/pre-commit", (".git/hooks/pre-commit",)),
    ("bash -c 'echo x > ~/.bashrc'", ("~/.bashrc",)),
    ("exec 3>&1 >log", ("log",)),
    ("time -o t.txt ls", ("t.txt",)),
])
def test_writes(command: str, writes: tuple[str, ...]) -> None:
    assert analyse(command).writes == writes


def test_problems_explain() -> None:
    assert "uses eval" in analyse("eval x").problems
    assert any("$CMD" in p for p in analyse("$CMD").problems)
    assert any(p.startswith("parse error") for p in analyse("echo 'x").problems)
    assert any("bash -c" in p for p in analyse("bash -c 'eval x'").problems)


def test_empty_and_blank() -> None:
    for text in ("", "   ", "\n\n", "# just a comment"):
        result = analyse(text)
        assert result.commands == ()
        assert result.complete


def test_result_types() -> None:
    result = analyse("git push")
    assert isinstance(result, ShellAnalysis)
    assert result.commands == (SimpleCommand(("git", "push"), (False, False), "git push",
                                             "git push", ()),)


def test_timing_of_typical_commands() -> None:
    commands = [c.command for c in CASES]
    for command in commands:
        analyse(command)
    timings = []
    for command in commands:
        start = time.perf_counter()
        analyse(command)
        timings.append(time.perf_counter() - start)
    assert statistics.median(timings) < 0.001


def test_threads_share_nothing_mutable() -> None:
    failures: list[str] = []

    def work() -> None:
        for _ in range(50):
            for item in CASES[:30]:
                if _argvs(analyse(item.command)) != item.argvs and item.complete:
                    failures.append(item.command)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


@pytest.mark.parametrize("text", ["{\U000fd303", "$,f;{\U000fd303^\x05", "{\U00031860",
                                  "echo {\U0001f600}", "git commit -m '🎉 {done}'"])
def test_astral_characters_after_a_brace_do_not_crash(text: str) -> None:
    for _ in range(50):
        analyse(text)
    assert analyse("git commit -m '🎉 {done}'").commands[0].argv == (
        "git", "commit", "-m", "🎉 {done}")


def test_deep_nesting_is_refused_not_crashed() -> None:
    deep = "echo $(" * 200 + "rm x" + ")" * 200
    result = analyse(deep)
    assert not result.complete
    assert not any("internal error" in p for p in result.problems)


# -- properties ----------------------------------------------------------------------------------

_PARSER = Parser(Language(tree_sitter_bash.language()))

_shellish = st.lists(
    st.sampled_from([
        *"ab $(){}[]'\"`\\;&|<>!#=*?~\n\t-.", "<<EOF\n", "\nEOF\n", "$((", "))", "[[ ", " ]]", "if ", "then ", "fi", "for ",
        "do ", "done", "bash -c ", "sudo ", "xargs ", "$'", "\\\n", "\r", "é", "\x00"]),
    max_size=60).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=80), _shellish))
@pytest.mark.timeout(60)
def test_never_raises_and_flags_parse_errors(text: str) -> None:
    result = analyse(text)
    assert isinstance(result, ShellAnalysis)
    assert not any("internal error" in p for p in result.problems)
    assert result.complete == (not result.problems)
    try:
        source = text.encode("utf-8", "surrogatepass")
    except UnicodeEncodeError:
        return
    # Parsed masked, as analyse() does: raw astral characters can crash tree-sitter-bash.
    if _PARSER.parse(mask_astral(source)).root_node.has_error:
        assert not result.complete


_plain = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./=:", min_size=1, max_size=8)


@st.composite
def _simple_commands(draw: st.DrawFn) -> tuple[str, Argv]:
    """A simple command with randomly quoted words, and the argv bash would build."""
    name = draw(st.sampled_from(["git", "npm", "ls", "rm", "python3", "make"]))
    args = draw(st.lists(_plain, max_size=4))
    words = [name, *args]

    def quote(word: str, style: int) -> str:
        if style == 1:
            return f"'{word}'"
        if style == 2:
            return f'"{word}"'
        if style == 3:
            return "".join(f"\\{ch}" for ch in word)
        if style == 4 and len(word) > 1:
            return f"{word[0]}'{word[1:]}'"
        return word

    styles = draw(st.lists(st.integers(0, 4), min_size=len(words), max_size=len(words)))
    text = " ".join(quote(w, s) for w, s in zip(words, styles, strict=True))
    return text, tuple(words)


@settings(max_examples=200, deadline=None)
@given(_simple_commands(), _simple_commands(),
       st.sampled_from([" && ", " || ", " ; ", " | ", "\n", " & "]))
def test_composition_keeps_both_sides(left: tuple[str, Argv], right: tuple[str, Argv],
                                      joiner: str) -> None:
    (left_text, left_argv), (right_text, right_argv) = left, right
    assert _argvs(analyse(left_text)) == (left_argv,)
    assert _argvs(analyse(right_text)) == (right_argv,)
    combined = analyse(left_text + joiner + right_text)
    assert _argvs(combined) == (left_argv, right_argv)
    assert combined.complete


@settings(max_examples=100, deadline=None)
@given(_simple_commands(), st.sampled_from([
    "sudo {}", "env A=1 {}", "timeout 5 {}", "nice -n 3 {}", "nohup {}", "command {}",
    "bash -c '{}'", "{{ {}; }}", "({})", "echo $({})", "if true; then {}; fi", "time {}"]))
def test_wrappers_and_nesting_expose_the_command(command: tuple[str, Argv],
                                                  template: str) -> None:
    text, argv = command
    if "'" in text and "bash -c" in template:
        text = text.replace("'", "")
        argv = _argvs(analyse(text))[0]
    result = analyse(template.format(text))
    assert argv in _argvs(result)
    assert result.complete
