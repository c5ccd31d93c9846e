"""``AgentExt``: the extension's settings as a traitlets ``Configurable``.

Settable in ``ipython_config.py`` (``c.AgentExt.model = "openai:gpt-4o"``) and live with
``%config AgentExt.mode = "acceptEdits"``. API keys are not settings: they come from the
providers' environment variables (or ``%agent key``), so they never land in a config file.
"""

from __future__ import annotations

from typing import Any

from traitlets import Float, Int, List, Unicode, validate
from traitlets.config import Configurable

from agent_ext.core.plugins import import_attribute


class AgentExt(Configurable):
    """Settings of the session agent; changes apply to the running session at once."""

    model = Unicode(
        "", help="The model as provider:model (openai:gpt-4o, anthropic:claude-sonnet-4-5, "
        "ollama:qwen3, demo). Empty: AGENT_EXT_MODEL, the settings files, a local server, "
        "else the demo replay.").tag(config=True)
    mode = Unicode(
        "", help="Permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions or "
        "auto. Empty: permissions.defaultMode of the settings files, else default.").tag(
        config=True)
    cwd = Unicode(
        "", help="The agent's working root. Empty: the kernel's working directory when the "
        "agent is created.").tag(config=True)
    max_turns = Int(50, help="Model turns one prompt may take before the run stops.").tag(
        config=True)
    system_prompt = Unicode(
        "", help="Text added to the agent's system prompt.").tag(config=True)
    approval_timeout = Float(
        0.0, help="Seconds to wait for a click on an approval before rejecting it; 0 waits "
        "as long as it takes.").tag(config=True)
    page_gone_timeout = Float(
        120.0, help="Seconds an approval or a question waits once no page shows it (every tab "
        "showing it was closed) before it is withdrawn and the agent told that the user did "
        "not answer; while a page shows it, it waits. 0 waits as long as it takes.").tag(
        config=True)
    ready_timeout = Float(
        2.0, help="Seconds to wait for a widget to report that a frontend rendered it; after "
        "that the session has no frontend and the headless policy decides.").tag(config=True)
    headless_allow = List(
        Unicode(), help="Tool-name patterns (shell-style, e.g. 'write_note', 'mcp__github__*') "
        "the headless policy approves; everything else that asks is rejected.").tag(config=True)

    auto_classifier = Unicode(
        "", help="The auto mode's classifier as 'module:function': called with the tool call and "
        "its classifier input, it answers allow, deny or ask. Empty: auto mode decides as "
        "default mode does.").tag(config=True)

    @validate("auto_classifier")
    def _check_classifier(self, proposal: dict[str, Any]) -> str:
        spec = str(proposal["value"]).strip()
        if spec:
            load_classifier(spec)
        return spec

    @validate("mode")
    def _check_mode(self, proposal: dict[str, Any]) -> str:
        from agent_ext.permissions.modes import mode_names, parse_mode  # noqa: PLC0415

        if not str(proposal["value"]).strip():
            return ""
        found = parse_mode(str(proposal["value"]))
        if found is None:
            raise ValueError(f"unknown permission mode {proposal['value']!r}; use one of "
                             f"{mode_names()}")
        return found.value

    @validate("ready_timeout", "approval_timeout", "page_gone_timeout")
    def _check_seconds(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if value < 0:
            raise ValueError(f"{proposal['trait'].name} must be 0 or more seconds, not {value}")
        return value

    @validate("max_turns")
    def _check_turns(self, proposal: dict[str, Any]) -> int:
        value = int(proposal["value"])
        if value < 1:
            raise ValueError(f"max_turns must be at least 1, not {value}")
        return value


def load_classifier(spec: str) -> Any:
    """The callable a ``module:function`` spec names; ValueError says what is wrong with it."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name.strip() or not attr.strip():
        raise ValueError(f"auto_classifier {spec!r} must be written 'module:function'")
    try:
        found = import_attribute(module_name.strip(), attr.strip())
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"auto_classifier {spec!r} cannot be loaded: {exc}") from None
    if not callable(found):
        raise TypeError(f"auto_classifier {spec!r} is a {type(found).__name__}, not a function")
    return found
