"""Search over deferred tools for ``tool_search``: ranks tools for a query the model writes.

The model has seen only tool names, so queries paraphrase, abbreviate and misspell them; the
index folds names into words, stems them, relates generic software and everyday synonyms and
phrases, reads abbreviations, tolerates typos, tells questions from requests and weights rare
words above common ones. Pure Python and stdlib only.
"""

from __future__ import annotations

from ._index import SearchIndex
from ._model import SearchDoc, SearchHit, SearchOutcome

__all__ = ["SearchDoc", "SearchHit", "SearchIndex", "SearchOutcome"]
