"""``RulePolicy``: rules, mode and tier decide whether a call runs, asks or is refused.

The order is fixed so that nothing can widen a refusal: the tool's own refusal, deny rules,
plan mode, ask rules, protected places and shell commands that cannot be fully analysed come
before bypass mode, allow rules, the mode's defaults and the auto-mode classifier. Reasons
name what matched (rule and file:line, mode or tier) for the model on a denial and for the
user on a question.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_ext.core import Permission, Tier, ToolInvocation
from agent_ext.fs.atomic import atomic_write
from agent_ext.settings import PROJECT_DIR, Settings, load_settings, user_config_dir

from .modes import (
    NO_CLASSIFIER,
    PLAN_DENIAL,
    Classifier,
    Mode,
    dont_ask,
    first_protected,
    mode_names,
    parse_mode,
)
from .names import SHELL_NAMES, scopes_for, suggest_rules
from .paths import PathPattern, compile_path, inside, lexical, real, state_only, url_hosts
from .policy import PermissionDecision, Verdict
from .rules import KINDS, Rule, RuleKind, RuleOrigin, RuleProblem, domain_matches, parse_rule
from .shell_rules import (
    allow_blocker,
    edit_hit,
    network_command,
    network_note,
    read_hit,
    spec_shape,
)
from .tiers import Call, ShellView, describe

if TYPE_CHECKING:
    from agent_ext.core import Registry

_KINDS: dict[str, RuleKind] = {"allow": "allow", "deny": "deny", "ask": "ask"}


class RulePolicy:
    """The rule-based permission policy (see the module docstring).

    ``cwd`` is the project root; ``rules`` are code rules by kind (``{"deny": ["Bash(rm *)"]}``);
    ``settings`` defaults to the settings files of ``cwd``; ``registry`` gets ``hidden`` set for
    bare-name denies; ``classifier`` is the auto-mode hook. Nothing here raises for bad rules:
    they are listed in ``problems``.
    """

    def __init__(self, cwd: str | Path = ".", *, mode: str | Mode | None = None,
                 rules: Mapping[str, Iterable[str]] | None = None,
                 settings: Settings | None = None,
                 additional_directories: Iterable[str | Path] = (),
                 registry: Registry | None = None,
                 classifier: Classifier | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.cwd = real(Path(cwd).expanduser().absolute(), Path.cwd())
        self.home = str(Path("~").expanduser())
        self.config_dir = real(user_config_dir(environ), self.cwd)
        self.settings = settings if settings is not None else load_settings(self.cwd,
                                                                            environ=environ)
        self.classifier = classifier
        self.registry: Registry | None = None
        self.notices: list[str] = []
        self._problems: list[str] = list(self.settings.problems)
        self._rules: dict[str, list[Rule]] = {kind: [] for kind in KINDS}
        self._patterns: dict[str, PathPattern] = {}
        self._auto_noted = False
        self._load_settings_rules()
        for kind, texts in (rules or {}).items():
            listed: Iterable[str] = [texts] if isinstance(texts, str) else texts
            for text in listed:
                self._add(kind, text, RuleOrigin("code"))
        self.directories: list[str] = []
        for configured_dir, path in self.settings.additional_directories:
            self.add_directory(configured_dir, origin=str(path))
        for extra in additional_directories:
            self.add_directory(extra)
        self.mode = Mode.DEFAULT
        self._mode_given = mode is not None
        if mode is not None:
            self.set_mode(mode)
        else:
            self._settings_mode()
        if registry is not None:
            self.attach(registry)

    @classmethod
    def from_settings(cls, cwd: str | Path = ".", *, environ: Mapping[str, str] | None = None,
                      **kwargs: Any) -> RulePolicy:
        """A policy from the settings files of ``cwd`` (project, local and user)."""
        return cls(cwd, settings=load_settings(cwd, environ=environ), environ=environ, **kwargs)

    # -- configuration --------------------------------------------------------------------------

    def _load_settings_rules(self) -> None:
        scopes = {s.path: s.scope for s in self.settings.sources}
        for kind in KINDS:
            for text, path, line in self.settings.permission_rules(kind):
                self._add(kind, text, RuleOrigin(scopes.get(path, "settings"), path, line))

    def _settings_mode(self) -> Mode:
        """Take the settings' ``defaultMode`` (default mode when none is valid)."""
        configured = self.settings.default_mode
        found = parse_mode(configured[0]) if configured is not None else Mode.DEFAULT
        if found is None and configured is not None:
            problem = (f"{configured[1]}: permissions.defaultMode {configured[0]!r} is not a "
                       f"mode ({mode_names()}); agent_ext uses default mode.")
            if problem not in self._problems:
                self._problems.append(problem)
        return self.set_mode(found or Mode.DEFAULT)

    def apply_settings(self, settings: Settings) -> None:
        """Use ``settings`` instead of the settings read so far (project trust changed).

        Rules and directories from the old files are replaced by the new ones'; the mode
        follows the new files unless a mode was passed or chosen since.
        """
        old_files = {s.path for s in self.settings.sources}
        old_dirs = {real(d, self.cwd) for d, _ in self.settings.additional_directories}
        before = self.settings.default_mode
        mode_kept = self._mode_given or self.mode is not (
            (parse_mode(before[0]) or Mode.DEFAULT) if before is not None else Mode.DEFAULT)
        for kind in KINDS:
            self._rules[kind] = [r for r in self._rules[kind] if r.origin.path not in old_files]
        self.directories = [d for d in self.directories if d not in old_dirs]
        self.settings = settings
        self._problems += [p for p in settings.problems if p not in self._problems]
        self._load_settings_rules()
        for configured_dir, path in settings.additional_directories:
            self.add_directory(configured_dir, origin=str(path))
        if not mode_kept:
            self._settings_mode()
        self._refresh()

    def _add(self, kind: str, text: object, origin: RuleOrigin) -> Rule | RuleProblem:
        checked = _KINDS.get(kind)
        if checked is None:
            found: Rule | RuleProblem = RuleProblem(
                origin.describe(), origin.line, str(text),
                f"is listed under {kind!r}; use allow, deny or ask")
        else:
            found = parse_rule(text, checked, origin)
        if isinstance(found, RuleProblem):
            self._problems.append(str(found))
        elif found not in self._rules[kind]:
            self._rules[kind].append(found)
        return found

    def add_rule(self, kind: str, rule: str, source: str = "session") -> Rule | RuleProblem:
        """Add a rule at run time; a malformed one is returned as a problem (and recorded)."""
        found = self._add(kind, rule, RuleOrigin(source))
        self._refresh()
        return found

    def remove_rule(self, kind: str, rule: str) -> bool:
        """Remove every rule of ``kind`` written exactly ``rule``; whether any was removed."""
        before = len(self._rules.get(kind, []))
        self._rules[kind] = [r for r in self._rules.get(kind, []) if r.text != rule.strip()]
        self._refresh()
        return len(self._rules[kind]) != before

    def rules(self, kind: str) -> tuple[Rule, ...]:
        return tuple(self._rules.get(kind, ()))

    def add_directory(self, directory: str | Path, *, origin: str = "session") -> str:
        """Add a working root (reads there run unasked); returns its resolved path."""
        path = real(directory, self.cwd)
        if not Path(path).is_dir():
            self._problems.append(f"{origin}: additional directory {directory} does not exist "
                                  "(or is not a directory); it is still treated as a working "
                                  "root.")
        if path not in self.directories:
            self.directories.append(path)
        return path

    def set_mode(self, mode: str | Mode) -> Mode:
        """Switch mode; an unknown name raises ``ValueError`` listing the modes."""
        found = parse_mode(mode)
        if found is None:
            raise ValueError(f"unknown permission mode {mode!r}; use one of {mode_names()}")
        self.mode = found
        if found is Mode.AUTO and self.classifier is None and NO_CLASSIFIER not in self.notices:
            self.notices.append(NO_CLASSIFIER)
        return found

    @property
    def problems(self) -> tuple[str, ...]:
        """Malformed rules and settings problems, as sentences naming file and line."""
        return tuple(self._problems)

    @property
    def roots(self) -> tuple[str, ...]:
        """The working roots: the project (cwd) and every additional directory."""
        return (self.cwd, *self.directories)

    def attach(self, registry: Registry) -> None:
        """Hide bare-name-denied tools from the model through ``registry.hidden``."""
        self.registry = registry
        registry.hidden = self.hidden
        registry.refresh()

    def _refresh(self) -> None:
        if self.registry is not None:
            self.registry.refresh()

    def hidden(self, name: str) -> bool:
        """Whether a bare-name deny rule removes this tool from the model's view."""
        server, remote = self._origin(name)
        return any(r.form == "tool" and r.covers_tool(name, server, remote)
                   for r in self._rules["deny"])

    def _origin(self, name: str) -> tuple[str | None, str | None]:
        """The MCP server and the tool's own name there, for a tool of a server."""
        registry = self.registry
        if registry is None or not registry.is_external(name):
            return None, None
        try:
            tool = registry.get(name)
        except Exception:  # noqa: BLE001  a tool that cannot load is matched by its name
            return None, None
        remote = getattr(tool, "mcp_name", None)
        return tool.server, remote if isinstance(remote, str) else None

    # -- matching -------------------------------------------------------------------------------

    def _pattern(self, rule: Rule) -> PathPattern:
        """The rule's compiled path pattern; deny and ask rules match folded spellings too."""
        spec = rule.specifier or ""
        folded = rule.kind != "allow"
        key = f"{'folded' if folded else 'exact'}:{spec}"
        if key not in self._patterns:
            self._patterns[key] = compile_path(spec, project=self.cwd, cwd=self.cwd,
                                               home=self.home, folded=folded)
        return self._patterns[key]

    def _covers(self, rule: Rule, call: Call) -> bool:
        if rule.covers_tool(call.name, call.server, call.remote_name):
            return True
        shell_rule = rule.form == "command" or rule.tool in SHELL_NAMES
        return shell_rule and call.command is not None

    def _hits(self, rule: Rule, call: Call) -> bool:
        """Whether a deny or ask rule matches: any command, location or host suffices.

        Path rules also see into shell commands (``shell_rules``): Edit rules match what the
        command writes, Read rules what it reads, recursive folders included, and a word only
        known at run time matches any rule it could name. Network rules see ``/dev/tcp``.
        """
        if call.shell is not None and self._shell_hit(rule, call.shell) is not None:
            return True
        if not self._covers(rule, call):
            return False
        if rule.form == "tool":
            return True
        if rule.form == "command":
            return call.shell is not None and call.shell.hit_by(rule)
        if rule.form == "path":
            pattern = self._pattern(rule)
            return any(pattern.matches(r) or pattern.matches(lx) for r, lx in call.locations)
        return call.url is not None and any(
            domain_matches(rule.specifier or "", h) for h in url_hosts(call.url))

    def _shell_hit(self, rule: Rule, view: ShellView) -> str | None:
        """What a path or network rule matches in a shell command, as a reason, or None."""
        if view.network and (rule.covers_tool("web_fetch", None) or (
                rule.command is not None and network_command(rule))):
            return network_note(view.touched)
        if rule.form not in ("path", "tool"):
            return None
        # A bare Read or Edit rule names every path.
        spec = rule.specifier if rule.form == "path" else "//**"
        pattern = compile_path(spec or "//**", project=self.cwd, cwd=self.cwd, home=self.home) \
            if rule.form == "tool" else self._pattern(rule)
        shape = spec_shape(spec or "", project=self.cwd, cwd=self.cwd, home=self.home)
        found = None
        if self._edit_rule(rule):
            found = edit_hit(pattern, shape, view.touched)
        if found is None and rule.covers_tool("read_file", None):
            found = read_hit(pattern, shape, view.touched, view.argument_paths,
                             best_effort=rule.form == "path")
        return found

    def _shell_note(self, rule: Rule, call: Call) -> str:
        """``: <what matched>`` for a reason naming ``rule``, or nothing."""
        found = self._shell_hit(rule, call.shell) if call.shell is not None else None
        return f": {found}" if found else ""

    def _edit_rule(self, rule: Rule) -> bool:
        """Edit rules, and Write rules, judge what a shell command writes."""
        return rule.covers_tool("edit", None) or rule.covers_tool("write_file", None)

    def _allows(self, rule: Rule, call: Call) -> bool:
        """Whether an allow rule approves the call: every location or host must match."""
        if not self._covers(rule, call):
            return False
        if rule.form == "path":
            pattern = self._pattern(rule)
            return bool(call.locations) and all(pattern.matches(r) for r, _ in call.locations)
        if rule.form == "domain":
            hosts = url_hosts(call.url) if call.url is not None else set()
            return bool(hosts) and all(domain_matches(rule.specifier or "", h) for h in hosts)
        return call.command is None or rule.form == "tool"

    def _shell_allow(self, call: Call) -> list[Rule] | None:
        """The allow rules covering every simple command, or None if some command is not, or
        the command touches what no rule about its programs can approve (``shell_blocker``)."""
        view = call.shell
        if view is None or not view.complete or view.network:
            return None
        allow = [r for r in self._rules["allow"] if self._covers(r, call)]
        bare = next((r for r in allow if r.form == "tool"), None)
        if bare is not None:
            return [bare]
        if not view.commands or self.shell_blocker(call) is not None:
            return None
        used: list[Rule] = []
        for command in view.commands:
            rule = next((r for r in allow if r.form == "command" and command.allowed_by(r)),
                        None)
            if rule is None:
                return None
            if rule not in used:
                used.append(rule)
        return used

    def shell_blocker(self, call: Call) -> str | None:
        """Why allow rules for a shell command's programs cannot approve it, or None."""
        view = call.shell
        if view is None:
            return None
        if view.network:
            return (f"{network_note(view.touched)}; agent_ext asks for network access from "
                    "the shell in every mode but bypassPermissions")
        edits = [r for r in self._rules["allow"] if r.form in ("path", "tool")
                 and self._edit_rule(r)]
        return allow_blocker(
            view.touched, edit_allowed=lambda p: any(
                r.form == "tool" or self._pattern(r).matches(p) for r in edits),
            in_roots=lambda p: inside(p, self.roots), accept_edits=self.mode is Mode.ACCEPT_EDITS,
            roots=self.roots)

    def read_denied(self, path: str | Path, tool: str = "read_file") -> bool:
        """Whether a deny rule hides ``path`` from ``tool`` (grep/glob/ls filter with this)."""
        try:
            resolved, plain = real(path, self.cwd), lexical(path, self.cwd)
        except ValueError:  # a NUL: no file the rules could name, and none to show
            return True
        for rule in self._rules["deny"]:
            if not rule.covers_tool(tool, None):
                continue
            if rule.form == "tool":
                return True
            if rule.form == "path":
                pattern = self._pattern(rule)
                if pattern.matches(resolved) or pattern.matches(plain):
                    return True
        return False

    def read_asked(self, path: str | Path, root: str | Path, tool: str = "read_file") -> bool:
        """Whether an ask path rule covers ``path`` but not the searched ``root``.

        A search over a folder leaves such files out (grep filters with this): reading one by
        name would ask. When the rule covers the root too, the search itself was asked about.
        """
        try:
            here = (real(path, self.cwd), lexical(path, self.cwd))
            top = (real(root, self.cwd), lexical(root, self.cwd))
        except ValueError:  # a NUL: no file the rules could name, and none to show
            return True
        for rule in self._rules["ask"]:
            if rule.form != "path" or not rule.covers_tool(tool, None):
                continue
            pattern = self._pattern(rule)
            if any(map(pattern.matches, here)) and not any(map(pattern.matches, top)):
                return True
        return False

    # -- deciding -------------------------------------------------------------------------------

    def decide(self, invocation: ToolInvocation[Any]) -> PermissionDecision:
        """Allow, ask or deny, with the reason; never raises (a failure asks or denies)."""
        try:
            call = describe(invocation, self.cwd)
        except Exception as exc:  # noqa: BLE001  a call the policy cannot read is not run unasked
            reason = (f"agent_ext could not work out what this call touches "
                      f"({type(exc).__name__}: {exc})")
            if self.mode in (Mode.DONT_ASK, Mode.PLAN):
                return PermissionDecision(Verdict.DENY, reason)
            return PermissionDecision(Verdict.ASK, reason)
        return self._decide(call)

    def _decide(self, call: Call) -> PermissionDecision:
        name = call.name
        if call.opinion is Permission.DENY:
            return PermissionDecision(Verdict.DENY, f"{name} refuses this call")
        if call.invalid is not None:
            return PermissionDecision(Verdict.DENY, f"{name} was refused: {call.invalid}; "
                                                    "give the path without it")
        for rule in self._rules["deny"]:
            if self._hits(rule, call):
                return PermissionDecision(
                    Verdict.DENY, f"denied by {rule.where()}{self._shell_note(rule, call)}; "
                                  "the user has ruled it out, so do "
                                  "not try to get the same effect another way", rule.text)
        served = self._served(call)
        if served is not None and served.kind == "deny":
            return PermissionDecision(
                Verdict.DENY, f"denied by {served.where()}, which covers reading that MCP "
                              "server's resources too; the user has ruled it out, so do not try "
                              "to get the same effect another way", served.text)
        if self.mode is Mode.PLAN and call.tier > Tier.READ:
            return PermissionDecision(Verdict.DENY, PLAN_DENIAL)
        for rule in self._rules["ask"]:
            if self._hits(rule, call):
                return self._ask(call, f"{rule.where()} asks for approval"
                                 f"{self._shell_note(rule, call)}", rule.text)
        protected = self._protected(call)
        if protected is not None and self.mode is not Mode.BYPASS:
            reason = (f"{name} writes to {protected}, a protected place; agent_ext asks for "
                      "these in every mode but bypassPermissions, and no allow rule or mode "
                      "approves them")
            if self.mode is Mode.DONT_ASK:
                return PermissionDecision(Verdict.DENY, f"agent_ext is in dontAsk mode and "
                                                        f"{reason}; ask the user to make this "
                                                        "change themselves")
            return PermissionDecision(Verdict.ASK, reason)
        if served is not None:  # an ask rule: a deny one refused above
            return self._ask(call, f"{served.where()} asks for approval of reading that MCP "
                                   "server's resources", served.text)
        if call.shell is not None and not call.shell.complete:
            return self._ask(call, self._why_ask(call))
        if call.unresolved:
            return self._unresolved(call)
        if self.mode is Mode.BYPASS:
            return PermissionDecision(Verdict.ALLOW, "allowed by mode bypassPermissions")
        allowed = self._allowed_by(call)
        if allowed:
            return PermissionDecision(
                Verdict.ALLOW, "allowed by rule " + ", ".join(r.where() for r in allowed),
                allowed[0].text)
        default = self._default(call)
        if default is not None:
            return default
        if self.mode is Mode.AUTO and self.classifier is not None:
            return self._classify(call)
        return self._ask(call, self._why_ask(call))

    def _served(self, call: Call) -> Rule | None:
        """The first deny (else ask) rule naming an MCP server whose resources the call reads
        (``mcp://``): such a read counts as a call of that server."""
        for kind in ("deny", "ask"):
            for rule in self._rules[kind]:
                if any(rule.covers_server(server) for server in call.servers):
                    return rule
        return None

    def _unresolved(self, call: Call) -> PermissionDecision:
        reason = (f"agent_ext cannot tell which files {call.unresolved[0]} reaches before it "
                  "is read, so no rule or mode can approve it unasked")
        if self.mode in (Mode.DONT_ASK, Mode.PLAN):
            return PermissionDecision(Verdict.DENY, f"agent_ext is in {self.mode.value} mode "
                                                    f"and {reason}; name the file by its path")
        return PermissionDecision(Verdict.ASK, reason)

    def _allowed_by(self, call: Call) -> list[Rule]:
        if call.command is not None:
            return self._shell_allow(call) or []
        return [r for r in self._rules["allow"] if self._allows(r, call)][:1]

    def _protected(self, call: Call) -> str | None:
        paths: list[str] = []
        if call.shell is not None:
            if call.shell.dynamic_writes:
                return "a redirect target only known when the command runs"
            paths = [*call.shell.write_paths, *call.shell.written_arguments]
        elif call.tier >= Tier.WRITE:
            paths = [p for pair in call.locations for p in pair]
        return first_protected(paths, self.config_dir)

    def _inside(self, call: Call) -> bool:
        """Every location is under a working root, and nothing is fetched from the network."""
        if call.url is not None and not state_only(call.url):
            return False
        return all(inside(r, self.roots) for r, _ in call.locations)

    def _default(self, call: Call) -> PermissionDecision | None:
        if (call.tier is Tier.READ and call.command is None and self._inside(call)
                and call.opinion is Permission.ALLOW):
            return PermissionDecision(Verdict.ALLOW, "read-only call inside the working roots")
        if (self.mode is Mode.ACCEPT_EDITS and call.family == "edit"
                and call.tier <= Tier.WRITE and call.locations and self._inside(call)):
            return PermissionDecision(Verdict.ALLOW,
                                      "allowed by mode acceptEdits (edits inside the working "
                                      "roots run)")
        return None

    def _why_ask(self, call: Call) -> str:
        if call.shell is not None and call.shell.complete and (
                blocker := self.shell_blocker(call)) is not None:
            return f"{call.name} needs approval: {blocker}"
        if call.shell is not None and not call.shell.complete:
            detail = "; ".join(call.shell.problems) or "it could not be parsed"
            return (f"agent_ext could not fully analyse this command ({detail}), so no rule or "
                    "mode can approve it unasked")
        if call.tier is Tier.READ and not self._inside(call):
            outside = [r for r, _ in call.locations if not inside(r, self.roots)]
            if not outside:
                return (f"{call.name} fetches {call.url}, outside the working roots; add a "
                        "WebFetch(domain:...) allow rule to fetch from there without asking")
            return (f"{call.name} reads {outside[0]}, outside the working roots; add its "
                    "directory to permissions.additionalDirectories to read there without "
                    "asking")
        if call.tier is Tier.READ:
            return f"{call.name} asks for approval of this call"
        tier = call.tier.name.lower()
        note = ""
        if self.mode is Mode.AUTO and not self._auto_noted:
            self._auto_noted = True
            note = f" ({NO_CLASSIFIER})"
        return f"{call.name} needs approval ({tier} tier, {self.mode.value} mode){note}"

    def _ask(self, call: Call, reason: str, rule: str | None = None) -> PermissionDecision:
        if self.mode is Mode.DONT_ASK:
            suggestion = suggest_rules(call.invocation, None, self.cwd)
            return PermissionDecision(Verdict.DENY, dont_ask(reason, suggestion), rule)
        return PermissionDecision(Verdict.ASK, reason, rule)

    def _classify(self, call: Call) -> PermissionDecision:
        assert self.classifier is not None
        invocation = call.invocation
        try:
            answer = str(self.classifier(invocation, invocation.classifier_input())).lower()
        except Exception as exc:  # noqa: BLE001  a broken classifier asks, it never allows
            return self._ask(call, f"the auto-mode classifier failed ({exc})")
        if answer == "allow":
            return PermissionDecision(Verdict.ALLOW, "approved by the auto-mode classifier")
        if answer == "deny":
            return PermissionDecision(Verdict.DENY, "refused by the auto-mode classifier; ask "
                                                    "the user or take another approach")
        return self._ask(call, "the auto-mode classifier wants the user to decide")

    # -- "always allow" -------------------------------------------------------------------------

    def scopes(self, invocation: ToolInvocation[Any]) -> tuple[str, ...]:
        """What "always allow" may cover for this call, narrowest first (none for a write to
        a protected place)."""
        return () if self._writes_protected(invocation) else scopes_for(invocation)

    def _writes_protected(self, invocation: ToolInvocation[Any]) -> bool:
        try:
            call = describe(invocation, self.cwd)
        except Exception:  # noqa: BLE001  a call the policy cannot read gets no rule either
            return True
        return self._protected(call) is not None or bool(call.unresolved)

    def always_allow(self, invocation: ToolInvocation[Any], scope: str | None,
                     persist: str) -> str:
        """Add the narrowest sensible allow rule(s); with ``persist="project"`` also save them.

        A write to a protected place gets no rule: such writes are approved one at a time, so
        a rule saved now could never approve one later and would only widen other calls.
        """
        if self._writes_protected(invocation):
            return ""
        texts = suggest_rules(invocation, scope, self.cwd)
        for text in texts:
            self.add_rule("allow", text, "session")
        if texts and persist in ("project", "local", "project local", "user"):
            self.save_rules("allow", texts, persist)
        return ", ".join(texts)

    def settings_file(self, persist: str = "project") -> Path:
        """Where ``persist`` (project, local or user) saves rules."""
        if persist == "user":
            return Path(self.config_dir) / "settings.json"
        name = "settings.local.json" if persist in ("local", "project local") else "settings.json"
        return Path(self.cwd) / PROJECT_DIR / name

    def save_rules(self, kind: RuleKind, texts: Sequence[str], persist: str = "project") -> bool:
        """Append rules to a settings file atomically, keeping everything else in it."""
        path = self.settings_file(persist)
        data: Any = {}
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8-sig") or "{}")
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                self._problems.append(f"{path}: could not save {', '.join(texts)} ({exc}); "
                                      "fix the file and approve again to save the rule.")
                return False
        if not isinstance(data, dict) or not isinstance(data.get("permissions", {}), dict):
            self._problems.append(f"{path}: could not save {', '.join(texts)}: the file's "
                                  "permissions are not an object; fix it to save rules.")
            return False
        perms = data.setdefault("permissions", {})
        existing = perms.get(kind)
        listed = list(existing) if isinstance(existing, list) else []
        listed += [t for t in texts if t not in listed]
        perms[kind] = listed
        _write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return True


def _write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and a rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))

