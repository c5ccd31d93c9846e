"""The pieces of shell path analysis: word expansion, the program table, sed scripts, git,
deny-side option matching, folder checks and "always allow" prefixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ext.permissions import Rule, parse_rule
from agent_ext.permissions._effects import Arg
from agent_ext.permissions._git import config_runs_code
from agent_ext.permissions._sed_script import sed_effects
from agent_ext.permissions._shell_expand import (
    MAX_MATCHES,
    Unknown,
    braces,
    expand_word,
    home_is_known,
    tokens,
)
from agent_ext.permissions._shell_options import option_hit, option_set, strip_globals
from agent_ext.permissions.names import command_prefix, command_rules
from agent_ext.permissions.paths import compile_path
from agent_ext.permissions.programs import effects
from agent_ext.permissions.rules import DYNAMIC
from agent_ext.permissions.shell import analyse
from agent_ext.permissions.shell_paths import folders_of
from agent_ext.permissions.shell_rules import could_hold, holds, spec_shape
from agent_ext.permissions.tiers import shell_view


def rule(text: str, kind: str = "deny") -> Rule:
    found = parse_rule(text, kind)  # type: ignore[arg-type]
    assert isinstance(found, Rule), found
    return found


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for path in ("secrets/key.txt", "src/a.py", "src/b.py", "home/.ssh/id_rsa"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    return tmp_path.resolve()


# -- word expansion -----------------------------------------------------------------------------

def test_home_is_known_unless_the_command_names_it() -> None:
    assert home_is_known("cat $HOME/x ${HOME}/y ~/z")
    for command in ("HOME=/x cat ~/k", "export HOME=/x; cat ~", "read HOME", "for HOME in a"):
        assert not home_is_known(command)


def test_words_expand_like_bash(tree: Path) -> None:
    home, here = str(tree / "home"), (str(tree),)
    ssh = str(tree / "home/.ssh/id_rsa")
    assert expand_word("~/.ss?/id_rsa", here, home).paths == (ssh,)
    assert ssh in expand_word("~/.{ssh,x}/id_rsa", here, home).paths
    for word in ("$HOME/.ssh/id_rsa", "${HOME}/.ssh/id_rsa", "\"$HOME\"/.ssh/id_rsa"):
        assert expand_word(word, here, home).paths == (ssh,)
    assert expand_word("src/*.py", here, home).paths == (str(tree / "src/a.py"),
                                                         str(tree / "src/b.py"))
    assert expand_word("'src/*.py'", here, home).paths == (str(tree / "src/*.py"),)
    assert expand_word("a{1..3}", here, home).paths == tuple(str(tree / f"a{i}") for i in (1, 2, 3))


def test_what_cannot_be_known_is_unknown(tree: Path) -> None:
    here = (str(tree),)
    for word in ("$x/key", "$(echo s)/key", "`echo s`/key", "${x:-s}/key", "~nobody_x/k"):
        assert expand_word(word, here, str(tree)).unknown == (Unknown(word, None),)
    assert expand_word("$HOME/k", here, None).unknown
    assert expand_word("key", (), None).unknown == (Unknown("key", None),)
    assert expand_word("/abs/key", (), None).paths == ("/abs/key",)


def test_a_glob_that_matches_nothing_stays_within_its_folder(tree: Path) -> None:
    found = expand_word("secrets/nothing*", (str(tree),), None)
    assert found.unknown == (Unknown("secrets/nothing*", str(tree / "secrets")),)
    assert expand_word("secret?/../../x", (str(tree),), None).unknown[0].within is None


def test_expansion_is_bounded(tree: Path) -> None:
    words = braces(tokens("{" + ",".join(map(str, range(MAX_MATCHES + 1))) + "}", None) or [])
    assert words is None
    assert expand_word("x{1.." + str(MAX_MATCHES * 2) + "}", (str(tree),), None).unknown


def test_cd_targets_become_folders(tree: Path) -> None:
    def folders(command: str) -> tuple[str, ...]:
        return folders_of(analyse(command).commands, str(tree), str(tree / "home"))

    assert folders("cd src && ls") == (str(tree), str(tree / "src"))
    assert folders("cd && ls") == (str(tree), str(tree / "home"))
    assert folders("cd ~ && ls") == (str(tree), str(tree / "home"))
    for command in ("cd $D && ls", "cd - && ls", "popd", "cd $(pwd)/x", "pushd +1", "pushd",
                    "pushd -2"):
        assert folders(command) == ()


# -- the program table ---------------------------------------------------------------------

@pytest.mark.parametrize(("command", "reads", "writes", "recursive", "runs"), [
    ("sort -o out in", ["in"], ["out"], [], False),
    ("dd if=key of=out bs=1", ["key"], ["out"], [], False),
    ("tee a b", [], ["a", "b"], [], False),
    ("gzip f", ["f"], ["f"], [], False),
    ("gzip -c f", ["f"], [], [], False),
    ("grep -r TOKEN .", [], [], ["."], False),
    ("grep -e x -f pats file", ["pats", "file"], [], [], False),
    ("grep TOKEN file", ["file"], [], [], False),
    ("rg TOKEN", [], [], ["."], False),
    ("rg --pre cat TOKEN", [], [], ["."], True),
    ("cp -r src dst", [], [], ["src"], False),
    ("cp a b", ["a"], ["b"], [], False),
    ("tar -czf out.tgz dir", [], ["out.tgz"], ["dir"], False),
    ("tar czf out.tgz dir", [], ["out.tgz"], ["dir"], False),
    ("find . -fprint f", [], ["f"], ["."], False),
    ("sed -n p f", ["f"], [], [], False),
    ("sed -i s/a/b/ f", ["f"], ["f"], [], False),
    ("sed -n 'w out' f", ["f"], ["out"], [], False),
    ("sed -n 'e id' f", ["f"], [], [], True),
    ("sed --sandbox 'e id' f", ["f"], [], [], False),
    ("awk '{print $1}' f", ["f"], [], [], False),
    ("awk 'BEGIN{system(\"id\")}'", [], [], [], True),
    ("awk -v x=1 '{print}' a=b f", ["f"], [], [], False),
    ("curl -o out https://x", [], ["out"], [], False),
    ("curl -d @body https://x", ["body"], [], [], False),
    ("chmod 755 f", [], ["f"], [], False),
    ("uniq in out", ["in"], ["out"], [], False),
    ("less +!id f", ["f"], [], [], True),
    ("vim f", [], ["f"], [], True),
    ("flock /tmp/l rm x", [], [], [], True),
    ("cat a b", ["a", "b"], [], [], False),
])
def test_program_table(command: str, reads: list[str], writes: list[str],
                       recursive: list[str], runs: bool) -> None:
    simple = analyse(command).commands[0]
    found = effects(simple.argv, simple.dynamic, simple.globbed)
    assert [a.text for a in found.reads] == reads
    assert [a.text for a in found.writes] == writes
    assert [a.text for a in found.recursive_reads] == recursive
    assert bool(found.runs) is runs


def test_unknown_programs_are_best_effort() -> None:
    assert not effects(("frobnicate", "x"), (False, False)).known
    assert effects(("cat", "x"), (False, False)).known


@pytest.mark.parametrize(("command", "repository", "work_tree", "writes", "runs"), [
    ("git status", False, False, [], False),
    ("git log --oneline -5", False, False, [], False),
    ("git log --output=out", False, False, ["out"], False),
    ("git branch", False, False, [], False),
    ("git branch -a", False, False, [], False),
    ("git branch new", True, False, [], False),
    ("git commit -m x", True, False, [], False),
    ("git checkout main", True, True, [], False),
    ("git clean -fdx", True, True, [], False),
    ("git stash -u", True, True, [], False),
    ("git stash list", False, False, [], False),
    ("git config core.pager x", False, False, ["./.git/config"], True),
    ("git config user.name x", False, False, ["./.git/config"], False),
    ("git config --get user.name", False, False, [], False),
    ("git config --global core.pager x", False, False, ["~/.gitconfig"], True),
    ("git -C sub config x y", False, False, ["sub/.git/config"], True),
    ("git log -c core.pager=x", False, False, [], True),
    ("git frobnicate", True, True, [], False),
    ("git -c core.pager=id log", False, False, [], True),
    ("git -c color.ui=always log", False, False, [], False),
    ("git rebase -x id main", True, True, [], True),
    ("git push -u origin main", True, False, [], False),
    ("git submodule foreach id", True, True, [], True),
    ("git checkout -b feature", True, False, [], False),
    ("git checkout -b feature origin/main", True, True, [], False),
    ("git reset HEAD~1", True, False, [], False),
    ("git reset --hard HEAD~1", True, True, [], False),
    ("git restore --staged f", True, False, [], False),
    ("git restore f", True, True, [], False),
    ("git init", True, False, [], False),
    ("git --version", False, False, [], False),
])
def test_git(command: str, repository: bool, work_tree: bool, writes: list[str],
             runs: bool) -> None:
    simple = analyse(command).commands[0]
    found = effects(simple.argv, simple.dynamic, simple.globbed)
    assert bool(found.repositories) is repository
    assert bool(found.recursive_writes) is work_tree
    assert [a.text for a in found.writes] == writes
    assert bool(found.runs) is runs


def test_git_config_keys() -> None:
    assert not config_runs_code("color.ui=always")
    assert not config_runs_code("user.email=a@b")
    for key in ("core.pager=x", "core.sshCommand=x", "alias.x=!id", "diff.external=x",
                "Core.Pager=x", "core.fsmonitor=x", "credential.helper=x"):
        assert config_runs_code(key)


def test_sed_scripts() -> None:
    assert sed_effects("1,5p;s/a/b/g;y/ab/cd/;$!N;/x/d").runs == []
    assert sed_effects("w out").writes == ["out"]
    assert sed_effects("s/a/b/w out").writes == ["out"]
    assert sed_effects("/x/r in").reads == ["in"]
    assert sed_effects("R in").reads == ["in"]
    for script in ("e id", "1e id", "s/a/id/e", "/x/{e id\n}", "k", "s/a"):
        assert sed_effects(script).runs, script


def test_arguments_keep_their_quoting_for_expansion() -> None:
    assert Arg("a b").source() == "a\\ b"
    assert Arg("*.py", globbed=True).source() == "*.py"
    assert Arg("*.py").source() == "\\*.py"
    assert Arg("~/x").source() == "~/x"
    assert Arg("'q'", raw=True).source() == "'q'"


# -- deny rules and options -------------------------------------------------------------------

def test_global_options_are_removed() -> None:
    assert strip_globals(["git", "-C", ".", "--no-pager", "-c", "a=b", "push"]) == [
        "git", "push"]
    assert strip_globals(["git", "--git-dir=.git", "push"]) == ["git", "push"]
    assert strip_globals(["kubectl", "-n", "prod", "delete", "pod"]) == [
        "kubectl", "delete", "pod"]
    assert strip_globals(["cargo", "+nightly", "publish"]) == ["cargo", "publish"]
    assert strip_globals(["ls", "-la"]) == ["ls", "-la"]
    assert strip_globals(["git", DYNAMIC, "push"]) == ["git", DYNAMIC, "push"]


def test_options_compare_as_sets() -> None:
    assert option_set("rm", ["-rf"]) == option_set("rm", ["--recursive", "--force"]) == {
        "-r", "-f"}
    assert option_set("rm", ["-R"]) == {"-r"}
    deny = rule("Bash(rm -rf *)")
    for argv in (["rm", "-fr", "x"], ["rm", "-r", "x", "-f"], ["rm", "--force", "-R", "x"],
                 ["rm", DYNAMIC, "x"]):
        assert option_hit(deny, argv), argv
    assert not option_hit(deny, ["rm", "-r", "x"])
    assert not option_hit(deny, ["ls", "-rf"])
    assert option_hit(rule("Bash(git push --force *)"), ["git", "-C", ".", "push", "-f", "o"])
    assert not option_hit(rule("Bash(git push *)"), ["git", "push"])  # no options: literal


def test_allow_rules_stay_literal(tmp_path: Path) -> None:
    view = shell_view("rm -fr x", str(tmp_path))
    assert not view.commands[0].allowed_by(rule("Bash(rm -rf *)", "allow"))
    assert view.commands[0].hit_by(rule("Bash(rm -rf *)"))
    git = shell_view("git -C . push", str(tmp_path)).commands[0]
    assert not git.allowed_by(rule("Bash(git push *)", "allow"))
    assert git.hit_by(rule("Bash(git push *)"))


# -- folders and path rules -------------------------------------------------------------------

def test_folders_hold_what_a_rule_names(tree: Path) -> None:
    home, root = str(tree / "home"), str(tree)

    def check(spec: str, folder: str, *, walk: bool = False) -> bool:
        pattern = compile_path(spec, project=root, cwd=root, home=home)
        shape = spec_shape(spec, project=root, cwd=root, home=home)
        return (holds if walk else could_hold)(pattern, shape, folder)

    assert check("./secrets/**", root)
    assert check("./secrets/**", str(tree / "secrets/sub"))
    assert not check("./secrets/**", str(tree / "src"))
    assert check("*.env", str(tree / "src"))
    assert not check("*.env", str(tree / "src"), walk=True)
    (tree / "src/.env").write_text("x")
    assert check("*.env", str(tree / "src"), walk=True)
    assert not check("secrets/*.txt", str(tree / "secrets/sub"))
    assert check("~/.ssh/**", home)


def test_a_walk_past_its_limit_counts_as_holding(tree: Path, monkeypatch: pytest.MonkeyPatch
                                                 ) -> None:
    import agent_ext.permissions.shell_rules as shell_rules

    monkeypatch.setattr(shell_rules, "MAX_WALK", 1)
    root = str(tree)
    pattern = compile_path("*.env", project=root, cwd=root, home=root)
    shape = spec_shape("*.env", project=root, cwd=root, home=root)
    assert holds(pattern, shape, str(tree / "src"))


def test_the_view_says_what_others_rely_on(tree: Path) -> None:
    root = str(tree)
    view = shell_view("cat < secrets/key.txt; git commit -m x; echo > /dev/tcp/h/1", root)
    assert str(tree / "secrets/key.txt") in view.read_paths
    assert view.repo_writes == (str(tree / ".git"),)
    assert view.network
    assert not view.unknown
    assert shell_view("cat $x", root).unknown
    assert shell_view("echo x > $F", root).dynamic_writes
    assert str(tree / "f") in shell_view("sort -o f x", root).written_arguments


# -- "always allow" -----------------------------------------------------------------------------

def test_always_allow_also_covers_the_files_a_command_writes(tmp_path: Path) -> None:
    from agent_ext.permissions.names import shell_rules_for

    root = str(tmp_path.resolve())
    assert shell_rules_for("sort -o out.txt in.txt 2>/dev/null", root, root) == [
        "Bash(sort -o out.txt in.txt)", "Edit(/out.txt)"]
    assert shell_rules_for("echo x > $F", root, root) == ["Bash(echo x *)"]


@pytest.mark.parametrize(("command", "words"), [
    ("python3 -m pytest -q", ["python3", "-m", "pytest"]),
    ("git --no-pager log --oneline", ["git", "--no-pager", "log"]),
    ("git -C /p status", ["git", "-C", "/p", "status"]),
    ("git push origin main", ["git", "push"]),
    ("git stash list", ["git", "stash", "list"]),
    ("npm run test -- --watch=false", ["npm", "run", "test"]),
    ("kubectl get pods -n x", ["kubectl", "get", "pods"]),
    ("ls -la", ["ls"]),
    ("pytest tests/x.py", ["pytest"]),
    ("make test", ["make", "test"]),
])
def test_always_allow_stops_at_the_first_varying_word(command: str, words: list[str]) -> None:
    simple = analyse(command).commands[0]
    assert command_prefix(simple.argv, simple.dynamic) == words


@pytest.mark.parametrize("command", [
    "python3 -m pytest -q", "git --no-pager log --oneline", "npm run test -- --watch=false",
    "git -C . status", "cargo +nightly test", "docker compose up -d", "make test 2>&1",
    "pytest -q 2>&1 | tail -5", "echo '(x)' *", "git -c color.ui=always log",
])
def test_the_saved_rule_covers_the_call_and_no_less_of_it(tmp_path: Path, command: str) -> None:
    rules = [rule(t, "allow") for t in command_rules(command)]
    view = shell_view(command, str(tmp_path))
    assert all(any(c.allowed_by(r) for r in rules) for c in view.commands)
    assert "Bash(*)" not in command_rules(command)


@pytest.mark.parametrize(("command", "rule"), [
    ("make --version", "Bash(make --version)"), ("ls -la", "Bash(ls -la)"), ("ls", "Bash(ls)"),
    ("npm --version", "Bash(npm --version)"), ("pytest $ARGS", "Bash(pytest *)"),
])
def test_a_command_without_a_subcommand_is_saved_exactly(command: str, rule: str) -> None:
    assert command_rules(command) == [rule]


def test_a_rule_folder_that_does_not_exist_holds_nothing(tree: Path) -> None:
    root = str(tree)
    for spec, held in (("./.env", False), ("./secrets/**", True), ("./secrets/*.pem", False)):
        pattern = compile_path(spec, project=root, cwd=root, home=root)
        assert holds(pattern, spec_shape(spec, project=root, cwd=root, home=root), root) is held


def test_links_below_a_folder_lead_where_they_point(tree: Path, tmp_path_factory:
                                                    pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside").resolve()
    (outside / "passwd").write_text("x")
    (tree / "src" / "lnk").symlink_to(outside, target_is_directory=True)
    root, spec = str(tree), f"//{str(outside).lstrip('/')}/**"
    pattern = compile_path(spec, project=root, cwd=root, home=root)
    assert holds(pattern, spec_shape(spec, project=root, cwd=root, home=root), root)
