"""Regenerate the ready-made agent plugin files next to this script: hooks/agy, hooks/claude,
hooks/gemini. They are gitstate.usecases.setup.agent_files' output, committed so that they can be
installed straight from a checkout; tests/test_agent_install.py fails when they drift.

    python hooks/generate.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gitstate.usecases.setup.install import write_plugin_dirs

if __name__ == "__main__":
    for path in write_plugin_dirs(Path(__file__).resolve().parent):
        print(path)
