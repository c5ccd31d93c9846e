"""Settings files in the common ``settings.json`` shape: project, project-local and user.

Each file is read on its own: a malformed one is reported (file, line, column, what is wrong)
and the others still apply. Nothing here raises for a file's content, and nothing is dropped
without a problem saying so. Only the standard library is used: this module sits below the rest
of agent_ext.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

PROJECT_DIR = ".agent_ext"
SETTINGS_NAME = "settings.json"
LOCAL_SETTINGS_NAME = "settings.local.json"
#: The project file that lists MCP servers, beside the settings files (read by mcp and trust).
MCP_JSON = ".mcp.json"
CONFIG_DIR_ENV = "AGENT_EXT_CONFIG_DIR"
RULE_KINDS = ("allow", "deny", "ask")
#: The values of ``"toolSearch"`` (any case).
TOOL_SEARCHES = ("auto", "lexical", "embed")
#: The values of ``"inBandTools"``: read tool calls models write as text (auto: local servers).
IN_BAND_TOOLS = ("auto", "always", "never")
#: Per-model keys, at the top level (for the configured model) or under ``"modelOptions"``.
MODEL_OPTION_KEYS = ("inBandTools", "contextWindow", "maxOutputTokens", "temperature")

Scope = Literal["project local", "project", "user"]
T = TypeVar("T")


@dataclass(frozen=True)
class SettingsFile:
    """One settings file as read: its data (``{}`` when unusable) and the problems found in it."""

    path: Path
    data: dict[str, Any]
    problems: tuple[str, ...] = ()
    scope: Scope = "project"
    text: str = field(default="", repr=False)

    def line_at(self, offset: int) -> int:
        """The 1-based line of character ``offset`` in the file text."""
        return self.text.count("\n", 0, max(0, offset)) + 1

    def key_offset(self, key: str, start: int = 0) -> int:
        """Where ``"key":`` first appears at or after ``start`` (``start`` when it does not)."""
        found = re.compile(rf'"{re.escape(key)}"\s*:').search(self.text, start)
        return found.start() if found else start

    def rules(self, kind: str) -> list[tuple[str, int]]:
        """The ``permissions.<kind>`` rule strings of this file with the line each is on.

        Lines are found by locating each rule's JSON text after the ``permissions`` and
        ``<kind>`` keys, in order; a rule that cannot be located gets the line of its key.
        """
        permissions = self.data.get("permissions")
        if not isinstance(permissions, dict) or not isinstance(permissions.get(kind), list):
            return []
        key_at = self.key_offset(kind, self.key_offset("permissions"))
        pos = key_at
        out: list[tuple[str, int]] = []
        for rule in permissions[kind]:
            if not isinstance(rule, str):
                continue
            at = -1
            for encoded in dict.fromkeys((json.dumps(rule, ensure_ascii=False), json.dumps(rule))):
                at = self.text.find(encoded, pos)
                if at >= 0:
                    pos = at + len(encoded)
                    break
            out.append((rule, self.line_at(at if at >= 0 else key_at)))
        return out


@dataclass(frozen=True)
class Settings:
    """All settings files found, highest precedence first, with merged look-ups."""

    sources: tuple[SettingsFile, ...]
    searched: tuple[Path, ...] = ()

    @property
    def problems(self) -> tuple[str, ...]:
        """Every problem found, as sentences that name the file and say what to fix."""
        return tuple(p for s in self.sources for p in s.problems)

    def first(self, key: str, kind: type[T]) -> tuple[T, SettingsFile] | None:
        """The highest-precedence value of top-level ``key`` that is a ``kind``."""
        for source in self.sources:
            value = source.data.get(key)
            if isinstance(value, kind) and not (kind is str and not str(value).strip()):
                return value, source
        return None

    def get(self, key: str, default: Any = None) -> Any:
        """The highest-precedence value of any top-level ``key`` (unknown keys included)."""
        for source in self.sources:
            if key in source.data:
                return source.data[key]
        return default

    @property
    def model(self) -> tuple[str, Path] | None:
        """The configured model string and the file it comes from."""
        found = self.first("model", str)
        return (found[0].strip(), found[1].path) if found else None

    def permission_rules(self, kind: str) -> list[tuple[str, Path, int]]:
        """Rules of ``kind`` (allow, deny or ask) from every file: (rule, file, line)."""
        if kind not in RULE_KINDS:
            raise ValueError(f"unknown rule kind {kind!r}; use one of {', '.join(RULE_KINDS)}")
        return [(rule, s.path, line) for s in self.sources for rule, line in s.rules(kind)]

    @property
    def default_mode(self) -> tuple[str, Path] | None:
        """``permissions.defaultMode`` from the highest-precedence file that sets it."""
        for source in self.sources:
            mode = _permissions(source).get("defaultMode")
            if isinstance(mode, str):
                return mode, source.path
        return None

    @property
    def additional_directories(self) -> list[tuple[str, Path]]:
        """``permissions.additionalDirectories`` from every file, with the file of each."""
        return [(d, s.path) for s in self.sources
                for d in _string_list(_permissions(s).get("additionalDirectories"))]

    @property
    def mcp_servers(self) -> dict[str, tuple[dict[str, Any], Path]]:
        """MCP server configs by name; a higher-precedence file wins for the same name."""
        merged: dict[str, tuple[dict[str, Any], Path]] = {}
        for source in reversed(self.sources):
            servers = source.data.get("mcpServers")
            if isinstance(servers, dict):
                merged.update({name: (conf, source.path) for name, conf in servers.items()
                               if isinstance(conf, dict)})
        return merged


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$AGENT_EXT_CONFIG_DIR``, else ``~/.agent_ext`` with ``~`` taken from ``HOME``."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or env.get("USERPROFILE")
    home_path = Path(home) if home else Path.home()
    configured = env.get(CONFIG_DIR_ENV, "").strip()
    if not configured:
        return home_path / PROJECT_DIR
    if configured == "~" or configured.startswith(("~/", "~\\")):
        return home_path / configured[2:]
    return Path(configured)


def settings_paths(cwd: Path | str,
                   environ: Mapping[str, str] | None = None) -> list[tuple[Scope, Path]]:
    """Every settings location, highest precedence first."""
    project = Path(cwd) / PROJECT_DIR
    return [("project local", project / LOCAL_SETTINGS_NAME),
            ("project", project / SETTINGS_NAME),
            ("user", user_config_dir(environ) / SETTINGS_NAME)]


def load_settings(cwd: Path | str = ".", *, environ: Mapping[str, str] | None = None) -> Settings:
    """Read every settings file that exists; never raises for what a file contains."""
    candidates = settings_paths(cwd, environ)
    user_path = _same_file_key(candidates[-1][1])
    sources: list[SettingsFile] = []
    for scope, path in candidates:
        if scope != "user" and _same_file_key(path) == user_path:
            continue  # the project is the home directory: the file is the user's
        if path.exists():
            sources.append(read_settings_file(path, scope))
    return Settings(tuple(sources), tuple(p for _, p in candidates))


def read_settings_file(path: Path, scope: Scope = "project") -> SettingsFile:
    """Read and check one file; its problems are recorded, never raised."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        return _unusable(path, scope, "", f"{path}: is not UTF-8 text ({exc.reason} at byte "
                                          f"{exc.start}); save it as UTF-8 to apply it.")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return _unusable(path, scope, "", f"{path}: cannot be read ({reason}); fix it or "
                                          "remove it to silence this.")
    if not text.strip():
        return SettingsFile(path, {}, (), scope, text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _unusable(path, scope, text, f"{path}:{exc.lineno}:{exc.colno}: not valid JSON "
                                            f"({exc.msg}); this file is ignored until it is "
                                            "fixed.")
    if not isinstance(data, dict):
        return _unusable(path, scope, text, f"{path}:1: the settings must be a JSON object "
                                            f"({{...}}), not {_json_type(data)}; this file is "
                                            "ignored until it is fixed.")
    file = SettingsFile(path, data, (), scope, text)
    return SettingsFile(path, data, tuple(_check(file)), scope, text)


def _unusable(path: Path, scope: Scope, text: str, problem: str) -> SettingsFile:
    return SettingsFile(path, {}, (problem,), scope, text)


def _check(file: SettingsFile) -> list[str]:
    """Problems with the keys agent_ext reads; unknown keys are kept as they are."""
    data, problems = file.data, []

    def problem(key: str, where: int, what: str) -> None:
        problems.append(f"{file.path}:{file.line_at(where)}: {key} {what}; it is ignored.")

    if "model" in data and not (isinstance(data["model"], str) and data["model"].strip()):
        problem('"model"', file.key_offset("model"),
                'must be a model name such as "openai:gpt-4o"')
    if "toolSearch" in data and str(data["toolSearch"]).strip().lower() not in TOOL_SEARCHES:
        problem('"toolSearch"', file.key_offset("toolSearch"),
                'must be "auto", "lexical" or "embed"')
    problems += _check_model_options(file, data, "")
    options = data.get("modelOptions")
    if "modelOptions" in data and not isinstance(options, dict):
        problem('"modelOptions"', file.key_offset("modelOptions"),
                'must be an object of model names, e.g. {"llamacpp:qwen": {"contextWindow": '
                '8192}}')
    elif isinstance(options, dict):
        for name, entry in options.items():
            if not isinstance(entry, dict):
                problem(f'"modelOptions.{name}"', file.key_offset(name), "must be an object")
            else:
                problems += _check_model_options(file, entry, f"modelOptions.{name}.")
    if "mcpServers" in data and not isinstance(data["mcpServers"], dict):
        problem('"mcpServers"', file.key_offset("mcpServers"), "must be an object of servers")
    if "permissions" not in data:
        return problems
    perms = data["permissions"]
    perms_at = file.key_offset("permissions")
    if not isinstance(perms, dict):
        problem('"permissions"', perms_at, "must be an object with allow, deny and ask lists")
        return problems
    for kind in (*RULE_KINDS, "additionalDirectories"):
        if kind not in perms:
            continue
        at = file.key_offset(kind, perms_at)
        if not isinstance(perms[kind], list):
            problem(f'"permissions.{kind}"', at, "must be a list of strings")
            continue
        for item in perms[kind]:
            if not isinstance(item, str):
                problem(f'"permissions.{kind}" entry {json.dumps(item)}', at, "is not a string")
    if "defaultMode" in perms and not isinstance(perms["defaultMode"], str):
        problem('"permissions.defaultMode"', file.key_offset("defaultMode", perms_at),
                "must be a string")
    return problems


def _check_model_options(file: SettingsFile, data: dict[str, Any], prefix: str) -> list[str]:
    out = []
    mode = data.get("inBandTools")
    if "inBandTools" in data and not (isinstance(mode, str) and mode.lower() in IN_BAND_TOOLS):
        out.append(f"{file.path}:{file.line_at(file.key_offset('inBandTools'))}: "
                   f'"{prefix}inBandTools" must be "auto", "always" or "never"; it is ignored.')
    for key in ("contextWindow", "maxOutputTokens"):
        value = data.get(key)
        if key in data and not (isinstance(value, int) and not isinstance(value, bool)
                                and value > 0):
            out.append(f"{file.path}:{file.line_at(file.key_offset(key))}: "
                       f'"{prefix}{key}" must be a positive number of tokens; it is ignored.')
    if "temperature" in data and not _is_temperature(data["temperature"]):
        out.append(f"{file.path}:{file.line_at(file.key_offset('temperature'))}: "
                   f'"{prefix}temperature" must be a number from 0 to 2; it is ignored.')
    return out


def _is_temperature(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 2


def model_options(settings: Settings, spec: str) -> dict[str, Any]:
    """The valid per-model settings for ``spec`` (``provider:model``): top-level keys, then
    ``modelOptions[spec]`` or ``modelOptions[<model>]`` over them, higher files first."""
    _, _, bare = spec.partition(":")
    found: dict[str, Any] = {}
    for source in reversed(settings.sources):
        options = source.data.get("modelOptions")
        layers = [source.data]
        if isinstance(options, dict):
            layers += [options[k] for k in (bare, spec) if k and isinstance(options.get(k), dict)]
        for layer in layers:
            for key in MODEL_OPTION_KEYS:
                value = layer.get(key)
                if key == "inBandTools":
                    if isinstance(value, str) and value.lower() in IN_BAND_TOOLS:
                        found[key] = value.lower()
                elif key == "temperature":
                    if _is_temperature(value):
                        found[key] = value
                elif isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    found[key] = value
    return found


def _permissions(source: SettingsFile) -> dict[str, Any]:
    perms = source.data.get("permissions")
    return perms if isinstance(perms, dict) else {}


def _string_list(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _same_file_key(path: Path) -> str:
    try:
        return str(path.resolve())
    except OSError:
        return str(path.absolute())


def _json_type(value: Any) -> str:
    names = {list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number")
