"""Semantic tool search: the lexical index fused with static word-piece embeddings, numpy only.

The table ``search/static_embeddings.npz`` holds one vector per word piece of the
all-MiniLM-L6-v2 encoder's vocabulary, distilled from that encoder once by
``scripts/distil_embeddings.py``. A text's vector is the normalised mean of its pieces'
vectors, so a tool is encoded in microseconds and no neural network runs at search time. The
cosine similarity of query and tool joins the lexical score, which lets a paraphrase with no
shared word reach its tool while exact name matches keep their lead.

Needs numpy (the ``embed`` extra); :func:`available` says whether it is there.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
import unicodedata
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .search import SearchDoc, SearchHit, SearchIndex, SearchOutcome
from .search._text import split_words

TABLE_NAME = "static_embeddings.npz"
# Similarities below this are noise between unrelated short texts and are left out.
MIN_SIMILARITY = 0.3
# The similarity's say next to the lexical score scaled to 1 for the best lexical hit; chosen
# on the bench's tuning splits.
WEIGHT = 1.0
# Each query word also stands for up to NEIGHBOURS catalogue words whose vectors are at least
# NEIGHBOUR_SIM similar to its own (``client`` for ``customer``), at NEIGHBOUR times that
# similarity as its sureness: below a word's own 1.0 and an abbreviation's, like a typo's.
# Chosen on the bench's tuning splits.
NEIGHBOURS = 8
NEIGHBOUR_SIM = 0.3
NEIGHBOUR = 0.8
# The longest word the piece tokenizer splits; longer runs are not words.
MAX_WORD = 100


class TableError(RuntimeError):
    """The shipped embedding table is missing or damaged."""


def available() -> bool:
    """Whether semantic search can run: numpy is installed and the table is shipped."""
    return importlib.util.find_spec("numpy") is not None and table_file().is_file()


def table_file() -> Path:
    """The shipped word-piece table (``scripts/distil_embeddings.py`` builds it)."""
    return Path(__file__).parent / "search" / TABLE_NAME


def strip_accents(text: str) -> str:
    """The text with accents dropped (``café`` -> ``cafe``), as the encoder's tokenizer does."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")


def word_pieces(word: str, vocab: dict[str, int]) -> list[int]:
    """WordPiece: the longest known piece from the left, then ``##`` continuations; no pieces
    for a word that cannot be split so (the encoder's ``[UNK]``)."""
    if len(word) > MAX_WORD:
        return []
    ids: list[int] = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                ids.append(vocab[piece])
                break
            end -= 1
        if end == start:
            return []
        start = end
    return ids


