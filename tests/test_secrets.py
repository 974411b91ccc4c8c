"""The credential scan: one case per kind, the prose that must pass, lines, excerpts, redact.

Every fake secret is assembled from pieces at run time, so this file holds nothing a
secret scanner (ours or GitHub's push protection) would take for a live credential.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitstate.secrets import REDACTED, SecretHit, redact, scan, scan_changed, scan_lines

# --- fake but well-formed secrets ------------------------------------------------------

AWS_ID = "AKIA" + "QWERTY234567ZXCV"
AWS_TEMP_ID = "ASIA" + "QWERTY234567ZXCV"
AWS_SECRET = "aB3/" * 10  # 40 characters of base64
GITHUB = "ghp_" + "a1B2" * 9
GITHUB_OAUTH = "gho_" + "c3D4" * 9
GITHUB_APP = "ghs_" + "e5F6" * 9
GITHUB_FINE = "github_pat_" + "11AB" * 6 + "_" + "x9Y8" * 15
GITLAB = "glpat-" + "a1B2c3D4e5" * 2
SLACK_BOT = "xoxb-" + "1234567890-" + "2345678901-" + "aB3dE" * 5
SLACK_USER = "xoxp-" + "1234567890-" + "2345678901-" + "aB3dE" * 5
SLACK_APP = "xapp-" + "1-A0123456-" + "1234567890-" + "ab12" * 8
SLACK_HOOK_PATH = "T0" + "1ABCDEF" + "/B0" + "1ABCDEF" + "/" + "aB3d" * 6
OPENAI = "sk-" + "aB3d" * 12
OPENAI_PROJECT = "sk-" + "proj-" + "aB3d_e5F-" * 6
ANTHROPIC = "sk-" + "ant-" + "api03-" + "aB3d_e5F-" * 10
GOOGLE = "AI" + "za" + "Sy" + "aB3d_e5F-" * 3 + "abcdef"
STRIPE = "sk_" + "live_" + "aB3d" * 6
STRIPE_RESTRICTED = "rk_" + "live_" + "aB3d" * 6
NPM = "npm_" + "aB3d" * 9
JWT = ".".join(
    (
        "eyJ" + "hbGciOiJIUzI1NiJ9",
        "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0",
        "dozjgNryP4J3jVmNHl0w5N_" + "XgL0n3I9PlFUP0THsR8U",
    )
)
AZURE_KEY = "Zm9vYmFy" * 8 + "=="
KEY_BODY = ["MIIEow" + "IBAAKCAQEA" + "q1w2E3r4T5y6" * 4, "U7i8O9p0" * 8, "aB3dE5f6" * 3 + "=="]
GCP_KEY = (  # the JSON string value, newlines escaped
    "-----BEGIN PRIVATE KEY-----\\n"
    + "MIIEvQ"
    + "IBADANBgkq"
    + "hkiG9w0BAQ"
    + "EFAASC"
    + "\\n-----END PRIVATE KEY-----\\n"
)
URL_PW = "s3cr3t-" + "pw"
TWILIO = "SK" + "0a1b2c3d4e5f" * 2 + "6a7b8c9d"
SENDGRID = (
    "SG" + "." + "aB3dE5fG7hJ9kL1mN3pQ5r" + "." + "sT7vW9xY1zA3bC5dE7fG9hJ1kL3mN5pQ7rS9tU1vW3x"
)
HUGGING_FACE = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH"
TELEGRAM = "1234567" + "89:" + "AAF" + "k3Jd9_xK2mQ7pL0vB5nR8tY4wZ1cE6gH"
GITLAB_DEPLOY = "gldt-" + "q1W2e3R4t5Y6u7I8o9P0"
VAULT = "hvs." + "CAESIJ" + "k3Jd9xK2mQ7pL0vB5nR8tY4wZ1"
AZURE_AD = "aB1" + "8Q~" + "k3Jd9xK2mQ7pL0vB5nR8tY4wZ1cE6g.Hj"
AGE = "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2
AGE = AGE[: len("AGE-SECRET-KEY-1") + 58]
CURL_PW = "Hu" + "nter-22x"
SAS_SIG = "k3Jd9xK2mQ7pL0vB5nR8tY4w" + "%2BZ1cE6gHj%2F" + "aB3dE5f6%3D"


def key_block(label: str = "RSA ") -> list[str]:
    """A PEM block: -----BEGIN RSA PRIVATE KEY-----, the body, the END line."""
    kind = label + ("PRIVATE KEY BLOCK" if label == "PGP " else "PRIVATE KEY")
    return ["-----BEGIN " + kind + "-----", *KEY_BODY, "-----END " + kind + "-----"]


# (line as written, the secret in it, kind reported)
POSITIVE = [
    ("aws_access_key_id = " + AWS_ID, AWS_ID, "AWS access key id"),
    ("export AWS_ACCESS_KEY_ID=" + AWS_TEMP_ID, AWS_TEMP_ID, "AWS access key id"),
    ("aws_secret_access_key = " + AWS_SECRET, AWS_SECRET, "AWS secret access key"),
    ('"SecretAccessKey": "' + AWS_SECRET + '",', AWS_SECRET, "AWS secret access key"),
    ('  "private_key": "' + GCP_KEY + '",', GCP_KEY, "GCP service-account private key"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        + AZURE_KEY
        + ";EndpointSuffix=core.windows.net",
        AZURE_KEY,
        "Azure storage key",
    ),
    ("git remote set-url origin " + GITHUB, GITHUB, "GitHub token"),
    ("token " + GITHUB_OAUTH + " from the device flow", GITHUB_OAUTH, "GitHub token"),
    ("- installation token: `" + GITHUB_APP + "`", GITHUB_APP, "GitHub token"),
    ("GH_TOKEN=" + GITHUB_FINE, GITHUB_FINE, "GitHub token"),
    ("CI_JOB: " + GITLAB, GITLAB, "GitLab token"),
    ("slack bot " + SLACK_BOT, SLACK_BOT, "Slack token"),
    ("slack user " + SLACK_USER, SLACK_USER, "Slack token"),
    ("socket mode " + SLACK_APP, SLACK_APP, "Slack token"),
    (
        "curl -X POST https://hooks.slack.com/services/" + SLACK_HOOK_PATH,
        SLACK_HOOK_PATH,
        "Slack webhook URL",
    ),
    ("OpenAI key " + OPENAI, OPENAI, "OpenAI API key"),
    ("client = OpenAI(api_key='" + OPENAI_PROJECT + "')", OPENAI_PROJECT, "OpenAI API key"),
    ("x-api-key: " + ANTHROPIC, ANTHROPIC, "Anthropic API key"),
    ("maps?key=" + GOOGLE + "&v=3", GOOGLE, "Google API key"),
    ("stripe " + STRIPE, STRIPE, "Stripe live key"),
    ("stripe restricted " + STRIPE_RESTRICTED, STRIPE_RESTRICTED, "Stripe live key"),
    ("//registry.npmjs.org/:_authToken=" + NPM, NPM, "npm token"),
    ("cookie session=" + JWT, JWT, "JSON web token"),
    (
        "DATABASE_URL=postgres://app:" + URL_PW + "@db.internal:5432/app",
        URL_PW,
        "password in URL",
    ),
    ("redis://:" + "Rd1s-pass" + "@cache:6379/0", "Rd1s-pass", "password in URL"),
    ("GITHUB_TOKEN=" + "abc123" + "def456", "abc123def456", "token assignment"),
    ("DB_PASSWORD=" + "hunter2!", "hunter2!", "password assignment"),
    ("  password: " + "hunter2", "hunter2", "password assignment"),
    ("mysql --password=" + "Tr0ub4dor", "Tr0ub4dor", "password assignment"),
    ('{"client_secret": "' + "Zx9-" * 4 + '"}', "Zx9-" * 4, "secret assignment"),
    ("JWT_SECRET_KEY='" + "k9Lm2Np4Qr" + "'", "k9Lm2Np4Qr", "secret assignment"),
    ("OPENAI_API_KEY=" + "proxy-" + "k9Lm2Np4Qr", "proxy-k9Lm2Np4Qr", "API key assignment"),
    ("settings.apiKey = '" + "k9Lm2Np4Qr" + "';", "k9Lm2Np4Qr", "API key assignment"),
    (
        "curl -H 'Authorization: Bearer " + "abcDEF123" + "456ghiJKL'",
        "abcDEF123456ghiJKL",
        "authorization header",
    ),
    # issue 10: provider formats found bare, and the names and forms the scan used to miss
    ("twilio " + TWILIO + " for sms", TWILIO, "Twilio key"),
    ("sendgrid " + SENDGRID, SENDGRID, "SendGrid API key"),
    ("hub login with " + HUGGING_FACE, HUGGING_FACE, "Hugging Face token"),
    ("bot " + TELEGRAM + " posts alerts", TELEGRAM, "Telegram bot token"),
    ("deploy token " + GITLAB_DEPLOY, GITLAB_DEPLOY, "GitLab token"),
    ("vault login " + VAULT, VAULT, "Vault token"),
    ("client secret " + AZURE_AD + ".", AZURE_AD, "Azure AD client secret"),
    ("# " + AGE, AGE, "age secret key"),
    ("curl -u deploy:" + CURL_PW + " https://ci.internal", CURL_PW, "password in curl -u"),
    ("curl -fsu ci:" + CURL_PW + " https://ci.internal", CURL_PW, "password in curl -u"),
    ("SMTP_PASS=" + CURL_PW, CURL_PW, "password assignment"),
    ("dbPass: '" + CURL_PW + "'", CURL_PW, "password assignment"),
    ("ENCRYPTION_KEY=" + "9f8e7d6c" * 8, "9f8e7d6c" * 8, "secret assignment"),
    ("DOCKER_CREDENTIALS=ci:" + CURL_PW, "ci:" + CURL_PW, "credentials assignment"),
    ('{\\"token\\":\\"' + CURL_PW + '\\",\\"ok\\":true}', CURL_PW, "token assignment"),
    ('"log": "\\nDB_PASSWORD=' + CURL_PW + '\\ndone"', CURL_PW, "password assignment"),
    (
        '{\\"headers\\":{\\"Authorization\\":\\"Bearer ' + CURL_PW + "x9" + '\\"}}',
        CURL_PW + "x9",
        "authorization header",
    ),
    (
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=" + SAS_SIG,
        SAS_SIG,
        "Azure SAS signature",
    ),
    (
        "mailchimp " + "0a1b2c3d4e5f" * 2 + "6a7b8c9d" + "-us21",
        "0a1b2c3d4e5f" * 2 + "6a7b8c9d-us21",
        "Mailchimp API key",
    ),
]


@pytest.mark.parametrize(("line", "secret", "kind"), POSITIVE, ids=[k for _, _, k in POSITIVE])
def test_each_kind_is_found_once_and_never_echoed(line: str, secret: str, kind: str) -> None:
    text = "# notes\n\n" + line + "\nnothing else here\n"
    hits = scan(text)
    assert [(h.line, h.kind) for h in hits] == [(3, kind)]
    assert secret not in hits[0].excerpt
    assert REDACTED in hits[0].excerpt


@pytest.mark.parametrize(("line", "secret", "kind"), POSITIVE, ids=[k for _, _, k in POSITIVE])
def test_redact_blanks_exactly_the_value(line: str, secret: str, kind: str) -> None:
    text = "before\n" + line + "\nafter\n"
    redacted, hits = redact(text)
    assert [h.kind for h in hits] == [kind]
    assert secret not in redacted
    assert redacted == text.replace(secret, REDACTED)
    assert scan(redacted) == []  # a redacted text passes the scan


@pytest.mark.parametrize(
    "label", ["RSA ", "OPENSSH ", "EC ", "DSA ", "", "ENCRYPTED ", "PGP "], ids=repr
)
def test_private_key_block_is_reported_at_begin_and_its_body_redacted(label: str) -> None:
    block = key_block(label)
    text = "\n".join(["## 關鍵資料", "the deploy key:", *block, "done"]) + "\n"
    hits = scan(text)
    assert [(h.line, h.kind) for h in hits] == [(3, "private key block")]
    assert hits[0].excerpt == block[0]
    redacted, _ = redact(text)
    lines = redacted.split("\n")
    assert lines[2] == block[0] and lines[3 + len(KEY_BODY)] == block[-1]
    assert lines[3 : 3 + len(KEY_BODY)] == [REDACTED] * len(KEY_BODY)
    assert all(part not in redacted for part in KEY_BODY)


def test_a_key_body_without_its_begin_line_is_redacted_line_for_line() -> None:
    # KEY_BODY opens as PKCS#1 DER does (MIIEowIBAAKCAQEA: SEQUENCE, version 0, INTEGER)
    text = "\n".join(["the rest of it:", *KEY_BODY, key_block()[-1], "next"])
    hits = scan(text)
    assert [(h.line, h.kind) for h in hits] == [(2, "private key block")]
    assert REDACTED in hits[0].excerpt and KEY_BODY[0] not in hits[0].excerpt
    redacted, _ = redact(text)
    assert redacted.split("\n") == ["the rest of it:", *[REDACTED] * 3, key_block()[-1], "next"]
    escaped = '{"key": "' + "\\n".join(KEY_BODY) + '\\n"}'
    redacted, hits = redact(escaped)
    assert [h.kind for h in hits] == ["private key block"]
    assert all(part not in redacted for part in KEY_BODY)


@pytest.mark.parametrize(
    "der_head",
    [
        "308203773082025fa003020102020900",  # a certificate: SEQUENCE, SEQUENCE
        "30820122300d06092a864886f70d0101",  # a public key (SPKI)
        "3082010a0282010100",  # an RSA public key: SEQUENCE, INTEGER of 257 bytes
    ],
)
def test_public_der_bodies_are_not_keys(der_head: str) -> None:
    import base64

    body = base64.b64encode(bytes.fromhex(der_head) + bytes(range(200))).decode()
    assert scan("\n".join(body[i : i + 64] for i in range(0, len(body), 64))) == []


def test_pgp_block_with_armor_headers() -> None:
    text = "\n".join(
        [
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "Version: GnuPG v2",
            "",
            *KEY_BODY,
            "-----END PGP PRIVATE KEY BLOCK-----",
        ]
    )
    assert [(h.line, h.kind) for h in scan(text)] == [(1, "private key block")]
    redacted, _ = redact(text)
    assert redacted.split("\n")[2] == ""  # blank lines stay blank
    assert all(part not in redacted for part in KEY_BODY)


def test_unterminated_key_block_is_redacted_up_to_the_prose() -> None:
    text = "\n".join([key_block("EC ")[0], *KEY_BODY[:2], "", "next paragraph"])
    redacted, hits = redact(text)
    assert [h.line for h in hits] == [1]
    assert redacted.split("\n")[1:] == [REDACTED, REDACTED, "", "next paragraph"]


@pytest.mark.parametrize(
    "text",
    [
        "look for -----BEGIN RSA PRIVATE KEY----- at the top of the file",
        "-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nthen paste the rest here\n",
        'if line.startswith("-----BEGIN EC PRIVATE KEY-----"):',
        "-----BEGIN RSA PRIVATE KEY-----\nTODO: paste it here\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_a_key_marker_without_key_material_is_not_a_secret(text: str) -> None:
    assert scan(text) == []


STATE_ZH_TW = """\
# 任務狀態 ── 最後更新 2026-09-09 23:40

