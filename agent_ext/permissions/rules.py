"""Permission rules: parsing ``Tool`` / ``Tool(specifier)`` and matching commands and domains.

Every rule keeps where it came from, so a decision can say "denied by Bash(rm *) in
/p/.agent_ext/settings.json:7". A rule that cannot be parsed becomes a ``RuleProblem`` that names
the file, the line and what is wrong; it never silently matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .names import (
    FETCH_RULE_TOOLS,
    PATH_RULE_TOOLS,
    SHELL_RULE_TOOLS,
    ToolSelector,
    fold,
    selector,
    valid_rule_name,
)

RuleKind = Literal["allow", "deny", "ask"]
Form = Literal["tool", "command", "path", "domain"]
KINDS: tuple[RuleKind, ...] = ("deny", "ask", "allow")

#: Command pattern tokens: a literal character, ``*``, or "the next n tokens are optional".
_CHAR, _STAR, _OPT = 0, 1, 2
Token = tuple[int, str]
#: Stands for a word whose value is only known when the shell runs (``$X``, ``$(...)``).
DYNAMIC = object()
_NOT_NAME = re.compile(r"[^a-z0-9_-]")


@dataclass(frozen=True)
class RuleOrigin:
    """Where a rule came from: the session, code, or a settings file and line."""

    source: str
    path: Path | None = None
    line: int | None = None

    def describe(self) -> str:
        if self.path is not None:
            return f"{self.path}:{self.line}" if self.line else str(self.path)
        return {"session": "this session's rules",
                "code": "the rules passed to the agent"}.get(self.source, self.source)


@dataclass(frozen=True)
class RuleProblem:
    """A rule that cannot be used, and why; reported, never silently dropped."""

    source: str
    line: int | None
    rule: str
    message: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: permission rule {self.rule!r} {self.message}; it is ignored."


@dataclass(frozen=True)
class CommandPattern:
    """A ``Bash(...)`` specifier compiled into tokens for matching."""

    tokens: tuple[Token, ...]

    def matches(self, text: Sequence[object], *, dynamic_is_wild: bool = False) -> bool:
        """Whether the pattern matches ``text`` (characters, or ``DYNAMIC`` for unknown words).

        A ``DYNAMIC`` word is covered only by ``*``, unless ``dynamic_is_wild``: then it may
        stand for anything (how deny and ask rules see it).
        """
        toks = self.tokens
        states = _closure({0}, toks)
        for symbol in text:
            if symbol is DYNAMIC and dynamic_is_wild:
                states = _any_string(states, toks)
                continue
            nxt = {i for i in states if i < len(toks) and toks[i][0] == _STAR}
            if symbol is not DYNAMIC:
                nxt |= {i + 1 for i in states
                        if i < len(toks) and toks[i][0] == _CHAR and toks[i][1] == symbol}
            states = _closure(nxt, toks)
            if not states:
                return False
        return len(toks) in states


def _closure(states: set[int], toks: tuple[Token, ...]) -> set[int]:
    seen = set(states)
    stack = list(states)
    while stack:
        i = stack.pop()
        if i >= len(toks):
            continue
        kind, arg = toks[i]
        nxt = (i + 1,) if kind == _STAR else (i + 1, i + 1 + int(arg)) if kind == _OPT else ()
        for j in nxt:
            if j not in seen:
                seen.add(j)
                stack.append(j)
    return seen


def _any_string(states: set[int], toks: tuple[Token, ...]) -> set[int]:
    """Every pattern position reachable by consuming any string from ``states``."""
    seen = set(states)
    stack = list(states)
    while stack:
        i = stack.pop()
        for j in _closure({i + 1}, toks) if i < len(toks) and toks[i][0] == _CHAR else ():
            if j not in seen:
                seen.add(j)
                stack.append(j)
    return _closure(seen, toks)


def compile_command(spec: str) -> CommandPattern | str:
    """Compile a Bash specifier, or say what is wrong with it.

    ``*`` matches anything; a space before ``*`` makes it a word boundary (``ls *`` matches
    ``ls`` and ``ls -la`` but not ``lsof``); a trailing ``:*`` is the legacy prefix form.
    A backslash makes the next character literal.
    """
    body = spec
    if body.endswith(":*") and not body.endswith("\\:*"):
        body = body[:-2].rstrip() + " *"
    chars: list[Token] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            chars.append((_CHAR, body[i + 1]))
            i += 2
            continue
        if ch == ":" and body.startswith(":*", i):
            return "uses `:*` before the end; `:*` only works as a suffix (or use ` *`)"
        if ch == "*":
            if chars and chars[-1][0] == _STAR:
                pass
            elif chars and chars[-1] == (_CHAR, " "):
                chars[-1:] = [(_OPT, "2"), (_CHAR, " "), (_STAR, "")]
            else:
                chars.append((_STAR, ""))
        else:
            chars.append((_CHAR, ch))
        i += 1
    if not chars:
        return "has an empty command; write `Bash` to cover every command"
    return CommandPattern(tuple(chars))


@dataclass(frozen=True)
class Rule:
    """One parsed rule: kind, the tools it covers, its specifier and its origin."""

    kind: RuleKind
    text: str
    tool: str
    selector: ToolSelector
    form: Form = "tool"
    specifier: str | None = None
    command: CommandPattern | None = field(default=None, compare=False)
    origin: RuleOrigin = RuleOrigin("session")

    def where(self) -> str:
        """``Bash(rm *) in /p/.agent_ext/settings.json:7`` (for reasons)."""
        return f"{self.text} in {self.origin.describe()}"

    def covers_tool(self, name: str, server: str | None, remote: str | None = None) -> bool:
        """Whether the rule covers the tool registered as ``name``.

        For an MCP tool (``server`` given, ``remote`` its own name on the server) the rule is
        also matched on the pair, so ``mcp__srv__tool`` still covers a tool whose registered
        name was shortened or made unique, and ``mcp__a__b`` names the server ``a__b``.
        """
        if server is None or not self.tool.startswith("mcp__"):
            return self.selector.covers(name, server)
        if self.covers_server(server) or fold(name) in self.selector.names:
            return True
        return remote is not None and self.tool[5:] in _spellings(f"{server}__{remote}")

    def covers_server(self, server: str) -> bool:
        """Whether the rule names the whole MCP server (``mcp__srv`` or ``mcp__srv__*``).

        ``mcp__a__b`` could be the server ``a__b`` or the tool ``b`` of ``a``: a deny or ask
        rule takes both readings, an allow rule only the tool (``mcp__a__b__*`` allows the
        whole server ``a__b``), so an unexpected server name never widens an allow rule.
        """
        if not self.tool.startswith("mcp__"):
            return False
        rest = self.tool[5:]
        if rest.endswith("__*"):
            rest = rest[:-3]
        elif self.kind == "allow" and "__" in rest:
            return False
        return rest in _spellings(server)


def _spellings(name: str) -> set[str]:
    """``name`` folded as written and with the characters tool names refuse made ``_``."""
    folded = fold(name)
    return {folded, _NOT_NAME.sub("_", folded)}


def _split(text: str) -> tuple[str, str | None] | str:
    """``Tool(spec)`` → (name, raw spec); the spec is None for a bare name; or a problem."""
    open_at = text.find("(")
    if open_at < 0:
        return "has a `)` without a `(`" if ")" in text else (text, None)
    depth, i, close = 0, open_at + 1, -1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == ")" and depth == 0:
            close = i
            break
        depth += 1 if ch == "(" else -1 if ch == ")" else 0
        i += 1
    if close < 0:
        return "has unbalanced parentheses; escape literal ones as \\( and \\)"
    if close != len(text) - 1:
        return "has text after its closing parenthesis"
    return text[:open_at], text[open_at + 1:close]


def parse_rule(text: object, kind: RuleKind = "allow",
               origin: RuleOrigin | None = None) -> Rule | RuleProblem:
    """Parse one rule; a ``RuleProblem`` says what is wrong instead of raising."""
    origin = origin or RuleOrigin("session")
    source = str(origin.path) if origin.path is not None else origin.describe()

    def problem(message: str) -> RuleProblem:
        return RuleProblem(source, origin.line, str(text), message)

    if not isinstance(text, str):
        return problem("is not a string")
    stripped = text.strip()
    if "\x00" in stripped:
        return problem("contains a NUL character")
    split = _split(stripped)
    if isinstance(split, str):
        return problem(split)
    name, raw = split
    folded = fold(name.strip())
    if not folded:
        return problem("has no tool name; write e.g. `Bash(git status)` or `Read`")
    if not valid_rule_name(folded):
        return problem("has a tool name with characters tool names never contain "
                       "(letters, digits, _ and - only)")
    rule_selector = selector(folded)
    if raw is None or raw.strip() == "*":
        return Rule(kind, stripped, folded, rule_selector, origin=origin)
    if not raw.strip():
        return problem(f"has an empty specifier; write `{name.strip()}` to cover every call")
    if folded in SHELL_RULE_TOOLS:
        compiled = compile_command(raw)
        if isinstance(compiled, str):
            return problem(compiled)
        return Rule(kind, stripped, folded, rule_selector, "command", raw, compiled, origin)
    spec = raw
    if folded in PATH_RULE_TOOLS:
        trouble = path_problem(spec)
        return problem(trouble) if trouble else Rule(
            kind, stripped, folded, rule_selector, "path", spec, origin=origin)
    if folded in FETCH_RULE_TOOLS:
        domain = parse_domain(spec)
        if domain is None:
            return problem("needs the form `WebFetch(domain:example.com)`")
        return Rule(kind, stripped, folded, rule_selector, "domain", domain, origin=origin)
    return problem(f"gives `{name.strip()}` a specifier it does not take; write "
                   f"`{name.strip()}` to cover every call")


def path_problem(spec: str) -> str | None:
    """What is wrong with a path specifier, or None."""
    if spec.startswith("~") and not (spec == "~" or spec.startswith("~/")):
        return "uses `~user`; only `~/` (your home) is supported, use `//abs/path` for others"
    return None


def parse_domain(spec: str) -> str | None:
    """``domain:example.com`` → ``example.com`` (``*.`` prefix allowed); None if malformed."""
    key, sep, value = spec.partition(":")
    if not sep or key.strip().lower() != "domain":
        return None
    host = fold(value.strip()).rstrip(".")
    host = host.removeprefix("*.")
    if not host or any(not (c.isascii() and (c.isalnum() or c in ".-")) for c in host):
        return None
    return host


def domain_matches(domain: str, host: str) -> bool:
    """The host is the domain or one of its subdomains."""
    return bool(host) and (host == domain or host.endswith("." + domain))
