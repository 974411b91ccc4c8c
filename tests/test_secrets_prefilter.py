"""The scan's prefilters (gitstate/secrets.py) against the same scan with every finder run.

A prefilter may only skip a finder that would report nothing: with secrets._GATES off every
finder is compiled and run on the whole text, and the hits and redactions must be the same.
Also the two newer gates each on its own (_may_hold_value, _run_after), where they are looser
than the rule they guard, and what a job record compiles in a fresh process.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

import test_secret_corpus as corpus
from test_secrets_gates import _required_run, _sample

from gitstate import secrets


@contextmanager
def _ungated() -> Iterator[None]:
    secrets._GATES = False
    try:
        yield
    finally:
        secrets._GATES = True


def _verdicts(text: str) -> tuple[object, ...]:
    lines = list(enumerate(text.split("\n"), start=1))
    return secrets.scan(text), secrets.redact(text), secrets.scan_lines(lines)


def _assert_same(texts: list[str]) -> int:
    """Assert gated and ungated verdicts agree on every text; return how many had hits."""
    gated = [_verdicts(t) for t in texts]
    with _ungated():
        full = [_verdicts(t) for t in texts]
    for text, mine, reference in zip(texts, gated, full, strict=True):
        assert mine == reference, text
    return sum(bool(v[0]) for v in full)


# --- the corpus --------------------------------------------------------------------------

# Values around the shortest one reported (_VALUE_MIN = 6), blanks inside quotes, escapes.
VALUES = [
    "a",
    "abcd5",
    "Ab3d5",
    "Ab3d5f",
    "Ab3d5fG",
    "x9Y8w7V6u5T4s3R2q1P0",
    "a    b",
    " Ab3d5fG ",
    "Ab3\\d5fG",
    "Ab3 d5fG",
    "=Ab3d5fG",
    ">Ab3d5fG",
    "Ab3d5,fG",
    "Ab3d5;fG",
    "Ab3d5&fG",
    "Ab`3d5fG",
    "Ab3d\u00a05fG",
    "\u2003Ab3d5fG",
    "true",
    "1",
    "Ab3d5fG" * 80,
]
NAMES = ["password", "DB_PASS", "api_key", "input_tokens", "tests_passed", "GITHUB_TOKEN",
         "client_secret", "private_key", "ENCRYPTION_KEY", "SERVICE_CREDENTIALS", "pwd",
         "auth_key", "sort_key", "passphrase"]  # fmt: skip
SEPARATORS = ["=", ": ", ":", " = ", ":=", "=>", " => ", "==", "::", ":/", "\t:\t", " := "]


def _assignment_texts(chooser: random.Random) -> list[str]:
    """Each name, separator and value in the shapes a record, a STATE.md or a config has."""
    shapes = [
        lambda n, s, v: f"{n}{s}{v}",
        lambda n, s, v: f'{n}{s}"{v}"',
        lambda n, s, v: f"{n}{s}'{v}'",
        lambda n, s, v: f"export {n}{s}{v}\r\nNEXT=1\r\n",
        lambda n, s, v: f'  "{n}"{s}"{v}",\n  "other": 1\n',
        lambda n, s, v: '{\\"' + n + '\\"' + s + '\\"' + v + '\\",\\"ok\\":true}',
        lambda n, s, v: '"env": "\\n' + n + s + v + '\\nNEXT=1"',
        lambda n, s, v: f"- `{n}{s}{v}` was rotated\n",
        lambda n, s, v: f"{n}{s}\n{v}\n",
        lambda n, s, v: f"{n}{s}{v}; {n}{s}{v[:3]}",
        lambda n, s, v: f"token={n}{s}{v}",
        lambda n, s, v: f"{n}{s}'{v} and token: abc",
    ]
    texts = []
    for name in NAMES:
        for sep in SEPARATORS:
            for value in VALUES:
                shape = chooser.choice(shapes)
                texts.append(shape(name.lower() if chooser.random() < 0.3 else name, sep, value))
    # Long escaped values: up to 512 `\x` escapes between \" and \" (1024 characters).
    for blanks in (500, 506, 508, 510, 1000):
        texts.append('{\\"password\\":\\"' + " " * blanks + "\\a\\a\\b" + '\\"}')
        texts.append('{"password": "' + " " * blanks + 'Ab3d5fG"}')
    return texts


def _token_texts() -> list[str]:
    """The provider formats of tests/test_secret_corpus.py in its contexts, and in a JSON
    record, YAML, a Markdown list, after a colon or dot, with CRLF."""
    rng = random.Random(corpus.SEED)
    positives, lookalikes = corpus.corpus()
    texts = [case.text for case in positives] + lookalikes
    for fmt in corpus.FORMATS:
        token = fmt.make(rng)
        record = {"summary": f"rotated {token}", "usage": {"input_tokens": 1}, "ok": True}
        texts += [
            json.dumps(record, indent=2) + "\n",
            f"{fmt.env.lower()}:\n  value: {token}\r\n",
            f"- [x] rotated `{token}` (see docs/x.md:12)\n",
            f"path/to/file.py:{token}",
            f"x.{token}.y",
            f"tests/test_x.py::test_{token}",
            f"m{token}",
            f"{token[:-1]}\n{token[-1]}",
        ]
    texts.append(corpus.STATE_SAMPLE)
    return texts


def test_the_gates_change_no_verdict_on_the_credential_corpus() -> None:
    texts = _token_texts()
    hits = _assert_same(texts)
    assert hits > 3000  # the corpus reaches the rules


def test_the_gates_change_no_verdict_on_assignments() -> None:
    texts = _assignment_texts(random.Random(6))
    hits = _assert_same(texts)
    assert 200 < hits < len(texts)  # both verdicts occur


def test_the_gates_change_no_verdict_on_random_texts() -> None:
    # Keywords, separators, quotes, escapes and blanks of every kind, densely mixed.
    parts = ["pass", "token", "api_key", "secret", "private_key", "cred", "auth", "pwd", "key",
             "input_tokens", ":", "=", ":=", "=>", "::", "==", '"', "'", "\\", '\\"', "\\n", " ",
             "\t", "\r\n", "\n", "\u00a0", "Ab3d5", "x9Y8w7V6", "ab", "12", ",", ";", "`", "&",
             "/", "-", "_", ".", "m", "ac", "s.", "gh", "p_", "0a1b2c3d4e5f6a7b"]  # fmt: skip
    chooser = random.Random(20261202)
    texts = ["".join(chooser.choice(parts) for _ in range(chooser.randint(3, 30))) for _ in range(6000)]  # fmt: skip
    hits = _assert_same(texts)
    assert hits > 150
    # …and the valued gate acts on many of them: an assignment finder alone would have run.
    lows = [secrets._lower(t) for t in texts]
    literals = secrets._KEYWORD_LITERALS
    acted = sum(
        any(secrets._may_assign(low, lit) for lit in literals)
        and not any(secrets._may_assign(low, lit, valued=True) for lit in literals)
        for low in lows
    )
    assert acted > 500


# --- _may_hold_value: looser than the assignment rule --------------------------------------


def test_may_assign_valued_is_true_wherever_an_assignment_reads_a_long_enough_value() -> None:
    """Where a keyword's pattern and _ASSIGN_REST read a value that is 6 characters or more
    once stripped (the least _is_literal reports), the valued gate says True."""
    rest = re.compile(secrets._ASSIGN_REST)
    chooser = random.Random(7)
    alphabet = [*"aB3 \t\"'\\:=>/,;&`\n", "\\n", '\\"', "\r", "\u00a0", "Ab3d5fG", "ab"]
    reached = edge = 0
    for _, _, literal, pattern in secrets._KEYWORDS:
        finder = re.compile(pattern + secrets._SEPARATOR)
        for _ in range(6000):
            head = "".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, 3)))
            name = literal + chooser.choice(["", "word", "_key", '"', "'", '\\"', "\\'"])
            sep = chooser.choice(["", " ", "\t"]) + chooser.choice([*SEPARATORS, ""])
            tail = "".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, 14)))
            text = head + name + sep + tail
            low = secrets._lower(text)
            for m in finder.finditer(low):
                read = rest.match(text, m.end())
                if read is None:
                    continue
                group = next(g for g in ("eq", "dq", "sq", "b") if read.group(g) is not None)
                size = len(read.group(group).strip())
                if size >= secrets._VALUE_MIN:
                    reached += 1
                    edge += size == secrets._VALUE_MIN
                    assert secrets._may_assign(low, literal, valued=True), (literal, text)
    assert reached > 1000 and edge > 50


def test_the_valued_gate_says_no_to_what_a_job_record_holds() -> None:
    for text in ('"tests_passed": true,', '"input_tokens": 1,', "make them pass: not declared"):
        low = text.lower()
        literals = [lit for _, _, lit, _ in secrets._KEYWORDS if lit in low]
        assert literals and any(secrets._may_assign(low, lit) for lit in literals)
        assert not any(secrets._may_assign(low, lit, valued=True) for lit in literals)
    assert secrets._may_assign('"password": "Ab3d5fG"', "pass", valued=True)
    # No separator: `::`, `:/` and `==` are none (_SEPARATOR), whatever follows.
    for text in ("token::Ab3d5fGh", "token:/Ab3d5fGh", "token==Ab3d5fGh"):
        assert not secrets._may_assign(text, "token", valued=True), text
    # A quoted value is looked for far enough: 512 two-character escapes fit between \" and \".
    escaped = '{\\"password\\":\\"' + "\\a" * 3 + " " * 500 + "\\b" * 3 + '\\"}'
    assert secrets._may_assign(escaped, "pass", valued=True)
    blanks = '{\\"password\\":\\"' + " " * 508 + "\\a\\a\\b" + '\\"}'
    assert secrets._may_assign(blanks, "pass", valued=True)


def test_lowering_keeps_every_character_the_valued_gate_tests() -> None:
    """_may_hold_value reads the lowered text: no character lowers into or out of its sets."""
    tested = set(" \t\n\"'\\:=/>") | secrets._BARE_STOPS
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        low = ch.lower()
        if len(low) != 1 or low == ch:
            continue  # _lower keeps these as they are
        assert (ch in tested) == (low in tested), hex(code)
        assert ch.isspace() == low.isspace(), hex(code)


# --- _run_after: looser than the token finders ---------------------------------------------


def _gap(pattern: str, literal: str) -> int:
    """The widest stretch the pattern allows between its literal and its long run."""
    items = list(_parser.parse(pattern))
    assert all(op is sre.LITERAL for op, _ in items[: len(literal)])
    assert "".join(chr(arg) for _, arg in items[: len(literal)]) == literal
    need = _required_run(pattern)[0]
    gap = 0
    for op, arg in items[len(literal) :]:
        if op is sre.MAX_REPEAT and arg[0] == need:
            return gap
        gap += _parser.SubPattern(_parser.State(), [(op, arg)]).getwidth()[1]
    raise AssertionError(pattern)


def test_the_gap_table_is_what_the_patterns_say() -> None:
    literals = {f: lit for fam, lit, f in secrets._ALL_FINDERS if fam in secrets._IN_WORDS}
    derived = {f: _gap(f, literals[f]) for f in secrets._LONG_RUNS}
    assert {f: g for f, g in derived.items() if g} == secrets._RUN_GAPS


def test_run_after_is_never_false_where_a_gated_finder_matches() -> None:
    breaks = [*".:~ \n;,/+é", "İ", "mii", "s.", "::", "x" * 20, "ac", "gh"]
    chooser = random.Random(17)
    literals = {f: lit for fam, lit, f in secrets._ALL_FINDERS if fam in secrets._IN_WORDS}
    matched = 0
    for finder, (need, chars) in secrets._LONG_RUNS.items():
        search = re.compile(finder).search
        parsed = _parser.parse(finder)
        for _ in range(300):
            sample = list(_sample(parsed, chooser))
            for _ in range(chooser.randint(0, 3)):
                sample.insert(chooser.randint(0, len(sample)), chooser.choice(breaks))
            noise = "".join(chooser.choice([*breaks, "ab", "9", "0a1b" * 10]) for _ in range(10))
            low = secrets._lower(noise[:5] + "".join(sample) + noise[5:])
            if search(low) is None:
                continue
            matched += 1
            words = " ".join(w for w in low.split() if len(w) >= secrets._WORD_MIN)
            data = words.encode("utf-8", "surrogatepass")
            runs = secrets._Runs(data, chars).long()
            gap = secrets._RUN_GAPS.get(finder, 0)
            literal = literals[finder].encode()
            assert secrets._run_after(data, literal, gap, need, runs), (finder, low)
    assert matched > 1000


def test_long_runs_are_where_they_are() -> None:
    data = b"tests/test_x.py::test_y 0123456789abcdef0123456789abcdef01234567 a.b/c"
    runs = secrets._Runs(data, "token").long()
    assert [data[s:e] for s, e in runs] == [b"0123456789abcdef0123456789abcdef01234567"]
    assert runs[0][0] == data.index(b"0123")
    # A hash is a long run, but no ":", "." or "ac" comes just before one: no finder is run.
    assert not secrets._run_after(data, b":", 0, 35, runs)
    assert secrets._run_after(b"ac" + data[runs[0][0] :], b"ac", 0, 32, [(0, 42)])
    # The literal and the run in one word: "200ms" before a hash is no key body's start.
    for text, found in ((b"delay=200ms " + b"a" * 40, False), (b"delay=200mi" + b"a" * 40, True)):
        runs = secrets._Runs(text, "base64").long()
        assert secrets._run_after(text, b"m", 3, 37, runs) is found, text
    # Beyond ASCII, a character is its UTF-8 bytes: runs are longer, never shorter, and a lone
    # surrogate (a file name read with surrogateescape) is no error.
    cjk = "重構資料庫連線池".encode()
    assert secrets._Runs(cjk, "token").longest == len(cjk) == 24
    assert secrets.scan("x" * 20 + "\udcff" + "y" * 20 + " s." + "a" * 24) == []


def test_every_gated_literal_is_ascii() -> None:
    # _run_after reads the words' UTF-8: a literal's bytes must be its characters.
    assert all(lit.isascii() for fam, lit, _ in secrets._ALL_FINDERS if fam in secrets._IN_WORDS)


# --- what a job record compiles ----------------------------------------------------------

RECORD_SCRIPT = r"""
import json, sys
from pathlib import Path
from gitstate import secrets
from gitstate.jobs.document import plan
from gitstate.jobs.storage import files, record_commit

