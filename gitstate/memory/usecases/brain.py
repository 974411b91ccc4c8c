"""Opening the brain and the one write path every memory command goes through.

A write, under the brain's lock: read the tip, compute the new files, check them (the 500-line
cap of MEMORY.md, the credential scan of the lines the write adds), commit on the tip,
compare-and-swap refs/agy/memory (retrying on a moved tip), then move the plain-text cache the
agent hook reads by the files written, and start a repack in the background when one is due.
Sync merges do not come through here: they are never refused for size and never scanned
(docs/memory.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from gitstate import secrets
from gitstate.document import controls
from gitstate.errors import Failure, NotFound, SecretFound
from gitstate.memory.document import files
from gitstate.memory.storage.brain import Brain
from gitstate.memory.storage.layout import MEMORY_REF, BrainLayout
from gitstate.storage import lock as lock_mod
from gitstate.storage import refs
from gitstate.storage.snapshots import compose_message

COMPACT_HINT = "git agy-state memory compact (or git agy-state memory edit MEMORY.md)"

# path -> new text (None: delete the file); computed from the brain at a tip.
Change = Callable[[Brain, str | None], dict[str, str | None]]


class Written(NamedTuple):
    commit: str | None  # None: nothing changed
    paths: tuple[str, ...]
    warnings: tuple[str, ...]
    created: bool  # the brain was created by this write
    memory_lines: int
    brain: str

    def as_json(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "paths": list(self.paths),
            "warnings": list(self.warnings),
            "created": self.created,
            "memory_lines": self.memory_lines,
            "brain": self.brain,
        }


def open_brain(create: bool = False) -> tuple[Brain, bool]:
    """The brain (created when `create`); its cache brought to the tip on the way."""
    layout = BrainLayout()
    if create:
        brain, created = Brain.create(layout)
    else:
        brain, created = Brain.open(layout), False
    tip = brain.tip()
    if tip is None:
        raise NotFound(
            f"the brain at {layout.path} has no memory yet", hint="git agy-state memory init"
        )
    brain.check_format(tip)
    brain.refresh_cache()
    return brain, created


def exists() -> bool:
    return BrainLayout().exists()


def memory_warning(lines: int, when: str = "") -> str | None:
    if lines <= files.WARN_AT:
        return None
    over = "over the limit" if lines > files.LINE_LIMIT else "near the limit"
    return (
        f"MEMORY.md {lines}/{files.LINE_LIMIT} lines{when} ({over}; "
        "compact it: git agy-state memory compact)"
    )


def write(
    change: Change,
    subject: str,
    layer: str | None = None,
    allow_secret: bool = False,
    brain: Brain | None = None,
) -> Written:
    """Commit what `change` computes on the tip; nothing when it changes nothing."""
    created = False
    if brain is None:
        brain, created = open_brain(create=True)
    with lock_mod.held(brain.layout.lock_path):
        for _attempt in refs.attempts(MEMORY_REF):
            tip = brain.tip()
            wanted = change(brain, tip)
            changes = {p: t for p, t in wanted.items() if t != brain.text(tip, p)}
            current = brain.text(tip, files.MEMORY_FILE) or ""
            lines = files.count_lines(current)
            if not changes:
                return Written(None, (), (), created, lines, str(brain.layout.path))
            warnings = _capacity(current, changes)
            _refuse_controls(brain, tip, changes)
            if not allow_secret:
                _refuse_secrets(brain, tip, changes)
            new_text = changes.get(files.MEMORY_FILE)
            if new_text is not None:
                lines = files.count_lines(new_text)
            trailers = [(files.FORMAT_TRAILER, files.FORMAT_VERSION)]
            if layer:
                trailers.append(("Agy-Memory-Layer", layer))
            trailers.append(("Agy-Memory-Files", ", ".join(sorted(changes))))
            message = compose_message(subject, trailers)
            data = {p: (t.encode() if t is not None else None) for p, t in changes.items()}
            commit = brain.commit(tip, data, [tip] if tip else [], message)
            if brain.compare_and_swap(tip, commit, f"agy-state memory: {subject[:60]}"):
                if tip is None:
                    brain.refresh_cache()
                else:
                    brain.advance_cache(tip, commit, data)
                brain.maintain()
                return Written(
                    commit,
                    tuple(sorted(changes)),
                    tuple(warnings),
                    created,
                    lines,
                    str(brain.layout.path),
                )
    raise AssertionError("refs.attempts raises when they run out")


def _capacity(current: str, changes: dict[str, str | None]) -> list[str]:
    """Refuse MEMORY.md growing past the limit; warn past WARN_AT (docs/memory.md)."""
    if files.MEMORY_FILE not in changes:
        return []
    before = files.count_lines(current)
    after = files.count_lines(changes[files.MEMORY_FILE] or "")
    if after > files.LINE_LIMIT and after > before:
        raise Failure(
            f"MEMORY.md would have {after}/{files.LINE_LIMIT} lines; it holds durable facts only",
            hint=COMPACT_HINT,
        )
    warning = memory_warning(after)
    return [warning] if warning else []


def _refuse_controls(brain: Brain, tip: str | None, changes: dict[str, str | None]) -> None:
    """Refuse a write whose new lines hold control characters (docs/memory.md): the memory is
    printed and injected, and a terminal would obey them. Lines already there (a merge brought
    them) are left alone."""
    for path, text in sorted(changes.items()):
        if text is None:
            continue
        old = set((brain.text(tip, path) or "").split("\n"))
        for number, line in enumerate(text.split("\n"), 1):
            char = controls.first(line + "\n" if line.endswith("\r") else line)
            if char is not None and line not in old:
                raise Failure(
                    f"refusing to write {path}: line {number} holds the control character "
                    f"{controls.name(char)}",
                    hint="remove it: terminal escapes, backspaces and bidi overrides make text "
                    "show as something else",
                )


def _refuse_secrets(brain: Brain, tip: str | None, changes: dict[str, str | None]) -> None:
    """Scan what this write adds to each file, whole blocks seen (a key body added under a
    BEGIN line already there is caught); refuse the whole write on a hit."""
    for path, text in sorted(changes.items()):
        if text is None:
            continue
        hits = secrets.scan_changed(text, brain.text(tip, path))
        if hits:
            raise secret_refusal(f"write {path}", hits)


__all__ = ["Change", "Written", "exists", "memory_warning", "open_brain", "write"]


def secret_refusal(action: str, hits: list[secrets.SecretHit]) -> SecretFound:
    """The one refusal of a brain write (or import) that holds a credential: the first hit's
    line, kind and excerpt, how many more, and the way past it."""
    first = hits[0]
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    return SecretFound(
        f"refusing to {action}: line {first.line} looks like a {first.kind}: {first.excerpt}{more}",
        hits,
        hint="remove it, or pass --allow-secret if it is not a secret",
    )
