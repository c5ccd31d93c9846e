"""The extension in a real kernel: load → unload → load, usage errors, prompt interpolation."""

from __future__ import annotations

import json

import pytest

from tests.fakes import FakeOpenAI
from tests.fakes import openai_server as oai
from tests.kernel.harness import KernelSession

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

REGISTERED = """
ip = get_ipython()
from agent_ext.jupyter.transformer import AwaitAgentCells
from agent_ext.jupyter.config import AgentExt
print("line", "agent" in ip.magics_manager.magics["line"],
      "cell", "agent" in ip.magics_manager.magics["cell"],
      "transformers", sum(isinstance(t, AwaitAgentCells) for t in ip.input_transformers_post),
      "configurables", sum(isinstance(c, AgentExt) for c in ip.configurables))
"""


def test_load_unload_load(kernel: KernelSession) -> None:
    kernel.ok("%load_ext agent_ext")
    assert kernel.ok(REGISTERED).stdout.split() == [
        "line", "True", "cell", "True", "transformers", "1", "configurables", "1"]
    kernel.ok("import agent_ext\nfrom agent_ext.models import ScriptedModel\n"
              "first = agent_ext.get_agent(model=ScriptedModel(['one']))")
    kernel.ok("%%agent\nhello")
    kernel.ok("%unload_ext agent_ext")
    assert kernel.ok(REGISTERED).stdout.split() == [
        "line", "False", "cell", "False", "transformers", "0", "configurables", "0"]
    assert kernel.ok("print(first._closed)").stdout.strip() == "True"
    gone = kernel.execute("%%agent\nhello")
    assert gone.status == "error" and "UsageError" in gone.error

    kernel.ok("%load_ext agent_ext")
    kernel.ok("%load_ext agent_ext")  # a second load is a no-op
    assert kernel.ok(REGISTERED).stdout.split() == [
        "line", "True", "cell", "True", "transformers", "1", "configurables", "1"]
    kernel.ok("second = agent_ext.get_agent(model=ScriptedModel(['two']))")
    run = kernel.ok("%%agent\nhello again")
    assert "two" in run.stdout
    assert kernel.ok("print(second is not first, len(second.messages))").stdout.split() == [
        "True", "2"]


def test_refuses_old_ipykernel(kernel: KernelSession) -> None:
    run = kernel.execute("import ipykernel\nipykernel.__version__ = '7.3.2'\n"
                         "%load_ext agent_ext")
    assert run.status == "error"
    assert "ipykernel 7.4 or newer" in run.text and "pip install -U 'ipykernel>=7.4'" in run.text
    kernel.ok("ipykernel.__version__ = '7.4.0'\n%load_ext agent_ext")


def test_config_through_traitlets(kernel: KernelSession) -> None:
    kernel.ok("%load_ext agent_ext")
    kernel.ok('%config AgentExt.mode = "acceptEdits"')
    kernel.ok("import agent_ext\nfrom agent_ext.models import ScriptedModel\n"
              "a = agent_ext.get_agent(model=ScriptedModel([]))")
    assert "mode: acceptEdits" in kernel.ok("%agent mode").stdout
    kernel.ok('%config AgentExt.mode = "plan"')
    assert "mode: plan" in kernel.ok("%agent status").stdout
    bad = kernel.execute('%config AgentExt.mode = "sideways"')  # %config reports, not raises
    assert "unknown permission mode 'sideways'" in bad.text
    assert "mode: plan" in kernel.ok("%agent mode").stdout
    kernel.ok("%config AgentExt.max_turns = 3")
    assert kernel.ok("print(a.max_turns)").stdout.strip() == "3"