## 目標
issue #4412：重構資料庫連線池與斷線重試機制

## 已完成
- [x] 實作連線重試指數退避演算法｜驗證：npm test tests/retry.test.mjs 全部通過

## 關鍵資料（原樣保留）
- 錯誤訊息：ECONNRESET: Socket hung up at TCP.onStreamRead
- 預設重試參數：MAX_RETRIES=5, BASE_DELAY=200ms
- commit 3f2a9c1e4b5d6f708192a3b4c5d6e7f8091a2b3c
"""

NEGATIVE = [
    # prose, English and CJK
    "密碼錯誤時重試三次",
    "the password field is required",
    "set GITHUB_TOKEN in CI",
    "the token expired, so rotate the secret and update the password",
    "Password: required",
    "Token: expired after the refresh",
    "token: v2-format since the March release",
    "- token: 已更新 refresh 流程",
    "パスワードを入力してください。トークンの有効期限が切れました。",
    "토큰이 만료되었습니다",
    "the task-runner-for-the-nightly-migration-job finished",
    "Asia Pacific and Slovakia regions",
    "attached disk-0a1b2c3d4e5f60718293a4b5 to the VM",
    # hashes, ids, versions, paths, base64-looking names
    "commit 3f2a9c1e4b5d6f708192a3b4c5d6e7f8091a2b3c",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "request 550e8400-e29b-41d4-a716-446655440000",
    "test_dGVzdF9uYW1lX2Jhc2U2NF9sb29raW5n passed",
    "v1.2.3-rc.1+build.5, node 20.11.1",
    "/home/dev/.ssh/id_ed25519 and C:\\Users\\dev\\.aws\\credentials",
    "src/auth/token_refresh.ts:42",
    # config that names a secret without holding one
    "MAX_RETRIES=5, BASE_DELAY=200ms",
    "max_tokens=4096, input_tokens=1234",
    "MAX_TOKEN=4096",
    "MAX_CONTEXT_TOKEN=128000",
    "timeout_token: 3600",
    "TOKEN_LIMIT=8000 SECRET_ROTATION_DAYS=30 PASSWORD_MIN_LENGTH=12",
    "PASSWORD=",
    "API_KEY=<your key>",
    "API_KEY=${API_KEY}",
    "API_KEY=$API_KEY",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "DB_PASSWORD=***",
    "DB_PASSWORD=xxx",
    "password: changeme",
    "password: true",
    "auth_token: null",
    '"password": ""',
    '{"username": "string", "password": "string"}',
    "SECRET_KEY=[REDACTED]",
    "token: str",
    "def login(password: str) -> None:",
    "connect(password=password)",
    "api_key = settings.API_KEY",
    "token = request.headers['x-token']",
    "export TOKEN=$(gh auth token)",
    "PWD=/home/dev/project",
    "if token == expected_token:",
    # code and data that only look like an assignment of a literal
    'env = "GITHUB_TOKEN=" + token + " rest"',
    'cmd("API_KEY=\'" + key + "\'")',
    'TOKEN = "ghp_" + suffix',
    "token = newToken",
    'private_key: "_RSAPrivateKey",',
    "private_key: _SSH_PRIVATE_KEY_TYPES,",
    'AttributeOID.CHALLENGE_PASSWORD: "challengePassword",',
    "Token:                     '#cccccc',",
    "'secret': 'will be replaced',",
    "# token = 1*<any CHAR except CTLs or separators>",
    "ResourceEndpoint.__init__(self, default_token='Bearer')",
    # URLs without a credential, or with a placeholder one
    "https://github.com/org/repo/pull/4412",
    "https://example.com:8443/path?q=1#frag",
    "ssh://git@github.com/org/repo.git",
    "git@github.com:org/repo.git",
    "https://user@host.example.com/x",
    "postgres://user:***@db/app",
    "postgres://user:<password>@db/app",
    "postgres://user:${PGPASSWORD}@db/app",
    "postgres://user:$PGPASSWORD@db/app",
    "postgres://user:xxx@db/app",
    "postgres://postgres:postgres@localhost:5432/test",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    # commands and names shaped like the new rules
    "git push -u origin main",
    "docker run -u 1000:1000 acme/web",
    'curl -u "$USER:$PASS" https://ci.internal',
    "curl -u user:password https://ci.internal",
    "sort -u names.txt",
    "sort_key=created_at",
    'primary_key=True, sort_key="-created_at"',
    'credentials: "same-origin",',
    "bypass=cache_only",
    "hotkey: ctrl+shift+p",
    '"win32cred": "types-pywin32",',
    "PUBLIC_KEY=" + "Zm9vYmFy" * 5,
    "key=value",
    "IMAGE_KEY=img/2026/01/cat.png",
    "upload_key: users/42/avatar-v2.webp",
    "build 12345678:" + "abcdefghijklmnopqrstuvwxyzabcdefghi" + " done",
    "this.s.getAuthenticationHeaderValue = null;",
    "JIRA SK-1234 and AC-5678",
    # placeholders shaped like the real thing
    "aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE",
    "ghp_" + "x" * 36,
    "sk-" + "proj-" + "X" * 24,
]


@pytest.mark.parametrize("line", NEGATIVE)
def test_no_false_alarm(line: str) -> None:
    assert scan(line) == []


def test_no_false_alarm_on_a_real_state_file() -> None:
    assert scan(STATE_ZH_TW) == []
    assert redact(STATE_ZH_TW) == (STATE_ZH_TW, [])


def test_hits_come_in_line_order_with_right_numbers() -> None:
    lines = ["intro", "GITHUB_TOKEN=" + GITHUB, "", "plain", "x " + AWS_ID, *key_block(), "z"]
    lines.append("DB_URL=mysql://root:" + URL_PW + "@db/app")
    hits = scan("\n".join(lines))
    assert [(h.line, h.kind) for h in hits] == [
        (2, "GitHub token"),
        (5, "AWS access key id"),
        (6, "private key block"),
        (len(lines), "password in URL"),
    ]


def test_one_hit_per_kind_per_line_in_column_order() -> None:
    line = "a=" + AWS_ID + " b=" + GITHUB + " c=" + GITHUB_OAUTH
    hits = scan(line)
    assert [h.kind for h in hits] == ["AWS access key id", "GitHub token"]
    for secret in (AWS_ID, GITHUB, GITHUB_OAUTH):
        assert all(secret not in h.excerpt for h in hits)
        assert secret not in redact(line)[0]
    assert redact(line)[0].count(REDACTED) == 3


def test_scan_lines_keeps_the_callers_numbers() -> None:
    added = [(10, "fine"), (11, "token " + GITHUB), (40, "nothing"), (41, "pwd: " + "hunter2!")]
    hits = scan_lines(added)
    assert [(h.line, h.kind) for h in hits] == [(11, "GitHub token"), (41, "password assignment")]
    assert scan_lines([(7, "the password field is required")]) == []
    assert scan_lines([]) == []


def test_scan_lines_follows_a_key_block_through_the_added_lines() -> None:
    block = key_block("OPENSSH ")
    hits = scan_lines(list(enumerate(block, start=100)))
    assert [(h.line, h.kind) for h in hits] == [(100, "private key block")]


def test_scan_lines_accepts_any_iterable() -> None:
    pairs = ((n, "x " + GITLAB) for n in (3, 9))
    assert [h.line for h in scan_lines(pairs)] == [3, 9]


def test_crlf_text() -> None:
    text = "\r\n".join(["# 狀態", "GITHUB_TOKEN=" + GITHUB, *key_block(), "password: hunter2", ""])
    hits = scan(text)
    assert [(h.line, h.kind) for h in hits] == [
        (2, "GitHub token"),
        (3, "private key block"),
        (8, "password assignment"),
    ]
    assert all("\r" not in h.excerpt for h in hits)
    redacted, _ = redact(text)
    assert redacted.split("\r\n") == [
        "# 狀態",
        "GITHUB_TOKEN=" + REDACTED,
        key_block()[0],
        *[REDACTED] * len(KEY_BODY),
        key_block()[-1],
        "password: " + REDACTED,
        "",
    ]


def test_a_long_line_is_trimmed_around_the_secret() -> None:
    line = "lorem ipsum " * 20 + "token=" + GITHUB + " dolor sit amet" * 20
    (hit,) = scan(line)
    assert len(hit.excerpt) <= 80
    assert REDACTED in hit.excerpt
    assert GITHUB not in hit.excerpt and GITHUB[:12] not in hit.excerpt


def test_redact_leaves_clean_text_alone_and_keeps_line_count() -> None:
    clean = "line one\r\nline two\n\n密碼錯誤時重試三次\n"
    assert redact(clean) == (clean, [])
    text = "a\n" + "\n".join(key_block()) + "\nGITHUB_TOKEN=" + GITHUB + "\n"
    redacted, hits = redact(text)
    assert redacted.count("\n") == text.count("\n")
    assert hits == scan(text)
    assert redact(redacted) == (redacted, [])


def test_characters_that_lower_to_two_do_not_shift_the_redaction() -> None:
    # "İ".lower() is two characters; the keyword search runs on lowered text.
    line = "İİ İstanbul GITHUB_TOKEN=" + "abc123def456" + " ok"
    assert redact(line) == ("İİ İstanbul GITHUB_TOKEN=" + REDACTED + " ok", scan(line))
    assert [h.kind for h in scan(line)] == ["token assignment"]


def test_hits_are_frozen_values() -> None:
    hit = scan("x " + GITHUB)[0]
    assert hit == SecretHit(1, "GitHub token", "x " + REDACTED)
    with pytest.raises(AttributeError):
        hit.line = 2  # type: ignore[misc]


def test_import_needs_only_the_standard_library() -> None:
    code = (
        "import sys, gitstate\n"
        "before = set(sys.modules)\n"
        "import gitstate.secrets\n"
        "new = set(sys.modules) - before - {'gitstate.secrets', 'gitstate.secret_formats'}\n"
        "print(sorted(m for m in new if m.split('.')[0] not in sys.stdlib_module_names))\n"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "text",
    [
        STATE_ZH_TW * 2900,  # ~1 MiB of the real thing
        ("input_tokens=12 see https://api.example.com/v1 the token secret\n") * 16000,
        "a" * (1 << 20),  # one huge line
        "secret-" * 150000,  # keywords without a separator
        ("x://" * 20 + "\n") * 13000,
        ("password=" * 100 + "\n") * 1100,
        "A" * (1 << 20),  # a Twitter bearer token's run of A, a million long
        "M" * (1 << 20) + ".abcdef." + "a" * 30,  # a Discord token's first part, unending
        ("enc_key=" + "aB3$" * 5 + " ") * 9000,  # thousands of values on one line
        "curl " + "-u ab:cdefgh " * 20000,
        ("ghp_" + "aB3d" * 9 + " ") * 6000,
    ],
    ids=[
        "state",
        "log",
        "one-line",
        "keywords",
        "schemes",
        "assignments",
        "a-run",
        "m-run",
        "dense-values",
        "dense-curl",
        "dense-tokens",
    ],
)
def test_scanning_a_mebibyte_stays_fast(text: str) -> None:
    # Catastrophic backtracking would take seconds to minutes; the usual is ~10 ms.
    start = time.process_time()
    scan(text)
    assert time.process_time() - start < 1.0


# --- scan_changed: what a write adds ---------------------------------------------------


def test_scan_changed_reports_a_body_added_under_an_old_begin_line() -> None:
    # A body that does not open as DER (the middle of a key, or an encrypted one) is a key
    # only by its BEGIN line, which the added lines alone do not hold.
    block = [key_block()[0], *KEY_BODY[1:], key_block()[-1]]
    old = "\n".join(["# notes", block[0], ""])
    new = "\n".join(["# notes", *block, "done"])
    assert scan_lines([(n, line) for n, line in enumerate(new.split("\n"), 1) if n > 2]) == []
    assert [(h.line, h.kind) for h in scan_changed(new, old)] == [(2, "private key block")]


def test_scan_changed_reports_a_block_touched_anywhere() -> None:
    block = key_block()
    old = "\n".join(["# notes", *block[:-1]])
    new = "\n".join(["# notes", *block])  # only the END line is new
    assert [h.line for h in scan_changed(new, old)] == [2]
    old_body = "\n".join(["# notes", *block[1:-1]])  # a body without BEGIN, then a BEGIN
    assert [h.line for h in scan_changed(old_body.replace("# notes", block[0]), old_body)] == [1]


def test_scan_changed_leaves_out_what_was_already_there() -> None:
    old = "\n".join(["# notes", "GITHUB_TOKEN=" + GITHUB, *key_block(), "end"])
    new = old.replace("end", "end, with an edit") + "\nDB_PASSWORD=hunter2!\n"
    hits = scan_changed(new, old)
    assert [(h.line, h.kind) for h in hits] == [(9, "password assignment")]
    assert scan_changed(old, old) == []
    assert scan_changed(new, None) == scan(new)
    # a known line moved elsewhere is not new; line endings do not make a line new
    moved = "\n".join(["end", *old.split("\n")[:-1]])
    assert scan_changed(moved, old) == []
    assert scan_changed(old.replace("\n", "\r\n"), old) == []


def test_scan_changed_numbers_lines_in_the_new_text() -> None:
    new = "\n".join(["a", "b", "x " + GITLAB, "c", "token " + GITHUB])
    assert [(h.line, h.kind) for h in scan_changed(new, "a\nb\nc\n")] == [
        (3, "GitLab token"),
        (5, "GitHub token"),
    ]


def test_a_hit_behaves_as_the_namedtuple_it_stands_for() -> None:
    """SecretHit is written out instead of made by collections.namedtuple (the hook path does
    not import collections): the parts callers use must match a namedtuple's."""
    import collections
    import copy
    import pickle

    model = collections.namedtuple("SecretHit", "line kind excerpt")
    hit, twin = (
        SecretHit(3, "GitHub token", "x = [REDACTED]"),
        model(3, "GitHub token", "x = [REDACTED]"),
    )
    assert hit == twin and tuple(hit) == tuple(twin) and hash(hit) == hash(twin)
    assert (hit.line, hit.kind, hit.excerpt) == (twin.line, twin.kind, twin.excerpt)
    assert repr(hit) == repr(twin) and hit._asdict() == twin._asdict()
    assert hit._replace(line=7) == twin._replace(line=7) and type(hit._replace(line=7)) is SecretHit
    assert SecretHit(line=1, kind="k", excerpt="e") == (1, "k", "e")
    assert pickle.loads(pickle.dumps(hit)) == hit and copy.deepcopy(hit) == hit
    assert SecretHit._make([1, "k", "e"]) == model._make([1, "k", "e"])
    assert SecretHit._fields == model._fields and SecretHit._field_defaults == {}
    assert SecretHit.__match_args__ == model.__match_args__
    match hit:
        case SecretHit(line, kind, excerpt):
            assert (line, kind, excerpt) == tuple(twin)
    with pytest.raises(ValueError):
        hit._replace(nope=1)
    with pytest.raises(ValueError):
        twin._replace(nope=1)
    with pytest.raises(AttributeError):
        hit.line = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        SecretHit(1, "k")  # type: ignore[call-arg]
