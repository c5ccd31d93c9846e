"""The extension in a real (terminal-style) IPython shell, no kernel: fast checks of the host.

Outside a kernel nothing renders widgets, so runs print plain text and approvals go straight
to the headless policy; everything else (magics, transformer, config, load/unload) is the same.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agent_ext.jupyter import extension, session
from agent_ext.jupyter.config import AgentExt
from agent_ext.jupyter.transformer import AwaitAgentCells

KEY = "sk-" + "shell" * 4


@pytest.fixture(scope="module")
def shell() -> Iterator[InteractiveShell]:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    ip = InteractiveShell.instance(config=config)
    yield ip
    InteractiveShell.clear_instance()


@pytest.fixture
def ip(shell: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
       ) -> Iterator[InteractiveShell]:
    """The shell with the extension loaded, in a scratch directory; unloaded afterwards."""
    monkeypatch.chdir(tmp_path)
    shell.run_line_magic("load_ext", "agent_ext")
    yield shell
    shell.run_line_magic("unload_ext", "agent_ext")
    assert extension._loaded == {} and session._session is None


def _registered(shell: InteractiveShell) -> tuple[bool, bool, int, int]:
    return ("agent" in shell.magics_manager.magics["line"],
            "agent" in shell.magics_manager.magics["cell"],
            sum(isinstance(t, AwaitAgentCells) for t in shell.input_transformers_post),
            sum(isinstance(c, AgentExt) for c in shell.configurables))


def test_load_unload_load(shell: InteractiveShell) -> None:
    assert _registered(shell) == (False, False, 0, 0)
    for _ in range(2):
        shell.run_line_magic("load_ext", "agent_ext")
        assert _registered(shell) == (True, True, 1, 1)
        ticker = session.current().ticker
        shell.run_line_magic("unload_ext", "agent_ext")
        assert _registered(shell) == (False, False, 0, 0)
        assert ticker.active == 0
        assert extension._loaded == {} and session._session is None


def test_transformer_awaits_only_agent_cells(ip: InteractiveShell) -> None:
    assert ip.transform_cell("%%agent\nhi {x}\n").startswith(
        "await get_ipython().run_cell_magic('agent', ''")
    assert ip.transform_cell("%agent status\n") == "get_ipython().run_line_magic('agent', 'status')\n"
    assert ip.transform_cell("%%time\n1\n").startswith("get_ipython().run_cell_magic('time'")
    ip.autoawait = False
    try:
        assert ip.transform_cell("%%agent\nhi\n").startswith("get_ipython()")
    finally:
        ip.autoawait = True


def test_agent_cell_runs_and_denies_headless(ip: InteractiveShell, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from agent_ext import FunctionTool, get_agent
    from agent_ext.models import ScriptedModel, call

    def write_note(path: str) -> str:
        """Write a note."""
        Path(path).write_text("x")
        return "written"

    agent = get_agent(model=ScriptedModel([call("write_note", {"path": "n.txt"}), "Done."]))
    agent.registry.register(FunctionTool(write_note, defer=False))
    result = ip.run_cell("%%agent\nwrite a note")
    assert result.success, result.error_in_exec
    out = capsys.readouterr().out
    assert "[approval] write_note(path='n.txt'): rejected by the headless policy" in out
    assert "Done." in out
    assert not (tmp_path / "n.txt").exists()
    assert session.current().frontend.state == "absent"


def test_python_form_shows_the_run(ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
                                   ) -> None:
    ip.run_cell("import agent_ext\nfrom agent_ext.models import ScriptedModel\n"
                "agent_ext.get_agent(model=ScriptedModel(['from python']))")
    result = ip.run_cell("r = await agent_ext.get_agent().run('hello')")
    assert result.success, result.error_in_exec
    assert "from python" in capsys.readouterr().out
    assert ip.user_ns["r"].text == "from python"


def test_pending_run_is_explained_when_not_awaited(ip: InteractiveShell) -> None:
    from agent_ext.models import ScriptedModel

    session.get_agent(model=ScriptedModel(["x"]))
    pending = ip.run_cell_magic("agent", "", "hello")
    assert "not started" in repr(pending)


def test_key_stays_secret(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": KEY)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    ip.run_line_magic("agent", "key anthropic")
    assert os.environ["ANTHROPIC_API_KEY"] == KEY
    out = capsys.readouterr()
    assert "ANTHROPIC_API_KEY is set for this kernel only" in out.out
    assert KEY not in out.out + out.err
    with pytest.raises(UsageError) as err:
        ip.run_line_magic("agent", "key sk-pasted-by-mistake")
    assert "sk-pasted" not in str(err.value) and "hidden prompt" in str(err.value)


def test_check_kernel_versions() -> None:
    in_kernel = SimpleNamespace(kernel=object())
    extension.check_kernel(SimpleNamespace(), "6.29.0")  # not a kernel: nothing to check
    extension.check_kernel(in_kernel, "7.4.0")
    extension.check_kernel(in_kernel, "8.0.0a1")
    with pytest.raises(UsageError, match=r"ipykernel 7.4 or newer; this kernel runs ipykernel 7\.3"):
        extension.check_kernel(in_kernel, "7.3.9")


def test_mode_needs_a_policy_with_modes(ip: InteractiveShell) -> None:
    from agent_ext.models import ScriptedModel
    from agent_ext.permissions import FixedPolicy

    session.get_agent(model=ScriptedModel([]), policy=FixedPolicy())
    with pytest.raises(UsageError, match="takes no modes or rules"):
        ip.run_line_magic("agent", "mode plan")
    with pytest.raises(UsageError, match="takes no modes or rules"):
        ip.run_line_magic("agent", "deny Bash(rm:*)")


def test_notebook_path(tmp_path: Path) -> None:
    from agent_ext.jupyter.notebook_path import notebook_path

    (tmp_path / "nb.ipynb").write_text("{}")
    assert notebook_path({}, {}, tmp_path) is None
    assert notebook_path({}, {"JPY_SESSION_NAME": "console-1-abc"}, tmp_path) is None
    assert notebook_path({}, {"JPY_SESSION_NAME": "sub/nb.ipynb"}, tmp_path) == str(
        tmp_path / "nb.ipynb")
    assert notebook_path({"__session__": "/abs/x.ipynb"}, {}, tmp_path) == "/abs/x.ipynb"
    assert notebook_path({"__vsc_ipynb_file__": "/v/code.ipynb", "__session__": "/abs/x.ipynb"},
                         {}, tmp_path) == "/v/code.ipynb"


def test_undo_reverts_the_last_agent_write(ip: InteractiveShell, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from agent_ext.fs import EditHistory
    from agent_ext.models import ScriptedModel, call

    agent = session.get_agent(model=ScriptedModel([
        call("write_file", {"file_path": "new.txt", "content": "made by the agent"}), "Done."]))
    if "write_file" not in agent.registry:
        agent.registry.register_lazy("write_file", "agent_ext.tools.write_file:WriteFileTool")
    ip.run_line_magic("config", "AgentExt.headless_allow = ['write_file']")
    ip.run_line_magic("agent", "undo")
    assert "Nothing to undo" in capsys.readouterr().out
    assert ip.run_cell("%%agent\nwrite new.txt").success
    assert (tmp_path / "new.txt").read_text() == "made by the agent"
    ip.run_line_magic("agent", "undo")
    assert "Reverted 1 write(s): new.txt" in capsys.readouterr().out
    assert not (tmp_path / "new.txt").exists()
    del agent.context.services[EditHistory]
    for name in ("edit", "write_file", "notebook_edit"):
        if name in agent.registry:
            agent.registry.unregister(name)
    with pytest.raises(UsageError, match="keep no edit history"):
        ip.run_line_magic("agent", "undo")
    ip.run_line_magic("config", "AgentExt.headless_allow = []")


def test_session_agent_knows_its_notebook(ip: InteractiveShell, tmp_path: Path) -> None:
    from agent_ext.models import ScriptedModel

    (tmp_path / "analysis.ipynb").write_text("{}")
    ip.user_ns["__session__"] = "folder/analysis.ipynb"
    try:
        agent = session.get_agent(model=ScriptedModel([]))
    finally:
        del ip.user_ns["__session__"]
    assert agent.notebook == str(tmp_path / "analysis.ipynb")
    assert "analysis.ipynb" in agent.session_context()


def test_usage_messages_name_what_to_type(ip: InteractiveShell,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    for kind in ("allow", "deny", "ask"):
        with pytest.raises(UsageError) as found:
            ip.run_line_magic("agent", kind)
        assert "{" not in str(found.value) and f"`%agent {kind} read_file`" in str(found.value)
    for line in ("mcp", "mcp list"):
        ip.run_line_magic("agent", line)
        out = capsys.readouterr().out
        assert "no MCP servers configured; add one with `%agent mcp add NAME" in out
        assert "to list the servers" not in out


def test_entering_bypass_mode_warns_once(ip: InteractiveShell,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_line_magic("agent", "mode yolo")
    assert "Warning: every tool call now runs without asking" in capsys.readouterr().out
    ip.run_line_magic("agent", "mode bypassPermissions")
    assert "Warning" not in capsys.readouterr().out
    ip.run_line_magic("agent", "mode default")
    assert capsys.readouterr().out.strip() == "mode: default"


def test_agent_undo_lines_are_awaited_only_in_a_kernel_running_asyncio() -> None:
    from IPython.core.async_helpers import _asyncio_runner

    class Shell:
        autoawait = True
        loop_runner = _asyncio_runner
        kernel = object()

    undo = "get_ipython().run_line_magic('agent', 'undo')\n"
    other = "get_ipython().run_line_magic('agent', 'undone')\n"
    lines = ["x = 1\n", undo, "  " + undo, other]
    assert AwaitAgentCells(Shell())(lines) == ["x = 1\n", "await " + undo, "  " + undo, other]
    terminal = Shell()
    terminal.kernel = None  # type: ignore[assignment]
    assert AwaitAgentCells(terminal)(lines) == lines  # no kernel: %agent undo runs at once
    off = Shell()
    off.autoawait = False
    assert AwaitAgentCells(off)([undo]) == [undo]


def test_undo_takes_back_file_writes_and_cell_edits_newest_first(
        ip: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    import nbformat

    from agent_ext.models import ScriptedModel, call

    nb_path = tmp_path / "work.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1", id="first")]), nb_path)
    session.get_agent(model=ScriptedModel([
        call("write_file", {"file_path": "a.txt", "content": "one"}),
        call("read_file", {"file_path": "work.ipynb"}),
        call("notebook_edit", {"notebook_path": "work.ipynb", "cell_id": "first",
                               "new_source": "x = 2"}),
        call("write_file", {"file_path": "b.txt", "content": "two"}),
        "Done."]))
    ip.run_line_magic("config", "AgentExt.headless_allow = ['write_file', 'notebook_edit']")
    try:
        assert ip.run_cell("%%agent\nwrite, edit, write").success
        capsys.readouterr()
        ip.run_line_magic("agent", "history")
        listed = capsys.readouterr().out.splitlines()
        assert [re.sub(r"^\s*\d+ \d\d:\d\d:\d\d ", "", line) for line in listed[1:4]] == [
            "created a.txt (write_file)", "edited cell 1 · [ ] · `x = 2` in work.ipynb",
            "created b.txt (write_file)  ← next to undo"]
        ip.run_line_magic("agent", "undo")
        assert not (tmp_path / "b.txt").exists()
        ip.run_line_magic("agent", "undo")
        assert "Undone: cell 1 · [ ] · `x = 1` in work.ipynb" in capsys.readouterr().out
        assert nbformat.read(nb_path, as_version=4).cells[0].source == "x = 1"
        ip.run_line_magic("agent", "undo")
        assert not (tmp_path / "a.txt").exists()
    finally:
        ip.run_line_magic("config", "AgentExt.headless_allow = []")
