"""Project trust in a real kernel, the test acting as JupyterLab (ready, then a click).

The project ships a ``.mcp.json`` whose server (the stdio test server) first writes a marker
file, and whose command line carries a unique tag, so "no process started" is checked twice:
no marker file, and no process in /proc whose command line holds the tag. Its settings widen
(allow Bash, bypassPermissions, additionalDirectories) and narrow (deny ``Bash(rm *)``).
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_ext.mcp.procs import alive
from tests.kernel.harness import KernelSession, widget_model
from tests.mcp_servers.harness import STDIO, kill_leftovers

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SETUP = """
import json, agent_ext
from agent_ext.models import ScriptedModel, call
steps = [call("shell", {"command": "rm -rf build"}, id="rm"), "first done"]
steps += [f"done {n}" for n in range(10)]
agent = agent_ext.get_agent(model=ScriptedModel(steps))
"""
RESULTS = """
msgs = agent_ext.get_agent().messages
print(json.dumps([r.content[0].text for m in msgs for r in m.tool_returns]))
"""
STATUS = "print(json.dumps([s.pid for s in agent_ext.get_agent().mcp.status() if s.pid]))"


def server_entry(marker: Path, tag: str, extra: str = "") -> dict[str, Any]:
    code = (f"tag = {tag!r}; import pathlib, runpy, sys; {extra}"
            f"pathlib.Path({str(marker)!r}).write_text('ran'); sys.argv = [{str(STDIO)!r}]; "
            f"runpy.run_path({str(STDIO)!r}, run_name='__main__')")
    return {"command": sys.executable, "args": ["-c", code], "env": {"PROBE_TOKEN": "s3cret"}}


def tagged(tag: str) -> list[int]:
    """Pids of every process whose command line holds ``tag``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if tag.encode() in cmdline:
            found.append(int(entry.name))
    return found


def none_within(tag: str, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    left = tagged(tag)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = tagged(tag)
    return left


class Browser:
    """Renders every widget (ready) and answers the trust widget with ``answer``."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.widgets: list[str] = []
        self.requests: list[dict[str, Any]] = []

    def __call__(self, kernel: KernelSession, msg: dict[str, Any]) -> None:
        name = widget_model(msg)
        if not name:
            return
        self.widgets.append(name)
        comm_id = msg["content"]["comm_id"]
        kernel.send_custom(comm_id, {"type": "ready"})
        if name == "ProjectTrustWidget":
            self.requests.append(msg["content"]["data"]["state"]["request"])
            if self.answer is not None:
                kernel.send_custom(comm_id, {"type": "answer", "answer": self.answer})


@pytest.fixture
def project(workdir: Path) -> Iterator[tuple[Path, str]]:
    """The kernel's folder as a cloned repository that asks for a server and wide settings."""
    tag = f"agent-ext-probe-{uuid.uuid4().hex}"
    marker = workdir.parent / "marker"
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "probe": server_entry(marker, tag)}}))
    (workdir / ".agent_ext").mkdir()
    (workdir / ".agent_ext/settings.json").write_text(json.dumps({"permissions": {
        "allow": ["Bash"], "deny": ["Bash(rm *)"], "defaultMode": "bypassPermissions",
        "additionalDirectories": ["~"]}}))
    (workdir / "build").mkdir()
    yield marker, tag
    kill_leftovers(p for p in tagged(tag) if alive(p))


