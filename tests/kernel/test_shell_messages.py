"""Every ``%agent`` command, typed without its arguments and with a wrong one, in a real
IPython shell: each answer is text a user can act on, with no unfilled ``{placeholder}``."""

from __future__ import annotations

import contextlib
import getpass
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from agent_ext.jupyter.commands import SPEC
from tests.kernel.test_shell import shell  # noqa: F401  (the module's shell fixture)
from tests.unit.test_placeholders import PLACEHOLDER

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def typed(shell: InteractiveShell, tmp_path: Path,  # noqa: F811
          monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AGENT_EXT_CONFIG_DIR", str(tmp_path / ".agent_ext"))
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": "")
    shell.run_line_magic("load_ext", "agent_ext")
    shell.run_line_magic("agent", "model demo")
    yield shell
    shell.run_line_magic("unload_ext", "agent_ext")


def _say(ip: InteractiveShell, line: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            ip.run_line_magic("agent", line)
        except UsageError as exc:
            return f"UsageError: {exc}"
    return out.getvalue()


@pytest.mark.parametrize("line", [
    *(name for name, _, _ in SPEC if name not in ("reset", "trust", "untrust")),
    *(f"{name} ((bogus" for name, _, _ in SPEC if name not in ("reset", "trust", "untrust")),
    "mcp list", "mcp add", "mcp remove", "mcp remove nothing-here", "help", "nothing",
])
def test_no_answer_holds_an_unfilled_placeholder(typed: InteractiveShell, line: str) -> None:
    said = _say(typed, line)
    assert said.strip(), f"%agent {line} said nothing"
    left = [m.group(0) for m in PLACEHOLDER.finditer(said)]
    assert not left, f"%agent {line}: {said}"


def test_model_without_an_argument_lists_the_choices(typed: InteractiveShell,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "typed" * 4)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    said = _say(typed, "model")
    assert said.startswith("model: demo\nchoices:\n"), said
    assert "openai: key set (OPENAI_API_KEY)" in said and "typed" not in said
    assert "anthropic: no key: `%agent key anthropic` first" in said
    assert "127.0.0.1" in said and "demo: `%agent model demo`" in said
