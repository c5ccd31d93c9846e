"""tool_search: how the model finds deferred tools and loads their schemas.

``select:a,b`` loads named tools; anything else is a keyword search over deferred tools
(revealed ones included, so a forgotten schema can be fetched again). Every tool returned is
revealed: its declaration is sent from the next model request on. The reveal is one step with
refreshing the declarations and is rolled back if that fails.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from pydantic import Field, field_validator

from agent_ext.core import (
    ErrorCode,
    ExecControl,
    Kind,
    Params,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolResult,
)
from agent_ext.core.errors import ToolLoadError
from agent_ext.core.registry import Registry
from agent_ext.core.search import SearchOutcome

MAX_RESULTS = 20


class ToolSearchParams(Params):
    query: str = Field(min_length=1, description="Keywords, or select:name1,name2.")
    max_results: int = Field(default=5)

    @field_validator("max_results", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                return value
        if isinstance(value, float):
            value = int(value) if math.isfinite(value) else 1
        if isinstance(value, int) and not isinstance(value, bool):
            return max(1, min(MAX_RESULTS, value))
        return value


class ToolSearchTool(Tool[ToolSearchParams]):
    name = "tool_search"
    description = (
        "Load deferred tools, listed by name in the system prompt, so you can call them. Give "
        "select:<name>,<name> for known names, or keywords for a capability."
    )
    kind = Kind.OTHER
    params_model = ToolSearchParams
    read_only = True
    always_load = True

    def check(self, params: ToolSearchParams, ctx: ToolContext) -> str | None:
        if not params.query.strip():
            return "`query` is blank; give keywords or select:<name>"
        return None

    def invocation(self, params: ToolSearchParams,
                   ctx: ToolContext) -> ToolInvocation[ToolSearchParams]:
        return _ToolSearchInvocation(self, params, ctx)


class _ToolSearchInvocation(ToolInvocation[ToolSearchParams]):
    def description(self) -> str:
        return f"tool_search {self.params.query!r}"

    async def execute(self, control: ExecControl) -> ToolResult:
        registry = self.ctx.registry
        if registry is None:
            return ToolResult.fail(ErrorCode.TOOL_SEARCH_FAILED,
                                   "tool_search has no registry in this session")
        query = self.params.query.strip()
        if query.lower().startswith("select:"):
            return _select(registry, query[len("select:"):], self.params.max_results)
        limit = self.params.max_results
        query, shortened = (bounded_query(query) if len(query) <= QUICK_QUERY_CHARS
                            else await asyncio.to_thread(bounded_query, query))
        try:
            # Off the event loop: the first search of a session builds the index (and a plugged,
            # model-backed search loads its model), which takes hundreds of milliseconds.
            outcome = await asyncio.to_thread(registry.search, query, limit)
        except ToolLoadError as exc:
            return ToolResult.fail(ErrorCode.TOOL_LOAD_FAILED, str(exc))
        notes = [shortened] if shortened else []
        notice = registry.pop_search_notice()
        if notice is not None:
            control.emit(notice)
            notes.append(notice)
        return _keywords(registry, query, limit, outcome, notes)


#: A query is searched with its first this many distinct words, and at most this many
#: characters; repeated words add nothing to a search.
MAX_QUERY_WORDS = 48
MAX_QUERY_CHARS = 600
#: Queries up to this long are bounded on the event loop (well under a millisecond).
QUICK_QUERY_CHARS = 200


def bounded_query(query: str) -> tuple[str, str]:
    """``query`` without repeated words and cut to the caps, and a note when it was changed."""
    words: list[str] = []
    seen: set[str] = set()
    for word in query.split():
        key = word.casefold()
        if key not in seen:
            seen.add(key)
            words.append(word)
    kept: list[str] = []
    size = 0
    for word in words[:MAX_QUERY_WORDS]:
        if size + len(word) > MAX_QUERY_CHARS:
            break
        kept.append(word)
        size += len(word) + 1
    bounded = " ".join(kept) or query[:MAX_QUERY_CHARS]
    if len(kept) == len(words) and len(words) == len(query.split()):
        return query, ""
    return bounded, (f"The query was searched as its first {len(kept)} distinct words; a few "
                     "keywords find tools best.")


def _select(registry: Registry, spec: str, limit: int) -> ToolResult:
    wanted: list[str] = []
    seen: set[str] = set()
    for raw in spec.split(","):
        name = _unquote(raw.strip())
        if name and name.lower() not in seen:
            seen.add(name.lower())
            wanted.append(name)
    kept, overflow = wanted[:limit], wanted[limit:]
    found, missing, unavailable = [], [], []
    for name in kept:
        canonical = registry.resolve(name)
        if canonical is None:
            missing.append(name)
        elif registry.is_disabled(canonical):
            unavailable.append(name)
        elif canonical not in found:
            found.append(canonical)
    notes = []
    if missing:
        notes.append("Not found: " + ", ".join(missing))
    if unavailable:
        notes.append("Unavailable (disabled by the user): " + ", ".join(unavailable))
    if overflow:
        notes.append(f"Not loaded (over max_results={limit}; ask again): " + ", ".join(overflow))
    if not found:
        return ToolResult(llm_content="\n\n".join(notes) or "No tool names given after select:.")
    return _reveal_and_render(registry, found, notes)


def _keywords(registry: Registry, query: str, limit: int, outcome: SearchOutcome,
              notes: list[str]) -> ToolResult:
    # A tool may have gone (its server dropped) while a plugged search ran in a thread.
    names = [hit.name for hit in outcome.hits if registry.resolve(hit.name) is not None]
    if not names:
        return ToolResult(llm_content="\n\n".join([*notes, (
            f"No deferred tools match {query!r}. Try broader or different keywords, or "
            "select:<name> with a name from the deferred tool list.")]))
    more = outcome.total_matches - len(names)
    if more > 0:
        notes.append(f"{more} more tool(s) matched but were cut by max_results={limit}; "
                     "ask again with more specific keywords or a larger max_results.")
    return _reveal_and_render(registry, names, notes)


def _reveal_and_render(registry: Registry, names: list[str], notes: list[str]) -> ToolResult:
    added: list[str] = []
    try:
        schemas = [registry.get(n).declaration().to_dict() for n in names]
        added = registry.reveal(names)
        registry.declarations()  # the refresh; a tool that cannot be declared undoes the reveal
    except ToolLoadError as exc:
        registry.unreveal(added)
        return ToolResult.fail(ErrorCode.TOOL_LOAD_FAILED,
                               f"{exc}. No tools were loaded; try again without it.")
    body = "\n".join(f"<function>{_escape(json.dumps(s, ensure_ascii=False))}</function>"
                     for s in schemas)
    text = "<functions>\n" + body + "\n</functions>"
    if notes:
        text += "\n\n" + "\n\n".join(notes)
    return ToolResult(llm_content=text, display=f"Loaded {len(names)} tool(s): {', '.join(names)}")


def _escape(text: str) -> str:
    # Keep the tag structure unambiguous: no literal '<' inside a schema.
    return text.replace("<", "\\u003c")


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1].strip()
    return text
