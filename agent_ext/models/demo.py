"""DemoModel: replays recorded sessions so agent_ext can be tried before a model is configured.

A session is a JSON file in ``demo_sessions/``::

    {"description": "...", "match": ["read", "open"],
     "vars": {"path": {"from_prompt": "regex", "default": "README.md"}},
     "steps": [{"text": "Reading {path}.", "tool_calls": [{"name": "read_file",
                                                            "arguments": {"path": "{path}"}}]},
               {"text": "It says: {last_result}", "text_on_error": "It failed: {last_result}"}]}

Templates are deliberately tiny: in any string of a step (text or tool arguments) ``{name}`` is
replaced by the variable ``name`` and any other brace is left alone. Built-in variables are
``prompt`` (the user's latest message), ``cwd`` (from the system prompt's ``Working directory:``
line, ``.`` without one), ``last_tool`` and ``last_result`` (the latest tool result of this turn,
whitespace collapsed and cut to 300 characters). ``vars`` (per session, then per step) define
more: a string template, or ``{"from_prompt": REGEX}`` / ``{"from_last_result": REGEX}`` with an
optional ``"default"``, which takes the regex's first group (or whole match). Arguments may use
those objects directly too. ``text_on_error`` replaces ``text`` when the latest tool result was
an error.

Each user prompt replays the session whose ``match`` keywords overlap it most (``default`` when
none does); a session plays once per conversation, and every request past its end is answered
with a note that the replay is over. Every text starts with ``[demo replay]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from agent_ext.core import TextPart

from .base import StreamItem, TextDelta, ToolCallDelta
from .types import ModelRequest, ModelResponse, ToolCall

PREFIX = "[demo replay] "
RESULT_CHARS = 300
END_TEXT = (
    "The replay has no more steps for this conversation. To go on with a real model, type "
    "`%agent key openai`, then `%agent model openai:gpt-4o` (`%agent model` lists every choice, "
    "local servers too); outside a notebook set AGENT_EXT_MODEL and OPENAI_API_KEY.")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_EXTRACTORS = ("from_prompt", "from_last_result")


@dataclass(frozen=True)
class DemoStep:
    """One recorded model step."""

    text: str
    text_on_error: str | None = None
    tool_calls: tuple[tuple[str, Any], ...] = ()
    vars: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class DemoSession:
    """A recorded session: the keywords that select it and its steps."""

    name: str
    description: str
    match: frozenset[str]
    steps: tuple[DemoStep, ...]
    vars: Mapping[str, Any] | None = None


class DemoModel:
    """A model that replays recorded sessions, every text labelled as a replay.

    With ``session`` it always replays that session; otherwise each prompt picks its own.
    ``sessions`` replaces the shipped ones (it must hold a ``default``).
    """

    def __init__(self, session: str | None = None, *,
                 sessions: Mapping[str, DemoSession] | None = None) -> None:
        sessions = dict(load_sessions() if sessions is None else sessions)
        if "default" not in sessions:
            raise ValueError("demo sessions need one named `default`")
        if session is not None and session not in sessions:
            raise ValueError(f"no demo session named {session!r}; choose one of "
                             f"{', '.join(sorted(sessions))}")
        self.sessions = sessions
        self.session = session

    @property
    def name(self) -> str:
        return "demo (replay)"

    def choose(self, prompt: str) -> DemoSession:
        """The session a prompt replays: the fixed one, else the best keyword overlap."""
        if self.session is not None:
            return self.sessions[self.session]
        words = set(re.findall(r"\w+", prompt.lower()))
        best = self.sessions["default"]
        best_score = 0
        for session in self.sessions.values():
            score = len(words & session.match)
            if score > best_score:
                best, best_score = session, score
        return best

    def reply(self, request: ModelRequest) -> ModelResponse:
        """The next recorded step for this conversation; never raises."""
        messages = request.messages
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        played: set[str] = set()
        current: DemoSession | None = None
        for i in users:
            session = self.choose(_prompt(messages[i].parts))
            current = None if session.name in played else session
            played.add(session.name)
        start = users[-1] + 1 if users else 0
        index = sum(1 for m in messages[start:] if m.role == "assistant")
        if current is None or index >= len(current.steps):
            return ModelResponse(text=PREFIX + END_TEXT)
        step = current.steps[index]
        variables, sources, failed = _variables(request, start, current, step)
        text = step.text_on_error if failed and step.text_on_error else step.text
        calls = tuple(ToolCall.of(f"demo_{len(users)}_{index}_{k}", name,
                                  _fill(args, variables, sources))
                      for k, (name, args) in enumerate(step.tool_calls))
        return ModelResponse(text=PREFIX + _fill(text, variables, sources), tool_calls=calls)

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """``reply`` as a coroutine, like ``ScriptedModel.respond``."""
        return self.reply(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """The step's text word by word, then its tool calls, then the response."""
        response = self.reply(request)
        for piece in re.findall(r"\S+\s*|\s+", response.text):
            yield TextDelta(piece)
        for k, call in enumerate(response.tool_calls):
            yield ToolCallDelta(k, call.id, call.name, call.arguments)
        yield response