@pytest.mark.parametrize(("line", "expected"), [
    ("%agent bogus", "%agent has no command 'bogus'"),
    ("%agent save", "Type `%agent save PATH`"),
    ("%agent load /nonexistent/chat.json", "cannot read '/nonexistent/chat.json'"),
    ("%agent mode sideways", "unknown permission mode 'sideways'"),
    ("%agent allow", "type `%agent allow RULE`"),
    ("%agent deny Bash(", "unbalanced"),
    ("%agent model nowhere:thing", "unknown model provider 'nowhere'"),
    ("%agent model openai:gpt-4o", "needs an API key: type `%agent key openai`"),
    ("%%agent\n  \n", "write the prompt in the cell"),
])
def test_usage_errors(shared_kernel: KernelSession, line: str, expected: str) -> None:
    run = shared_kernel.execute(line)
    assert run.status == "error", run.text
    assert run.reply["content"]["ename"] == "UsageError"
    assert expected in run.text
    assert "Traceback" not in run.text


def test_autoawait_off_is_explained(shared_kernel: KernelSession) -> None:
    shared_kernel.ok("%autoawait False")
    try:
        run = shared_kernel.execute("%%agent\nhello")
    finally:
        shared_kernel.ok("%autoawait asyncio")
    assert run.status == "error" and "`%autoawait asyncio`" in run.text


def test_help_lists_every_command(shared_kernel: KernelSession) -> None:
    text = shared_kernel.ok("%agent help").stdout
    for command in ("status", "model", "mode", "allow", "deny", "ask", "tools", "reset",
                    "history", "undo", "cost", "usage", "save", "load", "key"):
        assert f"\n    {command}" in text, command
    assert "%agent save" in text  # argparse's %-formatting did not eat it


def test_interpolation(shared_kernel: KernelSession) -> None:
    shared_kernel.ok("import agent_ext\nfrom agent_ext.models import ScriptedModel\n"
                     "agent = agent_ext.get_agent(model=ScriptedModel(['ok']))\n"
                     "class Obj:\n    shape = (3, 4)\n"
                     "df = Obj(); x = 5")
    shared_kernel.ok("%%agent\n"
                     "x={x} shape={df.shape} missing={nope} attr={df.nope} "
                     "code={'a': 1} f{x + 1} esc={{x}} brace={{ end}")
    prompt = shared_kernel.ok("print(agent.messages[0].parts[0].text)").stdout.strip()
    assert prompt == ("x=5 shape=(3, 4) missing={nope} attr={df.nope} "
                      "code={'a': 1} f{x + 1} esc={x} brace={ end}")


def test_session_commands(shared_kernel: KernelSession, tmp_path_factory: pytest.TempPathFactory
                          ) -> None:
    shared_kernel.ok("import agent_ext\nfrom agent_ext.models import ScriptedModel\n"
                     "agent = agent_ext.get_agent(model=ScriptedModel(['first answer']))")
    shared_kernel.ok("%%agent\nfirst question")
    history = shared_kernel.ok("%agent history").stdout
    assert "1 user: first question" in history and "2 assistant: first answer" in history
    assert "tokens:" in shared_kernel.ok("%agent cost").stdout
    path = tmp_path_factory.mktemp("chat") / "chat.json"
    assert "saved 2 messages" in shared_kernel.ok(f"%agent save {path}").stdout
    assert "conversation cleared" in shared_kernel.ok("%agent reset").stdout
    assert shared_kernel.ok("%agent history").stdout.strip() == (
        "changes: none yet (the agent has changed no file or notebook cell)\n\n"
        "conversation:\nno conversation yet")
    assert "loaded 2 messages" in shared_kernel.ok(f"%agent load {path}").stdout
    assert "allow: Bash(git status:*)" in shared_kernel.ok(
        "%agent allow Bash(git status:*)").stdout
    assert "allow: Bash(git status:*)" in shared_kernel.ok("%agent status").stdout
    assert "removed Bash(git status:*) from allow" in shared_kernel.ok(
        "%agent unrule Bash(git status:*)").stdout
    assert "Bash(git status:*)" not in shared_kernel.ok("%agent status").stdout
    assert "no rule is written" in shared_kernel.execute("%agent unrule Bash(nope)").error
    assert "model: demo (replay)" in shared_kernel.ok("%agent model demo").stdout


