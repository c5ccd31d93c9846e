"""Where a call lands, through the real tools: protected places, internal URLs, MCP names.

Every call goes through ``Agent.call_tool`` (build, decide, ask, run) with an approver that
rejects and records what it was asked, so each test checks three things at once: the verdict,
that the victim file is unchanged, and that no protected content reached the result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ext import Agent
from agent_ext.agent import ApprovalRequest, Decision
from agent_ext.core import ErrorCode, ToolResult
from agent_ext.notebook import NotebookProvider
from agent_ext.notebook.provider import FileNotebookProvider
from agent_ext.permissions import RulePolicy, Verdict
from agent_ext.urls import Resolved, URLRouter
from tests.unit.test_notebook_file import code, md, notebook, write_nb

MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", "auto")
SECRET = "TOPSECRET-7f3a"
SECRET_NB = "secrets/nb.ipynb"


class Recorder:
    """An approver that answers ``answer`` and keeps every request it saw."""

    def __init__(self, answer: str | Decision = "reject") -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> str | Decision:
        self.asked.append(request)
        return self.answer


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = (tmp_path / "project").resolve()
    for rel, text in {"src/a.py": "a = 1\n", "secrets/key.txt": f"{SECRET}\n",
                      ".git/config": "[core]\n", "sub/.git": "gitdir: ../.git\n",
                      ".mcp.json": '{"mcpServers": {}}\n',
                      ".agent_ext/settings.json": "{}\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    write_nb(root / SECRET_NB, notebook([md("# Keys", cid="m1"),
                                         code(f"key = '{SECRET}'", cid="c1", count=1,
                                              outputs=[{"output_type": "stream",
                                                        "name": "stdout",
                                                        "text": f"{SECRET}\n"}])]))
    write_nb(root / "open.ipynb", notebook([code("x = 1", cid="o1")]))
    (root / "gitlink").symlink_to(root / ".git", target_is_directory=True)
    (root / "seclink").symlink_to(root / "secrets", target_is_directory=True)
    return root


def agent(project: Path, mode: str = "default", *, rules: dict[str, list[str]] | None = None,
          approver: Recorder | None = None, current: Path | str | None = "none") -> Agent:
    """An agent on ``project``; ``current`` is the open notebook (None: not known)."""
    made = Agent(cwd=project, mode=mode, rules=rules, approver=approver or Recorder(),
                 plugins=False, mcp=False)
    if current != "none":
        made.context.services[NotebookProvider] = FileNotebookProvider(
            project, current_path=current if isinstance(current, Path) else None)
    return made


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (links not followed) and its bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def text_of(result: ToolResult) -> str:
    return result.text + json.dumps(result.display, default=str)


def refused(result: ToolResult) -> bool:
    return result.is_error and result.error is not None and result.error.code in (
        ErrorCode.EXECUTION_DENIED, ErrorCode.INVALID_TOOL_PARAMS)


# -- protected places -----------------------------------------------------------------------------

PROTECTED_WRITES = [
    ("write_file", {"file_path": ".git/hooks/pre-commit", "content": "echo pwned"}),
    ("write_file", {"file_path": ".GIT/hooks/post-checkout", "content": "x"}),
    ("write_file", {"file_path": ".Git./hooks/x", "content": "x"}),
    ("write_file", {"file_path": ".\uff47\uff49\uff54/config", "content": "x"}),
    ("write_file", {"file_path": ".git::$INDEX_ALLOCATION/config", "content": "x"}),
    ("write_file", {"file_path": ".mcp.json:$DATA", "content": "{}"}),
    ("write_file", {"file_path": ".git /config", "content": "x"}),
    ("write_file", {"file_path": ".g\u200bit/config", "content": "x"}),
    ("write_file", {"file_path": "src/../.git/config2", "content": "x"}),
    ("write_file", {"file_path": "./src/./../.git//config3", "content": "x"}),
    ("write_file", {"file_path": "gitlink/config4", "content": "x"}),
    ("write_file", {"file_path": "sub/.git", "content": "gitdir: /tmp/evil\n"}),
    ("write_file", {"file_path": "deep/er/.git/config", "content": "x"}),
    ("write_file", {"file_path": ".mcp.json", "content": '{"mcpServers": {"x": {}}}'}),
    ("write_file", {"file_path": ".MCP.JSON", "content": "{}"}),
    ("write_file", {"file_path": "pkg/.mcp.json", "content": "{}"}),
    ("write_file", {"file_path": ".agent_ext/settings.json", "content": "{}"}),
    ("write_file", {"file_path": ".agent_ext/settings.local.json", "content": "{}"}),
    ("write_file", {"file_path": ".Agent_Ext/settings.json", "content": "{}"}),
    ("write_file", {"file_path": "nested/.agent_ext/settings.json", "content": "{}"}),
    ("write_file", {"file_path": "{config}/settings.json", "content": "{}"}),
    ("write_file", {"file_path": "{config}/trust.json", "content": "{}"}),
    ("write_file", {"file_path": "~/.ssh/authorized_keys", "content": "ssh-rsa x"}),
    ("write_file", {"file_path": "~/.gitconfig", "content": "[core]\npager = sh -c x"}),
    ("write_file", {"file_path": "~/.config/git/config", "content": "[alias]\nst = !x"}),
    ("edit", {"file_path": ".git/config", "old_string": "[core]", "new_string": "[x]"}),
    ("edit", {"file_path": ".mcp.json", "old_string": "{}", "new_string": '{"x": 1}'}),
]


def _fill(args: dict[str, Any]) -> dict[str, Any]:
    config = os.environ["AGENT_EXT_CONFIG_DIR"]
    return {k: v.replace("{config}", config) if isinstance(v, str) else v
            for k, v in args.items()}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("tool", "args"), PROTECTED_WRITES,
                         ids=[f"{t}:{a['file_path']}" for t, a in PROTECTED_WRITES])
async def test_protected_places_need_an_explicit_approval(project: Path, mode: str, tool: str,
                                                          args: dict[str, Any]) -> None:
    """Allow rules for everything, every mode but bypass: asked (or refused), never run."""
    home = Path(os.environ["HOME"])
    before, before_home = snapshot(project), snapshot(home)
    approver = Recorder()
    a = agent(project, mode, approver=approver,
              rules={"allow": ["Edit", "Write", "Edit(//**)", "Bash"]})
    for read in (".git/config", ".mcp.json", "sub/.git", ".agent_ext/settings.json"):
        await a.call_tool("read_file", {"file_path": read})
    result = await a.call_tool(tool, _fill(args))
    if mode == "bypassPermissions":
        assert not approver.asked
        return
    assert refused(result), result.text
    assert snapshot(project) == before and snapshot(home) == before_home
    if mode in ("plan", "dontAsk"):
        assert not approver.asked
        assert "plan mode" in result.text or "protected place" in result.text
    else:
        assert len(approver.asked) == 1
        assert "protected place" in approver.asked[0].reason


async def test_bypass_writes_protected_places(project: Path) -> None:
    a = agent(project, "bypassPermissions")
    result = await a.call_tool("write_file", {"file_path": ".git/hooks/x", "content": "y"})
    assert not result.is_error, result.text
    assert (project / ".git/hooks/x").read_text() == "y"


@pytest.mark.parametrize("answer", [Decision.always(), Decision.always("directory"),
                                    Decision.always("tool", "project")])
async def test_always_allow_on_a_protected_write_saves_no_rule(project: Path,
                                                               answer: Decision) -> None:
    approver = Recorder(answer)
    a = agent(project, approver=approver)
    assert isinstance(a.policy, RulePolicy)
    before = a.policy.rules("allow")
    first = await a.call_tool("write_file", {"file_path": ".git/hooks/a", "content": "1"})
    assert not first.is_error, first.text  # approved this once
    assert a.policy.rules("allow") == before
    assert json.loads((project / ".agent_ext/settings.json").read_text()) == {}
    approver.answer = "reject"
    again = await a.call_tool("write_file", {"file_path": ".git/hooks/a", "content": "2"})
    assert refused(again) and len(approver.asked) == 2
    assert (project / ".git/hooks/a").read_text() == "1"
    assert a.policy.scopes(_built(a, "write_file", {"file_path": ".mcp.json",
                                                    "content": "{}"})) == ()


def _built(a: Agent, tool: str, args: dict[str, Any]) -> Any:
    prepared = a._pipeline.prepare(_call(tool, args))
    assert prepared.invocation is not None, prepared.early
    return prepared.invocation


def _call(tool: str, args: dict[str, Any]) -> Any:
    from agent_ext.models import ToolCall
    return ToolCall.of(f"t_{tool}", tool, args)


async def test_ordinary_writes_still_run_under_their_rules(project: Path) -> None:
    """Not over-blocking: files that merely mention the names are not protected places."""
    a = agent(project, "acceptEdits")
    for path in ("src/gitignore.txt", "src/.gitignore", "docs/mcp.json", "src/git/x.py",
                 "src/.github/workflows/ci.yml", "src/agent_ext_notes.md", ".gitattributes",
                 ".gitmodules", "src/.gitkeep", "config/git.yml", ".mcp.json.example",
                 "src/.sshrc.md", "src/mcp.json5"):
        result = await a.call_tool("write_file", {"file_path": path, "content": "ok"})
        assert not result.is_error, (path, result.text)


# -- internal URLs resolve to their files ---------------------------------------------------------

SECRET_ADDRESSES = [
    ("read_file", {"file_path": f"nb://{SECRET_NB}"}),
    ("read_file", {"file_path": f"nb://{SECRET_NB}:source"}),
    ("read_file", {"file_path": f"nb://{SECRET_NB}:cells=1"}),
    ("read_file", {"file_path": f"nb://./secrets/../{SECRET_NB}"}),
    ("read_file", {"file_path": f"nb://{{project}}/{SECRET_NB}"}),
    ("read_file", {"file_path": f"nb://{SECRET_NB}", "offset": 0, "limit": 5}),
    ("read_file", {"file_path": "nb://secrets%2Fnb.ipynb"}),
    ("read_file", {"file_path": "nb://%73ecrets/nb.ipynb"}),
    ("read_file", {"file_path": f"NB://{SECRET_NB}"}),
    ("read_file", {"file_path": f"nb:{SECRET_NB}"}),
    ("read_file", {"file_path": "nb://SECRETS/../secrets/nb.ipynb"}),
    ("read_file", {"file_path": "nb://seclink/nb.ipynb"}),
    ("read_file", {"file_path": "nb://"}),
    ("read_file", {"file_path": "nb://:source"}),
    ("read_file", {"file_path": "cell://c1"}),
    ("read_file", {"file_path": "cell://[1]"}),
    ("read_file", {"file_path": "out://c1"}),
    ("read_file", {"file_path": SECRET_NB}),
    ("grep", {"pattern": "TOPSECRET", "path": f"nb://{SECRET_NB}"}),
    ("grep", {"pattern": "TOPSECRET", "path": "nb://", "output_mode": "content"}),
    ("grep", {"pattern": "TOPSECRET", "path": "cell://c1", "output_mode": "count"}),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("tool", "args"), SECRET_ADDRESSES,
                         ids=[f"{t}:{json.dumps(a)[:60]}" for t, a in SECRET_ADDRESSES])
async def test_read_deny_rules_cover_notebook_addresses(project: Path, mode: str, tool: str,
                                                        args: dict[str, Any]) -> None:
    approver = Recorder("approve")
    a = agent(project, mode, approver=approver, current=project / SECRET_NB,
              rules={"deny": ["Read(./secrets/**)"], "allow": ["Read"]})
    filled = {k: v.replace("{project}", str(project)) if isinstance(v, str) else v
              for k, v in args.items()}
    result = await a.call_tool(tool, filled)
    assert refused(result), result.text
    assert "Read(./secrets/**)" in result.text
    assert SECRET not in text_of(result)
    assert not approver.asked


@pytest.mark.parametrize("mode", MODES)
async def test_ask_rules_cover_notebook_addresses(project: Path, mode: str) -> None:
    approver = Recorder()
    a = agent(project, mode, approver=approver, current=project / SECRET_NB,
              rules={"ask": ["Read(./secrets/**)"]})
    for address in (f"nb://{SECRET_NB}", "nb://", "cell://c1", "out://c1"):
        result = await a.call_tool("read_file", {"file_path": address})
        assert refused(result) and SECRET not in text_of(result), (address, result.text)
    expected = 0 if mode == "dontAsk" else 4
    assert len(approver.asked) == expected
    assert all("Read(./secrets/**)" in r.reason for r in approver.asked)


@pytest.mark.parametrize("mode", MODES)
async def test_a_notebook_outside_the_working_roots_is_not_read_unasked(
        project: Path, tmp_path: Path, mode: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_nb(elsewhere / "far.ipynb", notebook([code(f"k = '{SECRET}'", cid="f1")]))
    approver = Recorder()
    a = agent(project, mode, approver=approver, current=elsewhere / "far.ipynb")
    results = [await a.call_tool("read_file", {"file_path": address})
               for address in (f"nb://{elsewhere}/far.ipynb", "nb://", "cell://f1",
                               "nb://../elsewhere/far.ipynb")]
    results.append(await a.call_tool("grep", {"pattern": "k", "path": "nb://"}))
    if mode == "bypassPermissions":
        assert all(SECRET in r.text for r in results[:4])
        return
    for result in results:
        assert refused(result) and SECRET not in text_of(result), result.text
    assert len(approver.asked) == (0 if mode == "dontAsk" else 5)  # plan mode reads too
    assert all("outside the working roots" in r.reason for r in approver.asked)


async def test_notebook_addresses_inside_the_roots_still_read_unasked(project: Path) -> None:
    approver = Recorder()
    a = agent(project, approver=approver, current=project / "open.ipynb",
              rules={"deny": ["Read(./secrets/**)"]})
    for address in ("nb://", "nb://open.ipynb", "cell://o1", "out://o1", "nb://:source"):
        result = await a.call_tool("read_file", {"file_path": address})
        assert not result.is_error, (address, result.text)
    found = await a.call_tool("grep", {"pattern": "x = 1", "path": "nb://"})
    assert "nb://" in found.text and not found.is_error
    assert not approver.asked


@pytest.mark.parametrize("mode", MODES)
async def test_an_address_that_cannot_be_resolved_asks(project: Path, mode: str) -> None:
    """No open notebook known, and a scheme that does not say what it reads: never unasked."""
    approver = Recorder()
    a = agent(project, mode, approver=approver, current=None)
    router = a.context.service(URLRouter)
    assert router is not None
    router.register(_Opaque())
    for address in ("nb://", "cell://c1", "out://c1", "opaque://thing"):
        result = await a.call_tool("read_file", {"file_path": address})
        assert refused(result) and SECRET not in text_of(result), (address, result.text)
    asked = 0 if mode in ("dontAsk", "plan") else 4
    assert len(approver.asked) == asked
    assert all("cannot tell which files" in r.reason for r in approver.asked)


class _Opaque:
    """A plugin scheme that serves file contents and does not say which files."""

    name = "opaque"
    read_only = True

    async def resolve(self, url: Any, selector: Any) -> Resolved:
        return Resolved(text=SECRET)

    def tier_for(self, url: Any) -> Any:
        from agent_ext.core import Tier
        return Tier.READ


async def test_kernel_state_addresses_touch_no_file(project: Path) -> None:
    a = agent(project, "dontAsk", rules={"deny": ["Read(./secrets/**)"]})
    assert isinstance(a.policy, RulePolicy)
    for address in ("var://", "var://df", "history://", "history://3"):
        invocation = _built(a, "read_file", {"file_path": address})
        assert invocation.locations() == []
        assert a.policy.decide(invocation).verdict is Verdict.ALLOW, address


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk", "plan", "auto"])
async def test_cell_edits_follow_edit_rules_on_the_notebook(project: Path, mode: str) -> None:
    approver = Recorder()
    a = agent(project, mode, approver=approver, current=project / SECRET_NB,
              rules={"deny": ["Edit(./secrets/**)"]})
    before = snapshot(project)
    for tool, args in (("edit", {"file_path": "cell://c1", "old_string": "key",
                                 "new_string": "k"}),
                       ("write_file", {"file_path": "cell://c1", "content": "k = 1"}),
                       ("notebook_edit", {"cell_id": "c1", "new_source": "k = 1"}),
                       ("notebook_edit", {"notebook_path": SECRET_NB, "cell_id": "c1",
                                          "new_source": "k = 1"})):
        result = await a.call_tool(tool, args)
        assert refused(result) and SECRET not in text_of(result), (tool, result.text)
    assert snapshot(project) == before and not approver.asked


# -- notebook_edit before the decision ------------------------------------------------------------

@pytest.mark.parametrize("mode", ["default", "acceptEdits", "auto"])
async def test_notebook_edit_shows_nothing_of_an_unread_notebook(project: Path,
                                                                 mode: str) -> None:
    """Read-denied but not edit-denied: the edit may be asked about, but its errors never
    quote the notebook, whatever the cell reference."""
    a = agent(project, mode, approver=Recorder("approve"),
              rules={"deny": ["Read(./secrets/**)"]})
    before = snapshot(project)
    for ref in ("c1", "[1]", "cell-0", "nope", "m1"):
        result = await a.call_tool("notebook_edit", {"notebook_path": SECRET_NB,
                                                     "cell_id": ref, "new_source": "k"})
        assert result.is_error and SECRET not in text_of(result), (ref, result.text)
        assert "key" not in result.text
    assert snapshot(project) == before


# -- mcp:// and MCP rule names ---------------------------------------------------------------------

@pytest.mark.timeout(90)
async def test_mcp_resources_follow_the_servers_rules(project: Path) -> None:
    from tests.mcp_servers.harness import attach_mcp, stdio_config

    approver = Recorder()
    cases: list[tuple[dict[str, list[str]], Callable[[ToolResult, int], bool]]] = [
        ({"deny": ["mcp__demo"]}, lambda r, n: refused(r) and n == 0),
        ({"deny": ["mcp__demo__*"]}, lambda r, n: refused(r) and n == 0),
        ({"deny": ["MCP__Demo"]}, lambda r, n: refused(r) and n == 0),
        ({"ask": ["mcp__demo"]}, lambda r, n: refused(r) and n == 1),
        ({"deny": ["mcp__other"]}, lambda r, n: not r.is_error and n == 0),
        ({"deny": ["mcp__demo__echo"]}, lambda r, n: not r.is_error and n == 0),
    ]
    a = agent(project, approver=approver)
    manager = await attach_mcp(a, [stdio_config()])
    try:
        assert isinstance(a.policy, RulePolicy)
        for rules, expected in cases:
            for kind, texts in rules.items():
                for text in texts:
                    a.policy.add_rule(kind, text)
            approver.asked.clear()
            result = await a.call_tool("read_file", {"file_path": "mcp://demo/res://greeting"})
            leaked = "Hello from the demo server" in text_of(result)
            assert expected(result, len(approver.asked)), (rules, result.text)
            assert leaked is not result.is_error, rules
            for kind, texts in rules.items():
                for text in texts:
                    a.policy.remove_rule(kind, text)
    finally:
        await manager.aclose()


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("server", "rule"), [
    ("a__b", "mcp__a__b"),
    ("a__b", "mcp__a__b__*"),
    ("a__b", "mcp__a__b__echo"),
    ("my.server", "mcp__my_server"),
    ("my.server", "mcp__my_server__echo"),
    ("s" * 70, "mcp__" + "s" * 70 + "__echo"),
    ("s" * 70, "mcp__" + "s" * 70),
])
async def test_mcp_deny_rules_match_the_server_and_tool_pair(project: Path, server: str,
                                                             rule: str) -> None:
    from tests.mcp_servers.harness import attach_mcp, stdio_config

    approver = Recorder("approve")
    a = agent(project, "bypassPermissions", approver=approver, rules={"deny": [rule]})
    manager = await attach_mcp(a, [stdio_config(server)])
    try:
        names = [n for n in a.registry.names() if n.endswith("echo")]
        assert len(names) == 1, a.registry.names()
        assert not a.registry.listed(names[0])  # hidden from the model, too
        result = await a.call_tool(names[0], {"text": "hi"})
        assert result.is_error and "echo: hi" not in result.text, (names[0], result.text)
    finally:
        await manager.aclose()


def test_allow_rules_for_one_server_do_not_cover_a_longer_one() -> None:
    """``mcp__a`` is the server ``a``, not every server whose name starts ``a__``."""
    from agent_ext.permissions import Rule, parse_rule

    rule = parse_rule("mcp__a", "allow")
    assert isinstance(rule, Rule)
    assert rule.covers_tool("mcp__a__echo", "a", "echo")
    assert not rule.covers_tool("mcp__a__b__echo", "a__b", "echo")
    tool_of_a = parse_rule("mcp__a__b", "allow")
    assert isinstance(tool_of_a, Rule)
    assert tool_of_a.covers_tool("mcp__a__b", "a", "b")
    assert not tool_of_a.covers_tool("mcp__a__b__x", "a__b", "x")  # a server named to widen it
    whole = parse_rule("mcp__a__b__*", "allow")
    assert isinstance(whole, Rule) and whole.covers_tool("mcp__a__b__x", "a__b", "x")
    denied = parse_rule("mcp__a__b", "deny")
    assert isinstance(denied, Rule)
    assert denied.covers_tool("mcp__a__b__x", "a__b", "x") and denied.covers_server("a__b")
    pair = parse_rule("mcp__a__b__echo", "allow")
    assert isinstance(pair, Rule)
    assert pair.covers_tool("mcp__a__b__echo_2", "a__b", "echo")
    assert pair.covers_tool("mcp__a__b___echo", "a", "b__echo")
    assert not pair.covers_tool("mcp__a__b__echo2", "a__b", "echo2")


# -- control characters in paths -------------------------------------------------------------------

NUL_PATHS = ["secrets/key.txt\x00", "secrets/key.txt\x00.png", "src/\x00../secrets/key.txt",
             "secrets/key.txt\n", "secrets/\x1bkey.txt", "nb://secrets/nb.ipynb\x00"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", NUL_PATHS, ids=repr)
async def test_control_characters_in_paths_are_refused_before_anything(project: Path,
                                                                      mode: str,
                                                                      path: str) -> None:
    approver = Recorder("approve")
    a = agent(project, mode, approver=approver, rules={"deny": ["Read(./secrets/**)"]})
    before = snapshot(project)
    for tool, args in (("read_file", {"file_path": path}),
                       ("grep", {"pattern": "TOP", "path": path}),
                       ("write_file", {"file_path": path, "content": "x"}),
                       ("edit", {"file_path": path, "old_string": "T", "new_string": "x"}),
                       ("notebook_edit", {"notebook_path": path + ".ipynb", "cell_id": "c1",
                                          "new_source": "x"})):
        result = await a.call_tool(tool, args)
        assert result.is_error and result.error is not None, (tool, result.text)
        assert result.error.code == ErrorCode.INVALID_TOOL_PARAMS, (tool, result.text)
        assert SECRET not in text_of(result)
    assert not approver.asked and snapshot(project) == before


def test_a_location_with_a_nul_is_denied_by_the_policy(project: Path) -> None:
    """Tools that do not check their paths themselves: the policy refuses, never asks."""
    from tests.unit.permission_corpus import call, standins

    tools = standins()
    for mode in MODES:
        policy = RulePolicy(project, mode=mode, rules={"deny": ["Read(./secrets/**)"]})
        for tool in ("ls", "glob", "read_file", "edit"):
            decision = policy.decide(call(tools[tool], project, path="secrets\x00/key.txt"))
            assert decision.verdict is Verdict.DENY, (mode, tool, decision)
            assert "NUL" in decision.reason


# -- searches do not tell what denied files hold ---------------------------------------------------

@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk", "bypassPermissions"])
@pytest.mark.parametrize("output_mode", ["content", "count", "files_with_matches"])
async def test_grep_over_a_folder_says_nothing_of_denied_files(project: Path, mode: str,
                                                               output_mode: str) -> None:
    a = agent(project, mode, rules={"deny": ["Read(./secrets/**)"], "ask": ["Read(//**/ask*)"]})
    (project / "src/ask_me.txt").write_text(f"{SECRET} asked\n")
    hit = await a.call_tool("grep", {"pattern": "TOPSECRET", "output_mode": output_mode})
    miss = await a.call_tool("grep", {"pattern": "NOTPRESENTX", "output_mode": output_mode})
    assert SECRET not in text_of(hit)
    assert hit.text.replace("TOPSECRET", "P") == miss.text.replace("NOTPRESENTX", "P")


# -- the router's part ------------------------------------------------------------------------------

class _Located(_Opaque):
    name = "loc"

    def __init__(self, answer: list[str] | Exception | None) -> None:
        self.answer = answer

    def locations(self, url: Any) -> list[str] | None:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_the_router_reports_what_a_scheme_says_and_the_address_otherwise() -> None:
    router = URLRouter([_Opaque()])
    assert router.locations("opaque://x") == ["opaque://x"]
    assert router.locations("nosuch://x") == ["nosuch://x"]
    for answer, expected in (([], []), (["/p/a.ipynb"], ["/p/a.ipynb"]), (None, ["loc://y"]),
                             (RuntimeError("boom"), ["loc://y"])):
        router.register(_Located(answer), replace=True)
        assert router.locations("loc://y") == expected


def test_mcp_file_resources_name_their_file(project: Path) -> None:
    from agent_ext.mcp import McpScheme
    from agent_ext.urls import parse_url

    scheme = McpScheme(dict)
    assert scheme.locations(parse_url("mcp://fs/res://x")) == ["mcp://fs/res://x"]
    assert scheme.locations(parse_url("mcp://fs/file:///home/u/.ssh/id_rsa")) == [
        "mcp://fs/file:///home/u/.ssh/id_rsa", "/home/u/.ssh/id_rsa"]
    assert scheme.locations(parse_url("mcp://fs/file://localhost/etc/x%20y"))[1] == "/etc/x y"
    policy = RulePolicy(project, rules={"deny": ["Read(~/.ssh/**)"]})
    a = agent(project)
    router = a.context.service(URLRouter)
    assert router is not None
    router.register(McpScheme(dict))
    home = os.environ["HOME"]
    invocation = _built(a, "read_file", {"file_path": f"mcp://fs/file://{home}/.ssh/id_rsa"})
    decision = policy.decide(invocation)
    assert decision.verdict is Verdict.DENY and "Read(~/.ssh/**)" in decision.reason
    outside = _built(a, "read_file", {"file_path": "mcp://fs/file:///etc/hostname"})
    assert policy.decide(outside).verdict is Verdict.ASK


@pytest.mark.parametrize("address", ["opaque:thing", "opaque://", "opaque://a/b",
                                     "OPAQUE://x", "opaque:///etc/passwd"])
async def test_every_spelling_of_an_unresolved_address_asks(project: Path, address: str) -> None:
    approver = Recorder()
    a = agent(project, approver=approver)
    router = a.context.service(URLRouter)
    assert router is not None
    router.register(_Opaque())
    result = await a.call_tool("read_file", {"file_path": address})
    assert refused(result) and SECRET not in text_of(result), result.text
    assert len(approver.asked) == 1


@pytest.mark.parametrize("path", ["SECRETS/key.txt", "Secrets/KEY.TXT", "nb://SECRETS/nb.ipynb",
                                  "./SeCrEtS/sub/../key.txt"])
def test_deny_rules_match_other_cases_and_compositions(project: Path, path: str) -> None:
    """What a case-insensitive file system opens as the denied file is denied too."""
    a = agent(project)
    policy = RulePolicy(project, rules={"deny": ["Read(./secrets/**)", "Read(./caf\u00e9/**)"]})
    assert policy.decide(_built(a, "read_file", {"file_path": path})).verdict is Verdict.DENY
    decomposed = _built(a, "read_file", {"file_path": "cafe\u0301/menu.txt"})
    assert policy.decide(decomposed).verdict is Verdict.DENY


async def test_errors_do_not_tell_which_denied_files_exist(project: Path) -> None:
    (project / "src/.env").write_text(f"TOKEN={SECRET}\n")
    a = agent(project, rules={"deny": ["Read(*.env)", "Read(./secrets/**)"]})
    typo = await a.call_tool("read_file", {"file_path": "src/.envv"})
    assert typo.error is not None and typo.error.code == ErrorCode.FILE_NOT_FOUND
    assert ".env'" not in typo.text and "Did you mean" not in typo.text
    there = await a.call_tool("grep", {"pattern": "x", "path": "secrets/key.txt"})
    missing = await a.call_tool("grep", {"pattern": "x", "path": "secrets/nokey.txt"})
    assert refused(there) and refused(missing)
    assert there.text.replace("key.txt", "K") == missing.text.replace("nokey.txt", "K")


async def test_an_unresolved_address_is_named_as_written(project: Path) -> None:
    approver = Recorder()
    a = agent(project, approver=approver, current=None)
    await a.call_tool("read_file", {"file_path": "cell://c1"})
    assert "cell://c1" in approver.asked[0].reason
    assert isinstance(a.policy, RulePolicy)
    edit = _built(a, "notebook_edit", {"cell_id": "c1", "new_source": "x"})
    assert edit.description() == "notebook_edit replace c1 in the current notebook"
    decision = a.policy.decide(edit)
    assert decision.verdict is Verdict.ASK and "nb://" in decision.reason


async def test_a_config_dir_of_any_name_is_protected(project: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "Elsewhere" / "cfg"
    config.mkdir(parents=True)
    monkeypatch.setenv("AGENT_EXT_CONFIG_DIR", str(config))
    approver = Recorder()
    a = agent(project, "acceptEdits", approver=approver,
              rules={"allow": ["Edit(//**)", "Write"]})
    for path in (config / "settings.json", tmp_path / "elsewhere" / "CFG" / "trust.json"):
        result = await a.call_tool("write_file", {"file_path": str(path), "content": "{}"})
        assert refused(result), result.text
    assert "protected place" in approver.asked[0].reason
    assert not (config / "settings.json").exists()


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk", "auto"])
@pytest.mark.parametrize("command", ["echo '{}' > .MCP.json", "echo x >> .Git/config",
                                     "echo x > sub/.git", "echo x > .agent_ext/settings.json"])
async def test_shell_writes_to_protected_places_are_asked(project: Path, mode: str,
                                                          command: str) -> None:
    approver = Recorder()
    a = agent(project, mode, approver=approver, rules={"allow": ["Bash", "Edit"]})
    before = snapshot(project)
    result = await a.call_tool("shell", {"command": command})
    assert refused(result), result.text
    assert snapshot(project) == before
    assert len(approver.asked) == (0 if mode == "dontAsk" else 1)
    assert all("protected place" in r.reason for r in approver.asked)


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
async def test_cell_edits_are_no_oracle_for_an_unread_notebook(project: Path, mode: str) -> None:
    """Read-denied, edit-allowed: whether old_string occurs in a cell is not told."""
    approver = Recorder()
    a = agent(project, mode, approver=approver, current=project / SECRET_NB,
              rules={"deny": ["Read(./secrets/**)"]})
    before = snapshot(project)
    answers = []
    for probe in (f"key = '{SECRET}'", "not in the cell at all", "key"):
        for ref in ("c1", "[1]"):
            result = await a.call_tool("edit", {"file_path": f"cell://{ref}",
                                                "old_string": probe, "new_string": "k"})
            assert result.is_error and SECRET not in text_of(result), result.text
            answers.append(result.text.replace(ref, "R"))
    assert len(set(answers)) == 1, answers
    assert snapshot(project) == before and not approver.asked


# -- properties -----------------------------------------------------------------------------------

def _respell(draw: Any, name: str) -> str:
    """``name`` as a case-insensitive or normalising file system would still open it."""
    from hypothesis import strategies as st

    out = []
    for ch in name:
        form = draw(st.sampled_from(["same", "upper", "wide", "zw"]))
        if form == "upper":
            out.append(ch.upper())
        elif form == "wide" and "!" <= ch <= "~":
            out.append(chr(ord(ch) + 0xFEE0))
        elif form == "zw":
            out.append(ch + "\u200b")
        else:
            out.append(ch)
    return "".join(out) + draw(st.sampled_from(["", ".", " ", "::$DATA"]))


def _protected_spellings() -> Any:
    from hypothesis import strategies as st

    @st.composite
    def build(draw: Any) -> str:
        name = draw(st.sampled_from([".git", ".agent_ext", ".mcp.json", ".gitconfig"]))
        lead = draw(st.lists(st.sampled_from(["src", "..", ".", "a/b", "src/..", "x/../y"]),
                             max_size=3))
        tail = draw(st.sampled_from(["", "/config", "/hooks/pre-commit", "/", "/x/../y"]))
        return "/".join(["project", *lead, _respell(draw, name)]) + tail

    return build()


def test_no_spelling_of_a_protected_place_is_written_unasked(tmp_path: Path) -> None:
    from hypothesis import HealthCheck, given, settings

    from tests.unit.permission_corpus import call, standins

    root = (tmp_path / "project").resolve()
    root.mkdir()
    tools = standins()
    policies = {mode: RulePolicy(root, mode=mode, rules={"allow": ["Edit", "Write", "Bash"]})
                for mode in MODES if mode != "bypassPermissions"}

    @settings(max_examples=300, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(_protected_spellings())
    def check(spelled: str) -> None:
        path = str(tmp_path / spelled)
        for mode, policy in policies.items():
            for tool in ("edit", "write_file"):
                decision = policy.decide(call(tools[tool], root, path=path))
                assert decision.verdict is not Verdict.ALLOW, (mode, tool, path, decision)

    check()


async def test_grep_shows_ask_covered_files_only_when_the_search_was_asked(project: Path) -> None:
    approver = Recorder("approve")
    a = agent(project, approver=approver, rules={"ask": ["Read(./secrets/**)"]})
    over = await a.call_tool("grep", {"pattern": "TOPSECRET", "output_mode": "content"})
    assert SECRET not in text_of(over) and not approver.asked
    within = await a.call_tool("grep", {"pattern": "TOPSECRET", "path": "secrets",
                                        "output_mode": "content"})
    assert SECRET in within.text and len(approver.asked) == 1
    every = agent(project, approver=approver, rules={"ask": ["Read"]})
    asked = await every.call_tool("grep", {"pattern": "TOPSECRET", "output_mode": "content"})
    assert SECRET in asked.text and len(approver.asked) == 2


def test_urls_know_nothing_of_permissions() -> None:
    """Schemes say which files an address reaches; deciding about them stays above."""
    import ast

    import agent_ext

    root = Path(agent_ext.__file__).parent / "urls"
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert "permissions" not in node.module, path
            if isinstance(node, ast.Import):
                assert not any("permissions" in a.name for a in node.names), path