folder, sha = Path(sys.argv[1]), sys.argv[2]
job = files.JobFiles(folder)
worktree = f"/tmp/bench-jobs-x1y2z3/repo/.agy/worktrees/{job.id}"
prompt = plan.build_prompt(plan.parse_plan("job 8\n"), job_id=job.id, worktree=worktree,
                           branch=f"agy/{job.id}", round_no=1)
job.plan.write_text("job 8\n")
job.prompt.write_text(prompt)
structured = {"summary": "ok", "files_changed": [], "tests_passed": True}
result = {"job_id": job.id, "state": "done", "agy_status": "SUCCESS", "round": 1,
          "summary": "ok", "structured_output": structured, "contract_ok": False,
          "contract_note": "missing: tests_ran, acceptance_met, blockers, followups",
          "response_text": "ok", "files_changed_git": [], "diff_stat": "",
          "usage": {"input_tokens": 1, "output_tokens": 1}, "conversation_id": "c",
          "duration_seconds": 0.031, "num_turns": 1, "attempts": 1, "exit_code": 0,
          "error": None, "worktree": worktree, "branch": f"agy/{job.id}", "base_sha": sha,
          "tip_sha": sha, "uncommitted_files": []}
text = json.dumps(result, ensure_ascii=False, indent=2) + "\n"
contents, hits = record_commit.record_contents(job, text)
subject = record_commit.subject_of(result)
assert contents["result.json"] == text and not hits, (contents, hits)
print(json.dumps(sorted(secrets._compiled)))
"""


def _compiled_by_record(tmp_path: Path, sha: str) -> list[str]:
    folder = tmp_path / "j-20261202-212259-8f3a"
    folder.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", RECORD_SCRIPT, str(folder), sha],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_bench_job_record_compiles_no_pattern(tmp_path: Path) -> None:
    assert _compiled_by_record(tmp_path, "3f0c2a9be1d4475e8a6c5b0d9e7f1a2b3c4d5e6f") == []


def test_a_sha_that_opens_like_a_twilio_key_compiles_that_finder_and_rule(tmp_path: Path) -> None:
    # "ac" and 32 hex digits: the finder must run, and its rule (case-sensitive) finds nothing.
    assert _compiled_by_record(tmp_path, "ac0c2a9be1d4475e8a6c5b0d9e7f1a2b3c4d5e6f") == [
        "(?:SK|AC)(?P<t>[0-9a-f]{32})(?![A-Za-z0-9])",
        "ac[0-9a-f]{32}",
    ]
