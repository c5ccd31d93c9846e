"""The code of the test notebooks' cells: a scripted agent, and a check that dumps the live model.

The model is a ``ScriptedModel`` (no model service is reached); the session's own notebook
provider reaches the labextension, so the agent's reads and edits go through the bridge.
"""

from __future__ import annotations

SETUP = '''\
%load_ext agent_ext
import agent_ext
from agent_ext.models import ModelResponse, ScriptedModel, ToolCall, call
agent = agent_ext.get_agent(model=ScriptedModel([
{steps}
    "Done.",
]))
'''

READ = '    call("read_file", {"file_path": "nb://"}),'
REPLACE = ('    call("notebook_edit", {"cell_id": "target", '
           '"new_source": "total = 40 + 2\\nprint(total)"}),')
INSERT = ('    call("notebook_edit", {"edit_mode": "insert", "cell_id": "target", '
          '"cell_type": "markdown", "new_source": "## Fixed by the agent"}),')

CHECK = '''\
import json
from agent_ext.jupyter.bridge import bridge_provider
_doc = bridge_provider(get_ipython()).current()
await _doc.save()
_snap = await _doc.read()
json.dump({"live": _doc.live, "path": _doc.path,
           "cells": [[c.id, c.cell_type, c.source] for c in _snap.cells]}, open("live.json", "w"))
'''


def setup(*steps: str) -> str:
    """The setup cell for a scripted agent taking ``steps`` (then answering "Done.")."""
    return SETUP.replace("{steps}", "\n".join(steps))