class StaticEncoder:
    """Text to unit vectors by averaging the table's word-piece vectors."""

    def __init__(self, path: Path) -> None:
        np = importlib.import_module("numpy")
        try:
            with path.open("rb") as file, np.load(file, allow_pickle=False) as saved:
                pieces, vectors, scale = saved["pieces"], saved["vectors"], saved["scale"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise TableError(f"cannot read the embedding table {path}: {exc}. "
                             "Reinstall agent-ext") from exc
        if vectors.ndim != 2 or len(pieces) != len(vectors) or len(scale) != len(vectors):
            raise TableError(f"the embedding table {path} is damaged. Reinstall agent-ext")
        self.numpy = np
        self._vocab = {str(p): i for i, p in enumerate(pieces.tolist())}
        self._vectors = vectors
        self._scale = scale.astype(np.float32)
        self._words: dict[str, list[int]] = {}
        self.dimensions = int(vectors.shape[1])

    def pieces(self, text: str) -> list[int]:
        """The table rows of the text's word pieces; identifiers are split into words first."""
        ids: list[int] = []
        for word in split_words(strip_accents(text)):
            known = self._words.get(word)
            if known is None:
                known = word_pieces(word, self._vocab)
                if len(self._words) < 1 << 16:
                    self._words[word] = known
            ids.extend(known)
        return ids

    def encode(self, texts: list[str]) -> Any:
        """One unit row per text (zeros for a text with no known piece)."""
        np = self.numpy
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = self.pieces(text)
            if ids:
                v = (self._vectors[ids] * self._scale[ids, None]).mean(axis=0)
                norm = float(np.linalg.norm(v))
                if norm > 0:
                    out[row] = v / norm
        return out


_LOADING = threading.Lock()
_DEFAULT: list[StaticEncoder] = []


def default_encoder() -> StaticEncoder:
    """The shipped table, read once per process (every session agent shares it)."""
    with _LOADING:
        if not _DEFAULT:
            _DEFAULT.append(StaticEncoder(table_file()))
        return _DEFAULT[0]


def _warm() -> None:
    try:
        default_encoder()
    except Exception:  # noqa: BLE001  (the first search reports it and falls back)
        return


def doc_text(doc: SearchDoc) -> str:
    """What is embedded for a tool: its name as words, its server, its first sentence."""
    tool = doc.name.split("__")[-1]
    first = doc.description.strip().split("\n")[0].split(". ")[0]
    server = f" ({doc.server})" if doc.server else ""
    return f"{' '.join(split_words(tool))}{server}: {first}"


class NeighbourIndex(SearchIndex):
    """The lexical index where each query word also stands for the catalogue words nearest to
    it in the embedding table: synonyms that no table lists."""

    def __init__(self, docs: list[SearchDoc], encoder: StaticEncoder) -> None:
        super().__init__(docs)
        self._encoder = encoder
        self._terms = self.catalogue_words()
        self._words = sorted(self._terms)
        self._word_matrix = encoder.encode(self._words)
        self._near: dict[str, dict[str, float]] = {}

    def neighbours(self, word: str) -> dict[str, float]:
        """Catalogue terms of the words nearest ``word``, each with its sureness."""
        near = self._near.get(word)
        if near is None:
            near = {}
            vec = self._encoder.encode([word])[0]
            if vec.any() and self._words:
                sims = self._word_matrix @ vec
                np = self._encoder.numpy
                best = np.argpartition(-sims, min(NEIGHBOURS, len(sims) - 1))[:NEIGHBOURS]
                for i in best.tolist():
                    if sims[i] >= NEIGHBOUR_SIM and self._words[i] != word:
                        t = self._terms[self._words[i]]
                        near[t] = max(near.get(t, 0.0), NEIGHBOUR * float(sims[i]))
            if len(self._near) < 4096:
                self._near[word] = near
        return near

    def variants(self, word: str) -> dict[str, float]:
        """The lexical rules' terms, and the word's neighbours where they are surer."""
        merged = dict(self.neighbours(word))
        for term, sure in super().variants(word).items():
            merged[term] = max(sure, merged.get(term, 0.0))
        return merged


class EmbeddingSearchIndex:
    """Ranks tools by lexical score (with neighbours) fused with embedding similarity."""

    def __init__(self, docs: Iterable[SearchDoc], encoder: StaticEncoder | None = None,
                 weight: float = WEIGHT) -> None:
        self._docs = list(docs)
        self._encoder = encoder or default_encoder()
        self._lexical = NeighbourIndex(self._docs, self._encoder)
        self._weight = weight
        self._matrix = self._encoder.encode([doc_text(d) for d in self._docs])

    def __len__(self) -> int:
        return len(self._docs)

    def search(self, query: str, limit: int = 5) -> SearchOutcome:
        """The best ``limit`` tools for ``query``: the lexical score over the best lexical
        score, plus ``weight`` times the cosine similarity where it is at least
        MIN_SIMILARITY. ``total_matches`` counts the tools either part matched."""
        lexical = self._lexical.search(query, limit=len(self._docs))
        top = lexical.hits[0].score if lexical.hits else 1.0
        fused = {h.name: h.score / top for h in lexical.hits}
        sims = self._matrix @ self._encoder.encode([query])[0]
        for doc, sim in zip(self._docs, sims.tolist(), strict=True):
            if sim >= MIN_SIMILARITY:
                fused[doc.name] = fused.get(doc.name, 0.0) + self._weight * sim
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
        hits = [SearchHit(name, round(score, 4)) for name, score in ranked[: max(0, limit)]]
        return SearchOutcome(hits, len(fused))


class EmbeddingBackend:
    """A registry search backend building :class:`EmbeddingSearchIndex` with one shared
    encoder. Without an ``encoder`` given, the shipped table starts loading in a background
    thread at once (importing numpy and reading it take a few hundred milliseconds), so it is
    ready by the time a model first searches."""

    def __init__(self, encoder: StaticEncoder | None = None, weight: float = WEIGHT) -> None:
        self._encoder = encoder
        self._weight = weight
        self._lock = threading.Lock()
        if encoder is None and not _DEFAULT:
            threading.Thread(target=_warm, name="agent_ext-search-table", daemon=True).start()

    def __call__(self, docs: list[SearchDoc]) -> EmbeddingSearchIndex:
        with self._lock:
            if self._encoder is None:
                self._encoder = default_encoder()
        return EmbeddingSearchIndex(docs, encoder=self._encoder, weight=self._weight)
