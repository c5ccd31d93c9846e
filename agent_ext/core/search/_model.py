"""The public records of tool search: what is indexed and what a search returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SearchDoc:
    """One searchable tool: its registered name, description and optional extra words."""

    name: str
    description: str
    search_hint: str = ""
    server: str | None = None
    parameters: Mapping[str, Any] | None = None

    @property
    def external(self) -> bool:
        """Whether the tool comes from an MCP server or plugin rather than agent_ext itself."""
        return self.server is not None


@dataclass(frozen=True)
class SearchHit:
    """One ranked tool."""

    name: str
    score: float


@dataclass(frozen=True)
class SearchOutcome:
    """The best hits, plus how many tools matched at all so a caller can report overflow."""

    hits: list[SearchHit]
    total_matches: int
