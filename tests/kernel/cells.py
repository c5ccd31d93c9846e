"""Cell sources the kernel tests share."""

from __future__ import annotations


def scripted_agent(path: str = "note.txt", text: str = "hello", *, final: str = "Done.") -> str:
    """A cell that makes the session agent a scripted one whose first step writes ``path``.

    ``write_note`` is a plain FunctionTool (not read-only), so every call of it needs approval.
    """
    return f'''
import pathlib
import agent_ext
from agent_ext import FunctionTool
from agent_ext.models import ScriptedModel, call

def write_note(path: str, text: str) -> str:
    """Write a text file."""
    pathlib.Path(path).write_text(text)
    return "written"

agent = agent_ext.get_agent(model=ScriptedModel([
    call("write_note", {{"path": {path!r}, "text": {text!r}}}), {final!r}]))
_ = agent.registry.register(FunctionTool(write_note, defer=False))
'''


ANSWERED = """
from agent_ext.agent.transcript import unanswered_calls
msgs = agent_ext.get_agent().messages
calls = [c.id for m in msgs for c in m.tool_calls]
returns = [r.call_id for m in msgs for r in m.tool_returns]
print("unanswered", len(unanswered_calls(msgs)), "calls", calls, "returns", returns)
print("results", [(r.name, r.is_error, r.content[0].text) for m in msgs for r in m.tool_returns])
"""