def test_trust_widget_dont_trust_trust_and_an_edit_asks_again(
        kernel: KernelSession, workdir: Path, project: tuple[Path, str]) -> None:
    marker, tag = project
    kernel.ok("%load_ext agent_ext")
    kernel.ok(SETUP)

    refuse = Browser("distrust")
    run = kernel.ok("%%agent\nclean up", on_message=refuse, timeout=60)
    assert refuse.widgets[0] == "ProjectTrustWidget"  # before the run's transcript
    request = refuse.requests[0]
    servers = [i for i in request["items"] if i["kind"] == "server"]
    assert servers[0]["key"] == "probe" and servers[0]["value"]["env"] == ["PROBE_TOKEN"]
    assert servers[0]["value"]["command"] == sys.executable
    assert tag in servers[0]["value"]["args"][1]
    settings = {(i["key"], json.dumps(i["value"])) for i in request["items"]
                if i["kind"] == "setting"}
    assert settings == {("permissions.allow", '"Bash"'),
                        ("permissions.defaultMode", '"bypassPermissions"'),
                        ("permissions.additionalDirectories", '"~"')}
    assert "s3cret" not in json.dumps(request)
    assert "not trusted" in run.stdout
    assert not marker.exists() and tagged(tag) == []  # no process was started
    results = json.loads(kernel.ok(RESULTS).stdout)
    assert "denied by Bash(rm *)" in results[0]  # the narrowing rule applied at once
    assert (workdir / "build").is_dir()

    status = kernel.ok("%agent status").stdout
    assert "project trust: project files of" in status and "you chose Don't trust" in status
    assert "narrowing rules applied: deny: Bash(rm *) (.agent_ext/settings.json)" in status
    assert "MCP servers in force: none" in status and "mode: default" in status

    quiet = Browser(None)
    kernel.ok("%%agent\nagain", on_message=quiet, timeout=60)
    assert "ProjectTrustWidget" not in quiet.widgets  # the answer is kept: no nagging
    assert not marker.exists() and tagged(tag) == []

    trusted = kernel.ok("%agent trust").stdout
    assert "project trust: trusted on" in trusted
    kernel.ok("%%agent\nnow with the server", on_message=Browser(None), timeout=60)
    assert marker.read_text() == "ran"
    pids = json.loads(kernel.ok(STATUS).stdout)
    assert len(pids) == 1 and pids[0] in tagged(tag)
    status = kernel.ok("%agent status").stdout
    assert "MCP servers in force: probe" in status and "mode: bypassPermissions" in status

    marker.unlink()
    edited = server_entry(marker, tag, extra="import os; ")
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": {"probe": edited}}))
    again = Browser("trust")
    run = kernel.ok("%%agent\nafter the edit", on_message=again, timeout=60)
    assert again.widgets[0] == "ProjectTrustWidget"  # asked again
    assert again.requests[0]["changed"] is True
    assert "trusted (kept" in run.stdout
    assert marker.read_text() == "ran"  # the edited server, trusted through the widget
    new_pids = json.loads(kernel.ok(STATUS).stdout)
    assert len(new_pids) == 1 and new_pids != pids and not alive(pids[0])

    kernel.ok("%agent untrust")
    assert none_within(tag, 5.0) == []


def test_headless_never_trusts_and_says_so(
        kernel: KernelSession, workdir: Path, project: tuple[Path, str]) -> None:
    marker, tag = project
    kernel.ok("%load_ext agent_ext\n%config AgentExt.ready_timeout = 0.5")
    kernel.ok(SETUP)
    run = kernel.ok("%%agent\nclean up", timeout=60)  # nobody renders widgets
    lines = [line for line in run.stdout.splitlines() if "project trust" in line]
    assert len(lines) == 1, run.stdout
    assert "no frontend can show the trust question, so nothing is trusted" in lines[0]
    assert "withheld MCP server 'probe' (.mcp.json)" in lines[0]
    assert "allow rule Bash" in lines[0] and "`%agent trust`" in lines[0]
    assert not marker.exists() and tagged(tag) == []
    assert "denied by Bash(rm *)" in json.loads(kernel.ok(RESULTS).stdout)[0]


def test_dont_ask_mode_never_trusts(
        kernel: KernelSession, workdir: Path, project: tuple[Path, str]) -> None:
    marker, tag = project
    kernel.ok("%load_ext agent_ext")
    kernel.ok(SETUP)
    kernel.ok("%agent mode dontAsk")
    browser = Browser("trust")
    run = kernel.ok("%%agent\nclean up", on_message=browser, timeout=60)
    assert "ProjectTrustWidget" not in browser.widgets
    assert "dontAsk mode never asks, so nothing is trusted" in run.stdout
    assert not marker.exists() and tagged(tag) == []


def test_headless_says_it_once_per_session(
        kernel: KernelSession, workdir: Path, project: tuple[Path, str]) -> None:
    kernel.ok("%load_ext agent_ext\n%config AgentExt.ready_timeout = 0.5")
    kernel.ok(SETUP)
    first = kernel.ok("%%agent\nclean up", timeout=60)
    second = kernel.ok("%%agent\nagain", timeout=60)
    assert "[agent_ext] project trust:" in first.stdout
    assert "project trust" not in second.stdout
    assert "not trusted yet" in kernel.ok("%agent status").stdout


def test_an_interrupt_at_the_trust_question_trusts_nothing(
        kernel: KernelSession, workdir: Path, project: tuple[Path, str]) -> None:
    marker, tag = project
    kernel.ok("%load_ext agent_ext")
    kernel.ok(SETUP)
    shown: list[float] = []
    sent: list[float] = []

    def frontend(k: KernelSession, msg: dict[str, Any]) -> None:
        name = widget_model(msg)
        if name:
            k.send_custom(msg["content"]["comm_id"], {"type": "ready"})
        if name == "ProjectTrustWidget":
            shown.append(time.monotonic())

    def interrupt(_elapsed: float) -> None:
        if shown and not sent and time.monotonic() - shown[0] > 0.5:
            kernel.km.interrupt_kernel()
            sent.append(time.monotonic())

    run = kernel.execute("%%agent\nclean up", on_message=frontend, during=interrupt, timeout=30)
    assert sent and run.status == "error", run.text
    assert "interrupted at the project trust question: nothing was trusted" in run.text
    assert "Traceback" not in run.text
    assert not marker.exists() and tagged(tag) == []
    assert "not trusted yet" in kernel.ok("%agent status").stdout
    assert json.loads(kernel.ok(RESULTS).stdout) == []  # the prompt was not sent
