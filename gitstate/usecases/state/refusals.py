"""What a write refuses before anything moves: a document its own reader would refuse, and a
credential in the document or in a message (docs/format.md, docs/secrets.md).

Every writer of a state document (writer.py) and of a tag message (checkpoints.py) asks here;
a refusal is raised before any object or ref is written.
"""

from __future__ import annotations

from gitstate import secrets
from gitstate.document.language import Language
from gitstate.document.model import Document, render
from gitstate.document.validate import BYTE_RULES, Report, check_result
from gitstate.errors import InvalidDocument, SecretFound, UsageError


def refuse_unstorable(text: str, subject: str, user: Language) -> Report:
    """Refuse, before anything is written, a document that breaks a byte rule (over 1 MiB, not
    UTF-8, a control character): a chain whose tip its own reader refuses takes every later save
    and patch down with it. Whatever built the document — a save, a patch, a merge, a restore —
    this holds; only the line and item limits may be broken by a merge (docs/format.md).
    Returns the document's report."""
    try:
        subject.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            "the snapshot message is not UTF-8 text", hint="pass -m UTF-8 text"
        ) from None
    report = check_result(text, user)
    hard = [p for p in report.errors if p.code in BYTE_RULES]
    if hard:
        raise InvalidDocument(
            "refusing to save: the new STATE.md would break the limits every snapshot keeps; "
            "nothing was saved",
            hard,
            hint="git agy-state check lists the rules; shrink or fix the text and try again",
        )
    return report


def refuse_secret_in(what: str, text: str) -> None:
    """Refuse a message (commit subject, tag message) that carries a credential: messages travel
    with the refs they describe (docs/secrets.md)."""
    hits = secrets.scan(text)
    if hits:
        first = hits[0]
        raise SecretFound(
            f"refusing to write: the {what} looks like it holds a {first.kind}: {first.excerpt}",
            hits,
            hint="leave it out of -m, or pass --allow-secret if it is not a secret",
        )


def refuse_secrets(text: str, before: Document | None, source: bytes | None) -> None:
    """Scan what this write adds, whole key blocks seen (a key body added under a BEGIN line
    the tip already holds is caught); refuse the whole write on a hit.

    Hits are named by their line in the user's STATE.md (`source`) when it holds that line:
    the canonical rendering we scan may number lines differently.
    """
    hits = secrets.scan_changed(text, render(before) if before is not None else None)
    if not hits:
        return
    if source is not None:
        rendered = text.splitlines()
        mine = [t.rstrip() for t in source.decode("utf-8", "replace").splitlines()]
        where: dict[str, int] = {}
        for n, t in enumerate(mine, 1):
            where.setdefault(t, n)
        hits = [h._replace(line=where.get(rendered[h.line - 1], h.line)) for h in hits]
    first = hits[0]
    line = first.line
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    raise SecretFound(
        f"refusing to save: line {line} looks like a {first.kind}: {first.excerpt}{more}",
        hits,
        hint="remove it from STATE.md, or pass --allow-secret if it is not a secret",
    )
