"""``%load_ext agent_ext`` and ``%unload_ext agent_ext``.

Loading is cheap: it registers the magics, the input transformer and the ``AgentExt``
settings object, and imports nothing of the agent, the models or the widgets (the first
``%%agent`` cell does). Unloading removes each of them, stops the tickers and closes the
session agent, so load → unload → load leaves one of everything.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

MIN_IPYKERNEL = (7, 4)


@dataclass
class _Loaded:
    """What one load registered on a shell, to take exactly that away again."""

    magics: Any
    transformer: Any
    config: Any


_loaded: dict[int, _Loaded] = {}


def check_kernel(shell: Any, version: str | None = None) -> None:
    """Refuse to load in a kernel older than ipykernel 7.4, saying why and what to install."""
    if getattr(shell, "kernel", None) is None:
        return  # terminal IPython or plain Python: no kernel, nothing to check
    if version is None:
        module = sys.modules.get("ipykernel")
        version = str(getattr(module, "__version__", "0"))
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
    if numbers < MIN_IPYKERNEL:
        raise UsageError(
            f"agent_ext needs ipykernel 7.4 or newer; this kernel runs ipykernel {version}. "
            "Older kernels do not deliver a widget's click to a cell that is waiting for it, so "
            "every approval would hang. Install it with `%pip install -U 'ipykernel>=7.4'`, "
            "restart the kernel, and `%load_ext agent_ext` again.")


def load_ipython_extension(shell: Any) -> None:
    """Register ``%agent``/``%%agent``, the await transformer and ``AgentExt``."""
    check_kernel(shell)
    if id(shell) in _loaded:
        return
    from .magics import AgentMagics  # noqa: PLC0415
    from .session import current  # noqa: PLC0415
    from .transformer import AwaitAgentCells  # noqa: PLC0415
    from .where import watch  # noqa: PLC0415

    session = current(shell)
    loaded = _Loaded(AgentMagics(shell, session), AwaitAgentCells(shell), session.config)
    shell.register_magics(loaded.magics)
    shell.input_transformers_post.append(loaded.transformer)
    if loaded.config not in shell.configurables:
        shell.configurables.append(loaded.config)
    watch(shell)
    _loaded[id(shell)] = loaded


def unload_ipython_extension(shell: Any) -> None:
    """Take away what ``load_ipython_extension`` added and close the session agent."""
    loaded = _loaded.pop(id(shell), None)
    if loaded is None:
        return
    from .session import end  # noqa: PLC0415
    from .where import unwatch  # noqa: PLC0415

    unwatch(shell)
    manager = shell.magics_manager
    for kind in ("line", "cell"):
        table = manager.magics[kind]
        if getattr(table.get("agent"), "__self__", None) is loaded.magics:
            del table["agent"]
    if manager.registry.get(type(loaded.magics).__name__) is loaded.magics:
        del manager.registry[type(loaded.magics).__name__]
    if loaded.transformer in shell.input_transformers_post:
        shell.input_transformers_post.remove(loaded.transformer)
    if loaded.config in shell.configurables:
        shell.configurables.remove(loaded.config)
    end()
