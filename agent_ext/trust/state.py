"""Whether a project's files are in force now, and why: the answer the session works with.

``check_project(root)`` reads the project (``read_project``), looks the answer up (the
caller's, this session's "trust once", or the store's) and gives a ``ProjectTrust``: the
settings to use (everything when trusted, the narrowed part otherwise) and lines that say why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_ext.settings import Settings, SettingsFile

from .project import SUMMARY_ITEMS, ProjectAsk, ProjectFiles, read_project
from .store import TrustRecord, TrustStore, trusted_once

#: ``nothing``: the project asks for nothing to trust; ``trusted``/``distrusted``: a kept
#: answer for exactly these files; ``once``: trusted for this session; ``code``/``refused``:
#: the caller said so (``Agent(trust_project=...)``); ``unanswered``: not asked yet, or the
#: files changed since the answer.
Status = Literal["nothing", "trusted", "once", "code", "distrusted", "refused", "unanswered"]
TrustChoice = bool | Literal["once"] | None
TRUST_HINT = "type `%agent trust` to trust them (`%agent trust --once` for this session only)"


@dataclass(frozen=True)
class ProjectTrust:
    """A project, its trust status and the settings that follow from it."""

    files: ProjectFiles
    status: Status
    record: TrustRecord | None = None
    problems: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        return self.files.root

    @property
    def ask(self) -> ProjectAsk:
        return self.files.ask

    @property
    def trusted(self) -> bool:
        """Whether everything in the project's files applies."""
        return self.status in ("nothing", "trusted", "once", "code")

    @property
    def needs_answer(self) -> bool:
        """Whether the user should be asked (something is withheld and nobody answered)."""
        return self.status == "unanswered"

    @property
    def changed(self) -> bool:
        """Whether an earlier answer was for other file contents."""
        return self.record is not None and self.record.digest != self.ask.digest

    @property
    def _whole(self) -> bool:
        return self.status in ("trusted", "once", "code")

    @property
    def settings(self) -> Settings:
        """The settings in force: all of them when trusted, else the narrowing part (and the
        user's own items)."""
        return self.files.settings if self._whole else self.files.narrowed

    @property
    def mcp_json(self) -> SettingsFile | None:
        """``.mcp.json`` as in force (only disabled and own entries when not trusted)."""
        return self.files.mcp_json if self._whole else self.files.narrowed_mcp_json

    def withheld(self) -> str:
        """One line: what is withheld and what to type to trust it ("" when nothing is)."""
        if self.trusted:
            return ""
        why = {"distrusted": f"you chose Don't trust on {self.record.date}" if self.record
               else "you chose Don't trust",
               "refused": "the agent was made with trust_project=False",
               "unanswered": "not trusted yet" + (" (the files changed since you answered)"
                                                  if self.changed else "")}[self.status]
        return (f"project files of {self.root} not in force ({why}): withheld "
                f"{self.ask.summary()}; {TRUST_HINT}.")

    def lines(self) -> list[str]:
        """What ``%agent status`` says about the project's settings and servers."""
        ask = self.ask
        out: list[str] = []
        if self.status == "nothing":
            out.append("project trust: nothing to trust (no servers or widening settings in "
                       "the project's files)")
        elif self.trusted:
            when = {"trusted": f"trusted on {self.record.date}" if self.record else "trusted",
                    "once": "trusted once (this session only)",
                    "code": "trusted by the code (trust_project=True)"}[self.status]
            out.append(f"project trust: {when}; in force: {ask.summary()}")
        else:
            out.append("project trust: " + self.withheld())
            if len(ask.items) > SUMMARY_ITEMS:
                out += [f"  withheld: {i.render()}" for i in ask.items]
        if ask.narrowing:
            out.append("narrowing rules applied: " + ", ".join(ask.narrowing))
        if ask.own:
            out.append("added by you through agent_ext, in force: "
                       + ", ".join(f"{i.label()} ({i.file})" for i in ask.own))
        out += list(self.problems)
        return out


def check_project(root: str | Path, *, trust: TrustChoice = None,
                  trusted_digest: str | None = None, store: TrustStore | None = None,
                  environ: Mapping[str, str] | None = None) -> ProjectTrust:
    """The trust status of ``root`` now (see the module docstring); never raises for files.

    ``trust`` is the caller's answer (True, "once" or False); with ``trusted_digest`` a True or
    "once" holds only while the files still have that digest, so an edit asks again.
    """
    store = store if store is not None else TrustStore(environ=environ)
    files = read_project(root, environ=environ, own=store.own(root))
    ask = files.ask
    record = store.lookup(files.root)
    problems = tuple(store.problems)
    if not ask:
        return ProjectTrust(files, "nothing", record, problems)
    if trust is False:
        return ProjectTrust(files, "refused", record, problems)
    caller = trust is not None and trusted_digest in (None, ask.digest)
    if trust is True and caller:
        return ProjectTrust(files, "code", record, problems)
    if (trust == "once" and caller) or trusted_once(ask):
        return ProjectTrust(files, "once", record, problems)
    if record is not None and record.digest == ask.digest:
        return ProjectTrust(files, record.answer, record, problems)
    return ProjectTrust(files, "unanswered", record, problems)
