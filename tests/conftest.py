"""Shared test setup: no test touches the user's home, config or installed plugins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENT_EXT_CONFIG_DIR", str(home / ".agent_ext"))
    monkeypatch.setenv("AGENT_EXT_PLUGINS", "none")
    for var in ("AGENT_EXT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent
