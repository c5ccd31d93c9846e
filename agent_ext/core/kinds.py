"""What a tool does, and the sets the scheduler and permissions derive from it."""

from __future__ import annotations

import enum


class Kind(str, enum.Enum):
    """The kind of a tool: used for scheduling and confirmation UI."""

    READ = "read"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    SEARCH = "search"
    EXECUTE = "execute"
    THINK = "think"
    FETCH = "fetch"
    AGENT = "agent"
    OTHER = "other"


#: Kinds whose calls change the world outside the conversation.
MUTATOR_KINDS: frozenset[Kind] = frozenset({Kind.EDIT, Kind.DELETE, Kind.MOVE, Kind.EXECUTE})

#: Kinds whose calls only look, so a read-only tool of one runs side by side with others.
#: THINK is left out: some think tools write.
CONCURRENCY_SAFE_KINDS: frozenset[Kind] = frozenset({Kind.READ, Kind.SEARCH, Kind.FETCH})


class Tier(enum.IntEnum):
    """How much a single call can do: read < write < exec. Computed per call, not per tool."""

    READ = 0
    WRITE = 1
    EXEC = 2


class Permission(str, enum.Enum):
    """A tool's own opinion of a call, before rules and modes are consulted."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"
