"""The hostile-input matrix's marker: `pytest -m hostile` runs it alone; the default suite runs it too."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "hostile: the hostile-input matrix (issue 12)")
