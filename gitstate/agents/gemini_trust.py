"""Is a folder trusted by Gemini CLI? Its hooks (the project's and the user's alike) run only in
a trusted folder (docs/agents.md, "Gemini CLI: folder trust"), so install's note and doctor's
check ask this.

Gemini CLI 0.61.0 (packages/cli/src/config/trustedFolders.ts): folder trust is on unless
`security.folderTrust.enabled` is false; `GEMINI_CLI_TRUST_WORKSPACE=true` trusts any folder;
otherwise `trustedFolders.json` in the user directory (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH` if
set) maps absolute paths to TRUST_FOLDER, TRUST_PARENT (the path's parent and everything under
it) or DO_NOT_TRUST, and the longest rule path that contains the folder (both resolved) wins.
Read only, never written: trusting a folder is the user's decision. Standard library only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TRUST_ENV = "GEMINI_CLI_TRUST_WORKSPACE"
FOLDERS_ENV = "GEMINI_CLI_TRUSTED_FOLDERS_PATH"
FOLDERS_FILE = "trustedFolders.json"
NOTE = (
    "trust the folder, or set GEMINI_CLI_TRUST_WORKSPACE=true; --skip-trust does not load "
    "project hooks"
)


def folders_path(user_dir: Path) -> Path:
    value = os.environ.get(FOLDERS_ENV)
    return Path(value) if value else user_dir / FOLDERS_FILE


def verdict(folder: Path, user_dir: Path) -> tuple[bool | None, str]:
    """(trusted?, why) for folder: True, False, or None when the trust file cannot be read."""
    if os.environ.get(TRUST_ENV, "").lower() == "true":
        return True, f"{TRUST_ENV}=true in this environment"
    settings = _read(user_dir / "settings.json")
    security = settings.get("security") if isinstance(settings, dict) else None
    folder_trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(folder_trust, dict) and folder_trust.get("enabled") is False:
        return True, f"folder trust is off (security.folderTrust.enabled in {user_dir})"
    path = folders_path(user_dir)
    if not path.exists():
        return False, f"{folder} is not trusted ({path} does not exist)"
    rules = _read(path)
    if not isinstance(rules, dict):
        return None, f"cannot read {path} as a JSON object"
    where = _real(folder)
    best: tuple[int, str] | None = None
    for rule, level in rules.items():
        if not isinstance(rule, str) or level not in (
            "TRUST_FOLDER",
            "TRUST_PARENT",
            "DO_NOT_TRUST",
        ):
            continue
        root = _real(Path(os.path.dirname(rule) if level == "TRUST_PARENT" else rule))
        if (where == root or where.startswith(root.rstrip(os.sep) + os.sep)) and (
            best is None or len(rule) > best[0]
        ):
            best = (len(rule), level)
    if best is None:
        return False, f"{folder} is not trusted (no rule in {path} covers it)"
    if best[1] == "DO_NOT_TRUST":
        return False, f"{folder} is marked DO_NOT_TRUST in {path}"
    return True, f"{folder} is trusted ({best[1]} in {path})"


def _read(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _real(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return str(path)
