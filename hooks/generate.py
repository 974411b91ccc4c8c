"""Regenerate the ready-made agent plugin files next to this script: one folder per agent CLI
in gitstate/agents/ (hooks/agy, hooks/claude, hooks/gemini). They are the agents' plugin_files()
output, committed so that they can be installed straight from a checkout;
tests/test_agent_install.py fails when they drift. The generator itself is
gitstate.usecases.setup.install (`python -m gitstate.usecases.setup.install --write-hooks-dir`);
this script only runs it on this folder.

    python hooks/generate.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from gitstate.usecases.setup.install import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["--write-hooks-dir", str(HERE)]))
