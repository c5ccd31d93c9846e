"""Search over deferred tools for ``tool_search``: ranks tools for a query the model writes.

The model has seen only tool names, so queries paraphrase, abbreviate and misspell them. The
index scores tools with BM25F over name, server, description and parameter names, and widens
each query word by mechanical rules: a table of abbreviations, groups of action verbs, typo
correction against the catalogue's own words, prefixes, consonant skeletons, and server
initials. Pure Python; docs/tool-search.md explains it.
"""

from __future__ import annotations

from ._index import SearchIndex
from ._model import SearchDoc, SearchHit, SearchOutcome

__all__ = ["SearchDoc", "SearchHit", "SearchIndex", "SearchOutcome"]
