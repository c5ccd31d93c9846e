"""The public surface is pinned: a change to it is a reviewed change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import agent_ext
from agent_ext.core import Registry
from agent_ext.tools import register_builtins

SNAPSHOT = Path(__file__).parent / "snapshots" / "builtin_declarations.json"


def test_top_level_all_is_pinned() -> None:
    assert sorted(agent_ext.__all__) == sorted([
        "Agent", "FunctionTool", "Kind", "Registry", "RunResult", "Tool", "ToolResult",
        "__version__", "get_agent", "load_ipython_extension", "tool",
        "unload_ipython_extension",
    ])
    for name in agent_ext.__all__:
        assert getattr(agent_ext, name) is not None


def test_contract_names_are_importable() -> None:
    from agent_ext import Agent, FunctionTool, tool
    from agent_ext.models import ScriptedModel

    assert callable(tool) and FunctionTool and Agent and ScriptedModel
    assert agent_ext.models.ScriptedModel is ScriptedModel


def test_import_is_light() -> None:
    code = ("import sys, agent_ext; "
            "heavy = [m for m in ('IPython', 'ipywidgets', 'openai', 'anthropic', 'mcp', "
            "'agent_ext.agent', 'agent_ext.tools.tool_search', 'jsonschema') "
            "if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_agent_without_mcp_servers_loads_no_mcp_sdk(tmp_path: Path) -> None:
    """The SDK costs about a second to import; it loads with the first configured server."""
    code = ("import sys, agent_ext; from agent_ext.models import ScriptedModel; "
            f"a = agent_ext.Agent(model=ScriptedModel([]), cwd={str(tmp_path)!r}); "
            "print([m for m in ('mcp', 'mcp_types', 'httpx2') if m in sys.modules])")
    env = {**os.environ, "HOME": str(tmp_path), "AGENT_EXT_CONFIG_DIR": str(tmp_path / "cfg"),
           "AGENT_EXT_PLUGINS": "none"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_builtin_declarations_snapshot() -> None:
    reg = Registry()
    register_builtins(reg)
    reg.reveal(reg.deferred())
    current = [d.to_dict() for d in reg.declarations()]
    if os.environ.get("AGENT_EXT_UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n")
    assert current == json.loads(SNAPSHOT.read_text()), (
        "built-in declarations changed; review the change and rerun with "
        "AGENT_EXT_UPDATE_SNAPSHOTS=1 to accept it")
