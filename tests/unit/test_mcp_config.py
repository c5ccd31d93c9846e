"""MCP server entries: parsing, interpolation, masking, precedence, problems and persistence."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from agent_ext.mcp import McpConfigError, add_server, load_mcp_config, parse_server, remove_server
from agent_ext.mcp.config import EntryError
from agent_ext.mcp.interpolate import Masker, expand


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_expand_variables_and_defaults() -> None:
    env = {"A": "alpha", "EMPTY": ""}
    assert expand("x-${A}-y", env).text == "x-alpha-y"
    assert expand("${B:-fallback}", env).text == "fallback"
    assert expand("${EMPTY:-dflt}", env).text == "dflt"
    done = expand("${A} ${MISSING}", env)
    assert done.missing == ["MISSING"] and done.secrets == {"alpha"}
    assert expand("$A and ${not valid}", env).text == "$A and ${not valid}"


def test_masker_hides_secrets_and_url_passwords() -> None:
    mask = Masker(["s3cr3t-value", "ab"])
    assert mask("token=s3cr3t-value; ab") == "token=***; ab"
    assert mask("https://user:pw@host/x") == "https://user:***@host/x"


def test_stdio_entry_with_interpolation(tmp_path: Path) -> None:
    config = parse_server("gh", {
        "command": "${TOOL_DIR}/server",
        "args": ["--token", "${GH_TOKEN}", 3, True],
        "env": {"GH_TOKEN": "${GH_TOKEN}", "LEVEL": 2},
        "cwd": "sub",
        "timeout": 30,
    }, environ={"GH_TOKEN": "ghp_verysecret", "TOOL_DIR": "/opt/tools"}, base_dir=tmp_path)
    assert config.transport == "stdio"
    assert config.command == "/opt/tools/server"
    assert config.args == ("--token", "ghp_verysecret", "3", "true")
    assert config.env == {"GH_TOKEN": "ghp_verysecret", "LEVEL": "2"}
    assert config.cwd == str(tmp_path / "sub") and config.timeout == 30.0
    shown = repr(config) + config.describe() + config.target
    assert "ghp_verysecret" not in shown and "***" in shown
    assert "env: GH_TOKEN, LEVEL" in config.describe()


@pytest.mark.parametrize(("entry", "transport"), [
    ({"url": "https://example.test/mcp"}, "http"),
    ({"type": "http", "url": "https://example.test/mcp"}, "http"),
    ({"type": "streamable-http", "url": "https://example.test/mcp"}, "http"),
    ({"transport": "sse", "url": "https://example.test/events"}, "sse"),
    ({"url": "https://example.test/sse"}, "sse"),
    ({"type": "stdio", "command": "srv"}, "stdio"),
])
def test_transport_is_read_or_inferred(entry: dict[str, object], transport: str) -> None:
    assert parse_server("s", entry).transport == transport


@pytest.mark.parametrize(("entry", "says"), [
    ({}, 'neither "command"'),
    ([], "must be an object"),
    ({"type": "ws", "url": "ws://x"}, 'use "stdio", "http" or "sse"'),
    ({"command": ""}, '"command" must be a non-empty string'),
    ({"command": "x", "args": "a b"}, '"args" must be a list of strings'),
    ({"command": "x", "env": {"A": ["b"]}}, '"env" must be an object of string values'),
    ({"url": "ftp://x"}, "must start with http:// or https://"),
    ({"command": "x", "timeout": -1}, '"timeout" must be a number of seconds above 0'),
    ({"url": "https://x/${NOPE_VAR}"}, "uses ${NOPE_VAR} in \"url\", which is not set"),
])
def test_malformed_entries_say_what_to_fix(entry: object, says: str) -> None:
    with pytest.raises(EntryError, match=None) as info:
        parse_server("s", entry, environ={})
    assert says in str(info.value)


def test_project_wins_and_problems_name_file_line_and_server(
        tmp_path: Path) -> None:
    user_dir = Path(os.environ["AGENT_EXT_CONFIG_DIR"])
    write(user_dir / "settings.json", {"mcpServers": {
        "shared": {"command": "user-cmd"}, "mine": {"command": "user-only"}}})
    mcp_json = write(tmp_path / ".mcp.json", {"mcpServers": {
        "shared": {"command": "project-cmd"},
        "broken": {"command": "x", "args": "not a list"},
        "off": {"command": "x", "disabled": True},
        "over": {"command": "from-mcp-json"},
    }})
    write(tmp_path / ".agent_ext" / "settings.json",
          {"mcpServers": {"over": {"command": "from-settings"}}})
    found = load_mcp_config(tmp_path)
    assert found.servers["shared"].command == "project-cmd"
    assert found.servers["mine"].command == "user-only"
    assert found.servers["over"].command == "from-settings"
    assert found.servers["shared"].source == mcp_json
    assert found.disabled == ("off",)
    [problem] = found.problems
    assert problem.startswith(f"{mcp_json}:6: MCP server 'broken'")
    assert '"args" must be a list of strings' in problem and "it is not started" in problem


def test_invalid_json_is_reported_and_other_files_still_load(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "x",}}}')
    write(tmp_path / ".agent_ext" / "settings.json", {"mcpServers": {"b": {"command": "y"}}})
    found = load_mcp_config(tmp_path)
    assert list(found.servers) == ["b"]
    assert len(found.problems) == 1 and "not valid JSON" in found.problems[0]
    assert ".mcp.json:1:" in found.problems[0]


def test_add_and_remove_persist_atomically_keeping_other_keys(tmp_path: Path) -> None:
    path = write(tmp_path / ".mcp.json", {"mcpServers": {"old": {"command": "o"}},
                                          "other": [1, 2]})
    path.chmod(0o600)
    add_server(tmp_path, "docs", {"command": "uvx", "args": ["docs-server"],
                                  "env": {"KEY": "${DOCS_KEY}"}})
    data = json.loads(path.read_text())
    assert data["other"] == [1, 2]
    assert data["mcpServers"]["docs"]["env"] == {"KEY": "${DOCS_KEY}"}
    assert set(data["mcpServers"]) == {"old", "docs"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [".mcp.json"]
    with pytest.raises(McpConfigError, match="already has an MCP server named 'docs'"):
        add_server(tmp_path, "docs", {"command": "again"})
    add_server(tmp_path, "docs", {"url": "https://x/mcp"}, replace=True)
    assert json.loads(path.read_text())["mcpServers"]["docs"] == {"url": "https://x/mcp"}
    with pytest.raises(McpConfigError, match="nothing was written"):
        add_server(tmp_path, "bad", {"args": []})
    assert remove_server(tmp_path, "docs") and not remove_server(tmp_path, "docs")
    assert set(json.loads(path.read_text())["mcpServers"]) == {"old"}


def test_add_creates_the_file_and_refuses_a_malformed_one(tmp_path: Path) -> None:
    add_server(tmp_path, "first", {"command": "srv"})
    assert load_mcp_config(tmp_path).servers["first"].command == "srv"
    (tmp_path / ".mcp.json").write_text("{broken")
    with pytest.raises(McpConfigError, match="fix it first"):
        add_server(tmp_path, "second", {"command": "srv"})
    assert (tmp_path / ".mcp.json").read_text() == "{broken"
