"""Shared fixtures: scenario paths, and a lease directory of each test's own."""
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scenario(name):
    return os.path.join(ROOT, "scenarios", "test", name)


@pytest.fixture(autouse=True)
def own_runtime_dir(tmp_path, monkeypatch):
    """Leases of the machine never leak into a test, nor a test's into the machine."""
    monkeypatch.setenv("GPUWATCH_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.delenv("GPUWATCH_SOCKET", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