def _text(parts: tuple[Any, ...]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def _is_context(part: Any) -> bool:
    """The session context or the where-you-are lines agent_ext puts before a prompt (not the
    user's words)."""
    return isinstance(part, TextPart) and part.text.startswith(
        ("[agent_ext: session context]", "[agent_ext: where you are]"))


def _prompt(parts: tuple[Any, ...]) -> str:
    """The user's words of a prompt message."""
    return _text(tuple(p for p in parts if not _is_context(p)))


def _variables(request: ModelRequest, start: int, session: DemoSession,
               step: DemoStep) -> tuple[dict[str, str], dict[str, str], bool]:
    """A step's template variables, the texts regexes search, and whether the latest tool
    result was an error."""
    messages = request.messages
    prompt = _prompt(messages[start - 1].parts) if start else ""
    # The working directory is in the session context (the first user turn), or in the
    # system prompt of a caller that puts it there.
    context = _text(messages[0].parts) if messages else ""
    cwd = re.search(r"^Working directory: (.+)$", context + "\n" + request.system, re.MULTILINE)
    returns = [r for m in messages[start:] for r in m.tool_returns]
    last = returns[-1] if returns else None
    result = " ".join(_text(last.content).split()) if last else ""
    if len(result) > RESULT_CHARS:
        result = result[:RESULT_CHARS - 1] + "…"
    variables = {"prompt": prompt, "cwd": cwd.group(1).strip() if cwd else ".",
                 "last_tool": last.name if last else "", "last_result": result}
    sources = {"from_prompt": prompt, "from_last_result": _text(last.content) if last else ""}
    for scope in (session.vars, step.vars):
        for name, template in (scope or {}).items():
            variables[name] = _value(template, variables, sources)
    return variables, sources, bool(last and last.is_error)


def _value(template: Any, variables: Mapping[str, str], sources: Mapping[str, str]) -> str:
    """A variable's value: a filled string template, or a regex extraction."""
    if isinstance(template, str):
        return str(_fill(template, variables, sources))
    key = next(k for k in _EXTRACTORS if k in template)
    found = re.search(template[key], sources[key][:20_000], re.MULTILINE)
    value = (found.group(1) if found.groups() else found.group(0)) if found else None
    if value is None:
        return str(_fill(str(template.get("default", "")), variables, sources))
    return str(value)


def _fill(value: Any, variables: Mapping[str, str], sources: Mapping[str, str]) -> Any:
    """``value`` with ``{name}`` placeholders replaced in every string it contains."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: variables.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        if any(k in value for k in _EXTRACTORS):
            return _value(value, variables, sources)
        return {k: _fill(v, variables, sources) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, variables, sources) for v in value]
    return value


@lru_cache(maxsize=1)
def load_sessions() -> dict[str, DemoSession]:
    """Every shipped session by name (the file name without ``.json``)."""
    folder = resources.files(__package__ or "agent_ext.models") / "demo_sessions"
    sessions = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            name = entry.name[:-len(".json")]
            sessions[name] = parse_session(name, json.loads(entry.read_text(encoding="utf-8")))
    if "default" not in sessions:
        raise ValueError("the demo sessions lack a `default` session; reinstall agent_ext")
    return sessions


def parse_session(name: str, data: Mapping[str, Any]) -> DemoSession:
    """A checked session; a malformed one raises ValueError naming what is wrong."""
    def fail(what: str) -> ValueError:
        return ValueError(f"demo session {name!r}: {what}")

    steps = []
    for n, raw in enumerate(data.get("steps") or [], 1):
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            raise fail(f"step {n} needs a non-empty `text`")
        calls = tuple((c["name"], c.get("arguments", {})) for c in raw.get("tool_calls", []))
        if any(not isinstance(c, str) or not isinstance(a, dict) for c, a in calls):
            raise fail(f"step {n} has a tool call without a name or with non-object arguments")
        steps.append(DemoStep(text, raw.get("text_on_error"), calls,
                              _checked_vars(raw.get("vars"), fail)))
    if not steps:
        raise fail("has no `steps`")
    match = data.get("match", [])
    if not isinstance(match, list) or not all(isinstance(w, str) for w in match):
        raise fail("`match` must be a list of keywords")
    return DemoSession(name, str(data.get("description", "")),
                       frozenset(w.lower() for w in match), tuple(steps),
                       _checked_vars(data.get("vars"), fail))


def _checked_vars(raw: Any, fail: Any) -> Mapping[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise fail("`vars` must be an object")
    for name, template in raw.items():
        if isinstance(template, str):
            continue
        keys = [k for k in _EXTRACTORS if isinstance(template, dict) and k in template]
        if len(keys) != 1:
            raise fail(f"var {name!r} must be a string or have one of {', '.join(_EXTRACTORS)}")
        try:
            re.compile(template[keys[0]])
        except (re.error, TypeError) as exc:
            raise fail(f"var {name!r} has a bad regex: {exc}") from exc
    return raw