KEY_CELL = """
import getpass, os
getpass.getpass = lambda prompt="": "sk-" + "kern" * 5
%agent key openai
"""


def test_key_is_never_shown(kernel: KernelSession) -> None:
    key = "sk-" + "kern" * 5
    kernel.ok("%load_ext agent_ext")
    run = kernel.ok(KEY_CELL)
    assert "OPENAI_API_KEY is set for this kernel only" in run.stdout
    prompts: list[dict[str, object]] = []

    def type_key(msg: dict[str, object]) -> str:
        prompts.append(msg["content"])  # type: ignore[arg-type]
        return key + "-real"

    real = kernel.ok("%agent key anthropic", allow_stdin=True, stdin=type_key)
    assert prompts and prompts[0]["password"] is True
    assert "ANTHROPIC_API_KEY is set" in real.stdout
    check = kernel.ok(
        "key = 'sk-' + 'kern' * 5\n"
        "print(os.environ['OPENAI_API_KEY'] == key, os.environ['ANTHROPIC_API_KEY'] == key + '-real')\n"
        "hist = [h for _, _, h in get_ipython().history_manager.get_range(output=True)]\n"
        "print(any(key in str(h) for h in [*In, *hist, *Out.values()]))")
    assert check.stdout.split() == ["True", "True", "False"]
    everything = json.dumps([m["content"] for r in (run, real) for m in r.messages + r.foreign])
    assert key not in everything
    pasted = kernel.execute("%agent key sk-pasted-by-mistake")
    assert pasted.status == "error" and "sk-pasted" not in pasted.text
    assert "hidden prompt" in pasted.text


def test_a_model_error_fails_the_cell(kernel: KernelSession) -> None:
    refusal = oai.error(401, "Incorrect API key provided", type="invalid_request_error")
    with FakeOpenAI([refusal] * 4) as srv:
        kernel.ok("%load_ext agent_ext")
        kernel.ok("import agent_ext\nfrom agent_ext.models.openai_chat import OpenAIChatModel\n"
                  f"agent_ext.get_agent(model=OpenAIChatModel('gpt-test', base_url={srv.base_url!r},"
                  " api_key='wrong', provider='openai', retry_base_delay=0.01))")
        run = kernel.execute("%%agent\nhello", timeout=60)
        assert run.status == "error", run.text
        assert "AgentRunError" in run.error and "401" in run.text
        assert "Traceback" not in run.text
        after = kernel.execute("print('next cell')", timeout=30)
        assert after.status == "ok"


def test_status_lists_background_shell_jobs(kernel: KernelSession) -> None:
    import os
    import re
    import time

    kernel.ok("%load_ext agent_ext")
    kernel.ok("import agent_ext\nfrom agent_ext.models import ScriptedModel\n"
              "a = agent_ext.get_agent(model=ScriptedModel([]), mode='bypassPermissions')")
    assert "background shell jobs: none running" in kernel.ok("%agent status").stdout
    started = kernel.ok("r = await a.call_tool('shell', {'command': 'sleep 300', "
                        "'run_in_background': True})\nprint(r.text)")
    assert "shell_1" in started.stdout, started.text
    time.sleep(1.2)
    out = kernel.ok("%agent status").stdout
    assert "background shell jobs: 1 running" in out, out
    found = re.search(r"shell_1: `sleep 300` pid (\d+), running ([1-9]\d*)s, stopped at 1h 00m",
                      out)
    assert found, out
    pid = int(found.group(1))
    os.kill(pid, 0)  # the pid shown is the job's live process
    kernel.ok("await a.call_tool('shell_kill', {'job_id': 'shell_1'})")
    assert "background shell jobs: none running" in kernel.ok("%agent status").stdout
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"pid {pid} still runs after shell_kill")
