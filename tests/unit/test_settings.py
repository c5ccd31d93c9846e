"""Settings files: where they are, their precedence, rule lines, and every problem reported."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_ext.settings import load_settings, read_settings_file, user_config_dir


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "AGENT_EXT_CONFIG_DIR": str(tmp_path / "config")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_no_files_means_empty_settings_without_problems(project: Path, env: dict[str, str]) -> None:
    s = load_settings(project, environ=env)
    assert s.sources == ()
    assert s.problems == ()
    assert s.model is None
    assert s.permission_rules("allow") == []
    assert [p.name for p in s.searched] == ["settings.local.json", "settings.json", "settings.json"]


def test_precedence_is_local_then_project_then_user(project: Path, env: dict[str, str]) -> None:
    user = write(Path(env["AGENT_EXT_CONFIG_DIR"]) / "settings.json", '{"model": "user-m"}')
    proj = write(project / ".agent_ext/settings.json", '{"model": "proj-m"}')
    local = write(project / ".agent_ext/settings.local.json", '{"model": "local-m"}')

    s = load_settings(project, environ=env)
    assert [(f.scope, f.path) for f in s.sources] == [
        ("project local", local), ("project", proj), ("user", user)]
    assert s.model == ("local-m", local)
    local.unlink()
    assert load_settings(project, environ=env).model == ("proj-m", proj)
    proj.unlink()
    assert load_settings(project, environ=env).model == ("user-m", user)


def test_user_dir_comes_from_agent_ext_config_dir(tmp_path: Path, project: Path) -> None:
    custom = write(tmp_path / "elsewhere/settings.json", '{"model": "custom"}')
    write(tmp_path / "home/.agent_ext/settings.json", '{"model": "home"}')
    s = load_settings(project, environ={"HOME": str(tmp_path / "home"),
                                        "AGENT_EXT_CONFIG_DIR": str(tmp_path / "elsewhere")})
    assert s.model == ("custom", custom)


def test_user_dir_defaults_to_home_and_expands_tilde(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert user_config_dir({"HOME": str(home)}) == home / ".agent_ext"
    assert user_config_dir({"HOME": str(home), "AGENT_EXT_CONFIG_DIR": "~/cfg"}) == home / "cfg"
    assert user_config_dir({"HOME": str(home), "AGENT_EXT_CONFIG_DIR": "  "}) == home / ".agent_ext"


def test_default_environment_is_the_process_environment(project: Path) -> None:
    user = write(Path(os.environ["AGENT_EXT_CONFIG_DIR"]) / "settings.json", '{"model": "x"}')
    assert load_settings(project).model == ("x", user)


def test_project_in_home_reads_the_shared_file_once_as_user(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = write(home / ".agent_ext/settings.json", '{"model": "m"}')
    s = load_settings(home, environ={"HOME": str(home)})
    assert [(f.scope, f.path) for f in s.sources] == [("user", path)]


def test_malformed_json_is_reported_with_file_line_column_and_others_apply(
        project: Path, env: dict[str, str]) -> None:
    user = write(Path(env["AGENT_EXT_CONFIG_DIR"]) / "settings.json",
                 '{"model": "user-m", "permissions": {"allow": ["Read"]}}')
    broken = write(project / ".agent_ext/settings.json",
                   '{\n  "model": "proj-m",\n  "permissions": {"allow": ["Bash(ls)",]}\n}\n')
    local = write(project / ".agent_ext/settings.local.json", '{"permissions": {"deny": ["Bash(rm:*)"]}}')

    s = load_settings(project, environ=env)
    (problem,) = s.problems
    assert problem.startswith(f"{broken}:3:")
    line, col = problem[len(str(broken)) + 1:].split(":")[:2]
    assert (int(line), int(col)) == (3, 40)  # the "]" after the trailing comma
    assert "not valid JSON" in problem
    assert "ignored until it is fixed" in problem
    assert s.model == ("user-m", user)
    assert s.permission_rules("allow") == [("Read", user, 1)]
    assert s.permission_rules("deny") == [("Bash(rm:*)", local, 1)]


@pytest.mark.parametrize(("content", "expected"), [
    (b"[1, 2]", "must be a JSON object"),
    (b'"model"', "must be a JSON object"),
    (b'{"model": "\xff"}', "is not UTF-8 text"),
])
def test_unusable_files_are_reported(project: Path, env: dict[str, str], content: bytes,
                                     expected: str) -> None:
    path = write(project / ".agent_ext/settings.json", content)
    (problem,) = load_settings(project, environ=env).problems
    assert problem.startswith(str(path))
    assert expected in problem


def test_unreadable_file_is_reported(project: Path, env: dict[str, str]) -> None:
    path = project / ".agent_ext/settings.json"
    path.mkdir(parents=True)
    (problem,) = load_settings(project, environ=env).problems
    assert problem.startswith(f"{path}: cannot be read")


def test_empty_file_and_byte_order_mark_are_fine(project: Path, env: dict[str, str]) -> None:
    write(project / ".agent_ext/settings.local.json", "  \n")
    write(project / ".agent_ext/settings.json", '\ufeff{"model": "m"}')
    s = load_settings(project, environ=env)
    assert s.problems == ()
    assert s.model is not None
    assert s.model[0] == "m"


def test_rules_carry_their_file_and_line(project: Path, env: dict[str, str]) -> None:
    text = (
        '{\n'
        '  "model": "m",\n'
        '  "notes": ["Bash(git status)"],\n'
        '  "permissions": {\n'
        '    "deny": ["Bash(git status)"],\n'
        '    "allow": [\n'
        '      "Bash(git status)",\n'
        '      "Read(src/**)",\n'
        '      "Bash(git status)",\n'
        '      "Edit(caf\\u00e9.py)",\n'
        '      "Bash(echo \\"hi\\")"\n'
        '    ],\n'
        '    "ask": []\n'
        '  }\n'
        '}\n'
    )
    path = write(project / ".agent_ext/settings.json", text)
    user = write(Path(env["AGENT_EXT_CONFIG_DIR"]) / "settings.json",
                 json.dumps({"permissions": {"allow": ["WebFetch"]}}, indent=2))
    s = load_settings(project, environ=env)
    assert s.problems == ()
    assert s.permission_rules("allow") == [
        ("Bash(git status)", path, 7),
        ("Read(src/**)", path, 8),
        ("Bash(git status)", path, 9),
        ("Edit(café.py)", path, 10),
        ('Bash(echo "hi")', path, 11),
        ("WebFetch", user, 4),
    ]
    assert s.permission_rules("deny") == [("Bash(git status)", path, 5)]
    assert s.permission_rules("ask") == []


def test_unknown_rule_kind_is_refused(project: Path, env: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="allow, deny, ask"):
        load_settings(project, environ=env).permission_rules("maybe")


def test_wrong_types_are_reported_and_skipped(project: Path, env: dict[str, str]) -> None:
    text = (
        '{\n'
        '  "model": 5,\n'
        '  "mcpServers": [],\n'
        '  "permissions": {\n'
        '    "allow": ["Read", 7],\n'
        '    "deny": "Bash",\n'
        '    "defaultMode": true\n'
        '  }\n'
        '}\n'
    )
    path = write(project / ".agent_ext/settings.json", text)
    user = write(Path(env["AGENT_EXT_CONFIG_DIR"]) / "settings.json", '{"model": "user-m"}')
    s = load_settings(project, environ=env)
    assert sorted(s.problems) == sorted([
        f'{path}:2: "model" must be a model name such as "openai:gpt-4o"; it is ignored.',
        f'{path}:3: "mcpServers" must be an object of servers; it is ignored.',
        f'{path}:5: "permissions.allow" entry 7 is not a string; it is ignored.',
        f'{path}:6: "permissions.deny" must be a list of strings; it is ignored.',
        f'{path}:7: "permissions.defaultMode" must be a string; it is ignored.',
    ])
    assert s.model == ("user-m", user)
    assert s.permission_rules("allow") == [("Read", path, 5)]
    assert s.permission_rules("deny") == []
    assert s.default_mode is None


def test_permissions_must_be_an_object(project: Path, env: dict[str, str]) -> None:
    path = write(project / ".agent_ext/settings.json", '{"permissions": ["Read"]}')
    s = load_settings(project, environ=env)
    expected = (f'{path}:1: "permissions" must be an object with allow, deny and ask lists; '
                "it is ignored.")
    assert s.problems == (expected,)
    assert s.permission_rules("allow") == []


def test_unknown_keys_are_kept_and_merged_helpers_follow_precedence(
        project: Path, env: dict[str, str]) -> None:
    user = write(Path(env["AGENT_EXT_CONFIG_DIR"]) / "settings.json", json.dumps({
        "hooks": {"PreToolUse": []},
        "permissions": {"defaultMode": "default", "additionalDirectories": ["/data"]},
        "mcpServers": {"git": {"command": "git-mcp"}, "web": {"url": "http://x"}},
    }))
    proj = write(project / ".agent_ext/settings.json", json.dumps({
        "statusLine": "short",
        "permissions": {"defaultMode": "acceptEdits", "additionalDirectories": ["../lib"]},
        "mcpServers": {"git": {"command": "git-mcp", "args": ["--repo", "."]}},
    }))
    s = load_settings(project, environ=env)
    assert s.problems == ()
    assert s.get("hooks") == {"PreToolUse": []}
    assert s.get("statusLine") == "short"
    assert s.get("missing", 3) == 3
    assert s.sources[0].data["statusLine"] == "short"
    assert s.default_mode == ("acceptEdits", proj)
    assert s.additional_directories == [("../lib", proj), ("/data", user)]
    assert s.mcp_servers == {"git": ({"command": "git-mcp", "args": ["--repo", "."]}, proj),
                             "web": ({"url": "http://x"}, user)}


def test_read_settings_file_never_raises_for_missing_file(tmp_path: Path) -> None:
    f = read_settings_file(tmp_path / "nope.json", "user")
    assert f.data == {}
    assert f.scope == "user"
    assert "cannot be read" in f.problems[0]
