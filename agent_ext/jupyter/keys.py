"""``%agent key [provider]``: an API key typed into a hidden prompt, kept in this kernel only.

The key goes into this process's environment (the variable the provider's SDK reads) and
nowhere else: not the cell, not its output, not the input history, not a file. The magic's
line never holds the key, and errors never repeat what was typed after ``key``.
"""

from __future__ import annotations

import getpass
import os
from typing import TYPE_CHECKING

from IPython.core.error import StdinNotImplementedError, UsageError

if TYPE_CHECKING:
    from .session import Session


def _key_providers() -> dict[str, str]:
    from agent_ext.models.config import PROVIDERS  # noqa: PLC0415

    return {name: p.key_env for name, p in PROVIDERS.items() if p.key_env}


def default_provider(session: Session) -> str:
    """The provider of the configured model, else ``openai``."""
    from agent_ext.models.config import MODEL_ENV, parse_model_spec  # noqa: PLC0415

    spec = session.config.model or os.environ.get(MODEL_ENV, "")
    try:
        provider = parse_model_spec(spec)[0] if spec.strip() else "openai"
    except ValueError:
        return "openai"
    return provider if provider in _key_providers() else "openai"


def ask_key(session: Session, words: list[str]) -> str:
    """Prompt for the key of ``words[0]`` (or the configured provider); returns a note."""
    envs = _key_providers()
    if len(words) > 1 or (words and words[0].lower() not in envs):
        # Never echo the words: a pasted key must not reach the output.
        raise UsageError("`%agent key` takes one provider name, not the key: type e.g. "
                         f"`%agent key openai` ({', '.join(envs)}) and paste the key into the "
                         "hidden prompt, so it never appears in the notebook or its history.")
    provider = words[0].lower() if words else default_provider(session)
    env = envs[provider]
    try:
        key = getpass.getpass(f"{env} for {provider} (hidden; kept in this kernel only): ")
    except StdinNotImplementedError:
        raise UsageError(f"this frontend cannot prompt for input; set {env} in the environment "
                         "the kernel starts with (or in a notebook run with a frontend, "
                         "`%agent key`).") from None
    key = key.strip()
    if not key:
        raise UsageError(f"no key entered; {env} is unchanged. Type `%agent key {provider}` to "
                         "try again.")
    os.environ[env] = key
    note = f"{env} is set for this kernel only; it is not saved anywhere."
    if session.has_agent and session.config.model.split(":", 1)[0].lower() == provider:
        from .session import resolve  # noqa: PLC0415

        agent = session.agent()
        agent.model, agent.model_notice = resolve(session.config.model, agent)
        return note + f" The session now uses {session.config.model} with it."
    return note + f" Choose a model with `%agent model {provider}:<model>`."
