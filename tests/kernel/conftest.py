"""Kernel tests: each gets a real ipykernel with a scratch home and working directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kernel.harness import KernelSession, running_kernel


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def kernel(tmp_path: Path, workdir: Path) -> Iterator[KernelSession]:
    """A fresh kernel (shut down after the test) running in ``workdir``."""
    with running_kernel(tmp_path / "home", workdir) as session:
        yield session


@pytest.fixture(scope="module")
def shared_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    """One kernel with the extension loaded, for a module's quick, independent checks."""
    base = tmp_path_factory.mktemp("kernel")
    work = base / "work"
    work.mkdir()
    with running_kernel(base / "home", work) as session:
        session.ok("%load_ext agent_ext")
        yield session
