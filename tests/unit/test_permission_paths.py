"""Path rules: the four anchors, ``*`` and ``**``, symlinks, ``..``, ``~`` and read_denied."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent_ext.permissions import RulePolicy, Verdict
from agent_ext.permissions.paths import compile_path, inside, real, rule_path
from tests.unit.permission_corpus import call, standins


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for path in ("src/a.py", "src/deep/b.py", "secrets/key", "secrets/sub/k", "docs/x.md"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x")
    return root.resolve()


def matcher(spec: str, project: Path, cwd: Path | None = None) -> Callable[[str | Path], bool]:
    pattern = compile_path(spec, project=str(project), cwd=str(cwd or project),
                           home=str(Path.home()))
    return lambda p: pattern.matches(real(p, project))


@pytest.mark.parametrize(("spec", "path", "expected"), [
    ("/src/a.py", "src/a.py", True),
    ("/src/a.py", "src/deep/a.py", False),
    ("src/a.py", "src/a.py", True),
    ("./src/a.py", "src/a.py", True),
    ("/src/*.py", "src/a.py", True),
    ("/src/*.py", "src/deep/b.py", False),
    ("/src/**/*.py", "src/deep/b.py", True),
    ("/src/**/*.py", "src/a.py", True),
    ("/src/**", "src/deep/b.py", True),
    ("/src/", "src/deep/b.py", True),
    ("/src", "src/deep/b.py", True),
    ("/src", "srcx/a.py", False),
    ("/*/a.py", "src/a.py", True),
    ("/*.py", "src/a.py", False),
    ("*.py", "src/deep/b.py", True),
    ("key", "secrets/key", True),
    ("/key", "secrets/key", False),
    ("secrets/*", "secrets/sub/k", True),
    ("src/?.py", "src/a.py", True),
    ("src/?.py", "src/ab.py", False),
    ("/src/../docs/x.md", "docs/x.md", True),
    ("/", "anything/at/all", True),
])
def test_project_relative_patterns(spec: str, path: str, expected: bool, project: Path) -> None:
    assert matcher(spec, project)(project / path) is expected


def test_absolute_home_and_cwd_anchors(project: Path, tmp_path: Path) -> None:
    home = Path.home()
    (home / "notes").mkdir(parents=True, exist_ok=True)
    assert matcher(f"/{project}/src/**", project)(project / "src/a.py")
    assert matcher("//etc/**", project)("/etc/passwd")
    assert not matcher("//etc/**", project)("/etcx/passwd")
    assert matcher("~/notes/**", project)(home / "notes/a.txt")
    assert matcher("~", project)(home / "x")
    assert not matcher("~/notes/**", project)(project / "notes/a.txt")
    sub = project / "src"
    assert matcher("deep/b.py", project, sub)(project / "src/deep/b.py")
    assert matcher("/src/a.py", project, sub)(project / "src/a.py")


def test_escapes_make_glob_characters_literal(project: Path) -> None:
    (project / "odd*name").write_text("x")
    assert matcher("/odd\\*name", project)(project / "odd*name")
    assert not matcher("/odd\\*name", project)(project / "oddXname")


def test_symlinks_are_resolved_both_ways(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (project / "link").symlink_to(outside, target_is_directory=True)
    (project / "filelink").symlink_to(outside / "secret")
    resolved = real(project / "link/secret", project)
    assert resolved == str(outside.resolve() / "secret")
    assert real(project / "link/new/file.txt", project) == str(outside.resolve() / "new/file.txt")
    assert not inside(resolved, [str(project)])
    assert not matcher("/**", project)(project / "link/secret")
    assert not matcher("/**", project)(project / "filelink")
    assert matcher(f"/{outside}/**", project)(project / "link/secret")
    assert matcher("/link/**", project)(outside / "secret")


def test_dot_dot_and_tilde_tricks(project: Path, tmp_path: Path) -> None:
    policy = RulePolicy(project, rules={"allow": ["Read(/**)"]})
    read = standins()["read_file"]
    for path in ["../../etc/passwd", "src/../../x", "~/../../etc/passwd", "~root/.bashrc",
                 f"{project}/../other/x"]:
        decision = policy.decide(call(read, project, path=path))
        assert decision.verdict is Verdict.ASK, path
        assert "outside the working roots" in decision.reason


def test_a_symlink_escape_is_outside_the_working_roots(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("root")
    (project / "link").symlink_to(outside, target_is_directory=True)
    read, edit = standins()["read_file"], standins()["edit"]
    policy = RulePolicy(project, mode="acceptEdits")
    assert policy.decide(call(read, project, path="link/passwd")).verdict is Verdict.ASK
    assert policy.decide(call(edit, project, path="link/passwd")).verdict is Verdict.ASK
    assert policy.decide(call(edit, project, path="link/new.txt")).verdict is Verdict.ASK
    assert policy.decide(call(edit, project, path="src/a.py")).verdict is Verdict.ALLOW
    denied = RulePolicy(project, rules={"deny": [f"Read(/{outside}/**)"]})
    assert denied.decide(call(read, project, path="link/passwd")).verdict is Verdict.DENY


def test_read_denied_filters_searches_started_above(project: Path) -> None:
    policy = RulePolicy(project, rules={"deny": ["Read(secrets/**)", "Grep(*.md)"]})
    assert policy.read_denied(project / "secrets/key")
    assert policy.read_denied(project / "secrets/sub/k")
    assert policy.read_denied(project / "secrets")
    assert policy.read_denied("secrets/key")
    assert not policy.read_denied(project / "src/a.py")
    assert not policy.read_denied(project / "docs/x.md")
    assert policy.read_denied(project / "docs/x.md", tool="grep")
    assert not policy.read_denied(project / "docs/x.md", tool="glob")
    tools = standins()
    for name in ("grep", "glob", "ls"):
        above = policy.decide(call(tools[name], project, path="."))
        assert above.verdict is Verdict.ALLOW
        at = policy.decide(call(tools[name], project, path="secrets"))
        assert at.verdict is Verdict.DENY
        within = policy.decide(call(tools[name], project, path="secrets/sub"))
        assert within.verdict is Verdict.DENY
    everything = RulePolicy(project, rules={"deny": ["Read"]})
    assert everything.read_denied(project / "src/a.py")


def test_read_denied_sees_through_symlinks(project: Path, tmp_path: Path) -> None:
    (project / "alias").symlink_to(project / "secrets", target_is_directory=True)
    policy = RulePolicy(project, rules={"deny": ["Read(/secrets/**)"]})
    assert policy.read_denied(project / "alias/key")
    assert policy.decide(call(standins()["read_file"], project, path="alias/key")).verdict is \
        Verdict.DENY


def test_working_roots_include_additional_directories(project: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "f").write_text("x")
    read = standins()["read_file"]
    assert RulePolicy(project).decide(call(read, project, path=str(extra / "f"))).verdict is \
        Verdict.ASK
    policy = RulePolicy(project, additional_directories=[extra])
    assert policy.decide(call(read, project, path=str(extra / "f"))).verdict is Verdict.ALLOW
    later = RulePolicy(project)
    later.add_directory(extra)
    assert later.decide(call(read, project, path=str(extra / "f"))).verdict is Verdict.ALLOW
    assert str(extra.resolve()) in later.roots


def test_rule_path_derivation(project: Path) -> None:
    root = str(project)
    assert rule_path(f"{root}/src/a.py", root) == "/src/a.py"
    assert rule_path(f"{root}/src", root, directory=True) == "/src/**"
    assert rule_path("/etc/hosts", root) == "//etc/hosts"
    assert rule_path("/etc", root, directory=True) == "//etc/**"
    assert rule_path(f"{root}/we(ir)d*.txt", root) == "/we\\(ir\\)d\\*.txt"
    assert rule_path(root + "x/a", root) == f"/{root}x/a"


def test_dot_dot_after_a_symlink_is_taken_physically(project: Path, tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "inner").mkdir(parents=True)
    (outer / "x").write_text("x")
    (project / "link").symlink_to(outer / "inner", target_is_directory=True)
    assert real("link/../x", project) == str(outer.resolve() / "x")
    policy = RulePolicy(project, rules={"deny": [f"Read(/{outer}/**)"], "allow": ["Bash"]})
    shell = standins()["shell"]
    assert policy.decide(call(shell, project, command="cat link/../x")).verdict is Verdict.DENY
