"""Detection quality of the credential scan, measured on a generated corpus.

Every credential here is made at run time from a provider's published token format
(prefix, length, alphabet; DER/OpenSSH structure for keys), several random instances per
format, each written in several contexts. None is real, and none comes from another
scanner's test list. The look-alikes are what a STATE.md really holds: hashes, ids,
base64, placeholders, CJK prose, paths, versions and code. The targets (docs/secrets.md):

- at least 95% of the corpus caught, at least 90% of the bare tokens (no name beside them);
- at most 2% of the look-alikes flagged.

"Caught" means scan() reports a hit and redact() leaves none of the secret in the text.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from gitstate.secrets import redact, scan, scan_changed

SEED = 20261201
PER_FORMAT = 5  # random instances of each format

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


def pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# --- token formats, as the providers publish them ----------------------------------------

Gen = Callable[[random.Random], str]


@dataclass(frozen=True)
class Format:
    name: str
    env: str  # the variable it conventionally lives in
    make: Gen
    shaped: bool = True  # False: no prefix or structure of its own (found only by name)


def discord(rng: random.Random) -> str:
    user_id = str(rng.randrange(10**17, 10**19))
    stamp = b64url(rng.randrange(2**40).to_bytes(5, "big") + b"\x00")[:6]
    return b64url(user_id.encode()) + "." + stamp + "." + pick(rng, B64URL, rng.choice((27, 38)))


def telegram(rng: random.Random) -> str:
    head = "AA" if rng.random() < 0.5 else ""
    return str(rng.randrange(10**7, 10**10)) + ":" + head + pick(rng, B64URL, 35 - len(head))


def grafana_cloud(rng: random.Random) -> str:
    payload = {"o": str(rng.randrange(10**6)), "n": "stack-" + pick(rng, DIGITS, 6)}
    payload["k"] = pick(rng, ALNUM, 32)
    payload["m"] = {"r": rng.choice(("us", "eu", "au"))}  # type: ignore[assignment]
    return "glc_" + b64(json.dumps(payload, separators=(",", ":")).encode())


def sentry_org(rng: random.Random) -> str:
    payload = {
        "iat": rng.randrange(1_600_000_000, 1_900_000_000),
        "url": "https://sentry.io",
        "org": "acme",
    }
    body = b64(json.dumps(payload, separators=(",", ":")).encode()).rstrip("=")
    return "sntrys_" + body + "_" + pick(rng, B64, 43)


def jwt(rng: random.Random) -> str:
    head = b64url(b'{"alg":"HS256","typ":"JWT"}')
    claims = {"sub": pick(rng, DIGITS, 10), "iat": rng.randrange(1_600_000_000, 1_900_000_000)}
    return head + "." + b64url(json.dumps(claims).encode()) + "." + pick(rng, B64URL, 43)


def azure_ad(rng: random.Random) -> str:
    alphabet = ALNUM + "_~.-"
    return pick(rng, alphabet, 3) + rng.choice(DIGITS) + "Q~" + pick(rng, alphabet, 34)


def github_fine(rng: random.Random) -> str:
    return "github_pat_" + pick(rng, ALNUM, 22) + "_" + pick(rng, ALNUM, 59)


def slack(kind: str) -> Gen:
    def make(rng: random.Random) -> str:
        ids = str(rng.randrange(10**9, 10**13)) + "-" + str(rng.randrange(10**9, 10**13))
        return kind + "-" + ids + "-" + pick(rng, ALNUM, 24)

    return make


def fixed(prefix: str, alphabet: str, n: int, suffix: Gen | None = None) -> Gen:
    def make(rng: random.Random) -> str:
        return prefix + pick(rng, alphabet, n) + (suffix(rng) if suffix else "")

    return make


def lengths(prefix: str, alphabet: str, low: int, high: int) -> Gen:
    def make(rng: random.Random) -> str:
        return prefix + pick(rng, alphabet, rng.randint(low, high))

    return make


FORMATS = [
    # the formats issue 10 names as missed, then what the scan already covered
    Format("Twilio API key", "TWILIO_API_KEY", fixed("SK", HEX, 32)),
    Format("Twilio account SID", "TWILIO_ACCOUNT_SID", fixed("AC", HEX, 32)),
    Format(
        "SendGrid",
        "SENDGRID_API_KEY",
        lambda r: "SG." + pick(r, B64URL, 22) + "." + pick(r, B64URL, 43),
    ),
    Format("PyPI", "PYPI_TOKEN", lengths("pypi-AgEIcHlwaS5vcmc", B64URL, 120, 200)),
    Format("Hugging Face", "HF_TOKEN", fixed("hf_", UPPER + LOWER, 34)),
    Format("Discord bot", "DISCORD_BOT", discord),
    Format("Telegram bot", "TELEGRAM_BOT", telegram),
    Format("GitLab PAT", "GITLAB_PAT", fixed("glpat-", B64URL, 20)),
    Format("GitLab deploy", "GITLAB_DEPLOY", fixed("gldt-", B64URL, 20)),
    Format("GitLab runner", "RUNNER_AUTH", fixed("glrt-", B64URL, 20)),
    Format("GitLab trigger", "GITLAB_TRIGGER", fixed("glptt-", HEX, 40)),
    Format("GitLab runner registration", "RUNNER_REGISTRATION", fixed("GR1348941", B64URL, 20)),
    Format(
        "GitLab CI build",
        "CI_BUILD",
        lambda r: "glcbt-" + pick(r, HEX, 2) + "_" + pick(r, B64URL, 20),
    ),
    Format("GitLab feed", "GITLAB_FEED", fixed("glft-", B64URL, 20)),
    Format("GitLab SCIM", "GITLAB_SCIM", fixed("glsoat-", B64URL, 20)),
    Format("GitLab incoming mail", "GITLAB_MAIL", fixed("glimt-", B64URL, 25)),
    Format("GitLab OAuth secret", "GITLAB_OAUTH", fixed("gloas-", HEX, 64)),
    Format("GitLab agent", "GITLAB_AGENT", fixed("glagent-", B64URL, 50)),
    Format("GitLab feature flags", "UNLEASH_CLIENT", fixed("glffct-", B64URL, 20)),
    Format("Shopify access", "SHOPIFY_ACCESS", fixed("shpat_", HEX, 32)),
    Format("Shopify custom app", "SHOPIFY_CUSTOM", fixed("shpca_", HEX, 32)),
    Format("Shopify private app", "SHOPIFY_PRIVATE", fixed("shppa_", HEX, 32)),
    Format("Shopify shared secret", "SHOPIFY_SHARED", fixed("shpss_", HEX, 32)),
    Format("DigitalOcean PAT", "DIGITALOCEAN_ACCESS", fixed("dop_v1_", HEX, 64)),
    Format("DigitalOcean OAuth", "DO_OAUTH", fixed("doo_v1_", HEX, 64)),
    Format("DigitalOcean refresh", "DO_REFRESH", fixed("dor_v1_", HEX, 64)),
    Format("Vault service", "VAULT_TOKEN", lengths("hvs.", B64URL, 24, 95)),
    Format("Vault batch", "VAULT_BATCH", fixed("hvb.", B64URL, 138)),
    Format("Vault legacy", "VAULT_LEGACY", fixed("s.", ALNUM, 24)),
    Format("Grafana cloud", "GRAFANA_CLOUD", grafana_cloud),
    Format(
        "Grafana service account",
        "GRAFANA_SA",
        lambda r: "glsa_" + pick(r, ALNUM, 32) + "_" + pick(r, HEX, 8),
    ),
    Format("Linear", "LINEAR_API", fixed("lin_api_", ALNUM, 40)),
    Format("Databricks", "DATABRICKS_HOST_AUTH", fixed("dapi", HEX, 32)),
    Format("Postman", "POSTMAN_API", lambda r: "PMAK-" + pick(r, HEX, 24) + "-" + pick(r, HEX, 34)),
    Format("Doppler personal", "DOPPLER", fixed("dp.pt.", ALNUM, 43)),
    Format("Doppler service", "DOPPLER_SERVICE", fixed("dp.st.", ALNUM, 43)),
    Format("age", "SOPS_AGE", fixed("AGE-SECRET-KEY-1", BECH32, 58)),
    Format("Mailgun", "MAILGUN_API", fixed("key-", HEX, 32)),
    Format(
        "Atlassian",
        "JIRA_API",
        lambda r: "ATATT3" + pick(r, B64URL, 180) + "=" + pick(r, HEX.upper(), 8),
    ),
    Format("Sentry org", "SENTRY_AUTH", sentry_org),
    Format("Sentry user", "SENTRY_USER", fixed("sntryu_", HEX, 64)),
    Format("Heroku", "HEROKU_API", fixed("HRKU-AA", B64URL, 58)),
    Format("Pulumi", "PULUMI_ACCESS", fixed("pul-", HEX, 40)),
    Format("Square access", "SQUARE_ACCESS", fixed("sq0atp-", B64URL, 22)),
    Format("Square OAuth secret", "SQUARE_OAUTH", fixed("sq0csp-", B64URL, 43)),
    Format("Square access (EAAA)", "SQUARE_ACCESS_V2", fixed("EAAA", B64URL, 60)),
    Format("Azure AD client secret", "AZURE_CLIENT", azure_ad),
    # already covered before issue 10
    Format("AWS access key id", "AWS_ACCESS_KEY_ID", fixed("AKIA", UPPER + "234567", 16)),
    Format("AWS session key id", "AWS_SESSION", fixed("ASIA", UPPER + "234567", 16)),
    Format("GitHub classic", "GH_PAT", fixed("ghp_", ALNUM, 36)),
    Format("GitHub OAuth", "GH_OAUTH", fixed("gho_", ALNUM, 36)),
    Format("GitHub app", "GH_APP", fixed("ghs_", ALNUM, 36)),
    Format("GitHub fine-grained", "GH_FINE", github_fine),
    Format("Slack bot", "SLACK_BOT", slack("xoxb")),
    Format("Slack user", "SLACK_USER", slack("xoxp")),
    Format(
        "Slack webhook",
        "SLACK_WEBHOOK",
        lambda r: (
            "https://hooks.slack.com/services/T"
            + pick(r, UPPER + DIGITS, 8)
            + "/B"
            + pick(r, UPPER + DIGITS, 10)
            + "/"
            + pick(r, ALNUM, 24)
        ),
    ),
    Format("Stripe live", "STRIPE_SECRET", lengths("sk_live_", ALNUM, 24, 99)),
    Format("Stripe restricted", "STRIPE_RESTRICTED", lengths("rk_live_", ALNUM, 24, 99)),
    Format("Stripe webhook", "STRIPE_WEBHOOK", fixed("whsec_", ALNUM, 32)),
    Format(
        "OpenAI legacy",
        "OPENAI",
        lambda r: "sk-" + pick(r, ALNUM, 20) + "T3BlbkFJ" + pick(r, ALNUM, 20),
    ),
    Format("OpenAI project", "OPENAI_PROJECT", lengths("sk-proj-", B64URL, 48, 156)),
    Format("Anthropic", "ANTHROPIC", lambda r: "sk-ant-api03-" + pick(r, B64URL, 93) + "AA"),
    Format("Google API", "GOOGLE_MAPS", fixed("AIza", B64URL, 35)),
    Format("Google OAuth secret", "GOOGLE_CLIENT", fixed("GOCSPX-", B64URL, 28)),
    Format("npm", "NPM_AUTH", fixed("npm_", ALNUM, 36)),
    Format("JSON web token", "SESSION_JWT", jwt),
    Format("Docker Hub", "DOCKERHUB", fixed("dckr_pat_", B64URL, 27)),
    Format("Groq", "GROQ", fixed("gsk_", ALNUM, 52)),
    Format("Supabase", "SUPABASE_ACCESS", fixed("sbp_", HEX, 40)),
    Format("New Relic", "NEW_RELIC", fixed("NRAK-", UPPER + DIGITS, 27)),
    Format("Replicate", "REPLICATE_API", fixed("r8_", ALNUM, 37)),
    Format(
        "Tailscale",
        "TS_AUTHKEY",
        lambda r: (
            "tskey-"
            + r.choice(("auth", "api", "client"))
            + "-"
            + pick(r, ALNUM, 12)
            + "-"
            + pick(r, ALNUM, 33)
        ),
    ),
    Format("xAI", "XAI", fixed("xai-", ALNUM, 80)),
    Format("Brevo", "BREVO", lambda r: "xkeysib-" + pick(r, HEX, 64) + "-" + pick(r, ALNUM, 16)),
    Format(
        "Terraform Cloud",
        "TFC",
        lambda r: pick(r, ALNUM, 14) + ".atlasv1." + pick(r, B64URL, 67),
    ),
    Format("Alibaba key id", "ALIBABA_ACCESS", fixed("LTAI", ALNUM, 20)),
    Format(
        "1Password service account",
        "OP_SERVICE_ACCOUNT",
        lambda r: "ops_" + jwt(r).split(".")[1] + b64(r.randbytes(600)),
    ),
    Format("PlanetScale", "PSCALE", fixed("pscale_tkn_", ALNUM + "_", 43)),
    Format("Figma", "FIGMA", fixed("figd_", B64URL, 40)),
    Format("Notion", "NOTION", fixed("ntn_", ALNUM, 46)),
    Format("Notion (old)", "NOTION_OLD", fixed("secret_", ALNUM, 43)),
    Format("Twitter bearer", "TWITTER_BEARER", fixed("A" * 22, ALNUM + "%", 90)),
    Format("Mailchimp", "MAILCHIMP", lambda r: pick(r, HEX, 32) + "-us" + str(r.randint(1, 21))),
    Format(
        "Azure SAS URL",
        "AZURE_SAS",
        lambda r: (
            "https://acct.blob.core.windows.net/c/b.bin?sv=2022-11-02&sp=r&se=2026-02-01"
            + "&sig="
            + b64(r.randbytes(32)).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        ),
    ),
    Format("Bitbucket app password", "BITBUCKET", fixed("ATBB", ALNUM, 32)),
    Format("Google OAuth access", "GOOGLE_ACCESS", fixed("ya29.", B64URL, 150)),
    # no shape of their own: caught only with a name beside them, missed bare
    Format("AWS secret access key", "AWS_SECRET_ACCESS_KEY", fixed("", B64, 40), shaped=False),
    Format("Twilio auth token", "TWILIO_AUTH_TOKEN", fixed("", HEX, 32), shaped=False),
]

# (bare?, context): bare ones carry no name that says "secret"
TOKEN_CONTEXTS: list[tuple[bool, Callable[[str, str], str]]] = [
    (True, lambda env, s: f"Rotated the old credential {s} after the leak review."),
    (True, lambda env, s: f"- 部署用的憑證 `{s}` 下週到期，記得更新"),
    (True, lambda env, s: f"ran the smoke test with {s} against staging"),
    (False, lambda env, s: f"export {env}_TOKEN={s}"),
    (False, lambda env, s: f"  {env.lower()}_secret: {s}"),
    (False, lambda env, s: f'{{"{env.lower()}_api_key": "{s}", "region": "eu"}}'),
    (False, lambda env, s: '{\\"' + env.lower() + '_token\\":\\"' + s + '\\",\\"ok\\":true}'),
    (False, lambda env, s: f"{env}_KEY='{s}'"),
]

# --- secrets with no shape, found by the name beside them --------------------------------

PASSWORD_CHARS = ALNUM + "!%^*-_+=.~"


def password(rng: random.Random) -> str:
    while True:
        value = pick(rng, PASSWORD_CHARS, rng.randint(12, 24))
        kinds = [any(c in value for c in group) for group in (UPPER, LOWER, DIGITS)]
        if all(kinds) and ".." not in value:  # a person's or a generator's password
            return value


def url_password(rng: random.Random) -> str:
    return (
        pick(rng, LOWER, 2) + pick(rng, ALNUM + "-._~", rng.randint(10, 20)) + pick(rng, DIGITS, 2)
    )


NAMED_CONTEXTS: list[Callable[[random.Random], tuple[str, str]]] = [
    lambda r: ((p := password(r)), f"DB_PASS={p}"),
    lambda r: ((p := password(r)), f'export SMTP_PASS="{p}"'),
    lambda r: ((p := password(r)), f"REDIS_PASSWORD={p}"),
    lambda r: ((p := password(r)), f"  password: {p}"),
    lambda r: ((p := password(r)), f'{{"user": "ci", "password": "{p}"}}'),
    lambda r: ((p := password(r)), '{\\"username\\":\\"ci\\",\\"password\\":\\"' + p + '\\"}'),
    lambda r: ((p := password(r)), 'result: "' + '{\\"token\\":\\"' + p + '\\"}"'),
    lambda r: ((p := pick(r, HEX, 64)), f"ENCRYPTION_KEY={p}"),
    lambda r: ((p := b64(r.randbytes(32))), f"APP_SIGNING_KEY={p}"),
    lambda r: ((p := password(r)), f"MASTER_KEY: '{p}'"),
    lambda r: ((p := "svc:" + password(r)), f"SERVICE_CREDENTIALS={p}"),
    lambda r: ((p := password(r)), f'"DOCKER_CREDS": "{p}"'),
    lambda r: ((p := password(r)), f"client_secret = '{p}'"),
    lambda r: ((p := password(r)), f"curl -u deploy:{p} https://api.internal/v1/hooks"),
    lambda r: ((p := password(r)), f'curl -sS --user "admin:{p}" https://ci.internal/api'),
    lambda r: ((p := password(r)), f"curl -fsu ci:{p} -X POST https://nexus.internal/upload"),
    lambda r: ((p := url_password(r)), f"DATABASE_URL=postgres://app:{p}@db.internal:5432/app"),
    lambda r: ((p := url_password(r)), f"git clone https://oauth2:{p}@gitlab.internal/g/r.git"),
    lambda r: ((p := pick(r, ALNUM, 40)), f'-H "Authorization: Bearer {p}"'),
    lambda r: (
        (p := password(r)),
        '{"cmd": "login", "env": "' + "\\nDEPLOY_PASSWORD=" + p + '\\nNEXT=1"}',
    ),
]

# --- private keys, with and without their BEGIN line -------------------------------------


def rsa_der(rng: random.Random) -> bytes:  # RFC 8017 RSAPrivateKey, 2048-bit
    return bytes.fromhex("308204a40201000282010100") + rng.randbytes(1180)


def pkcs8_der(rng: random.Random) -> bytes:  # RFC 5208 PrivateKeyInfo (rsaEncryption)
    return bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8") + rng.randbytes(
        1190
    )


def ec_der(rng: random.Random) -> bytes:  # RFC 5915 ECPrivateKey, P-256
    head = bytes.fromhex("30770201010420")
    return (
        head
        + rng.randbytes(32)
        + bytes.fromhex("a00a06082a8648ce3d030107a144034200")
        + rng.randbytes(65)
    )


def ed25519_der(rng: random.Random) -> bytes:  # RFC 8410
    return bytes.fromhex("302e020100300506032b657004220420") + rng.randbytes(32)


def openssh(rng: random.Random) -> bytes:  # OpenSSH PROTOCOL.key
    return b"openssh-key-v1\x00" + b"\x00\x00\x00\x04none" + rng.randbytes(380)


KEYS = [("RSA PRIVATE KEY", rsa_der), ("PRIVATE KEY", pkcs8_der), ("EC PRIVATE KEY", ec_der)]
KEYS += [("PRIVATE KEY", ed25519_der), ("OPENSSH PRIVATE KEY", openssh)]


def pem_lines(der: bytes, width: int = 64) -> list[str]:
    text = b64(der)
    return [text[i : i + width] for i in range(0, len(text), width)]


def key_cases(rng: random.Random) -> list[tuple[str, list[str]]]:
    """(text, body lines that must not survive redaction)."""
    cases = []
    for label, make in KEYS:
        body = pem_lines(make(rng), 70 if label.startswith("OPENSSH") else 64)
        begin, end = f"-----BEGIN {label}-----", f"-----END {label}-----"
        cases.append(("\n".join(["deploy key:", begin, *body, end, "done"]), body))
        cases.append(("\n".join(["the rest of the key:", *body, end, ""]), body))
        cases.append(("\n".join(["pasted without markers:", "", *body, "", "next step"]), body))
        escaped = "\\n".join([begin, *body, end])
        cases.append(('{"type": "service_account", "private_key": "' + escaped + '\\n"}', body))
        cases.append(('{"key": "' + "\\n".join([*body, end]) + '"}', body))
    return cases


# --- look-alikes that must pass ----------------------------------------------------------


def cjk(rng: random.Random) -> str:
    words = [
        "密碼",
        "令牌",
        "金鑰",
        "憑證",
        "重試",
        "連線池",
        "資料庫",
        "部署",
        "設定",
        "測試",
        "驗證",
        "錯誤",
        "更新",
        "秘密",
        "トークン",
        "パスワード",
        "비밀번호",
        "토큰",
    ]
    return "".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + "。"


def base64_prose(rng: random.Random) -> str:
    data = " ".join(rng.choice(("state", "merge", "push", "retry", "pool")) for _ in range(8))
    return rng.choice(
        (
            f"the payload was {b64(data.encode())} (decoded: {data})",
            f"data:image/png;base64,{b64(rng.randbytes(rng.randint(30, 90)))}",
            f"test_{b64url(data.encode())[:40]} passed",
            f"integrity sha512-{b64(rng.randbytes(64))}",
            f"h1:{b64(rng.randbytes(32))}",
        )
    )


def certificate(rng: random.Random) -> str:  # public: a certificate body, no BEGIN line
    der = bytes.fromhex("308203773082025fa003020102020900") + rng.randbytes(800)
    return "\n".join(["server.crt:", *pem_lines(der), "-----END CERTIFICATE-----"])


def public_key(rng: random.Random) -> str:
    spki = bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
    return "\n".join(pem_lines(spki + rng.randbytes(260)))


STATE_SAMPLE = """\
# 任務狀態 ── 最後更新 2026-09-09 23:40

## 目標
issue #4412：重構資料庫連線池與斷線重試機制

## 進行中
- [ ] 把 token 重新整理移到 auth/session.py，密碼欄位改成 SecretStr

## 關鍵資料（原樣保留）
- 錯誤訊息：ECONNRESET: Socket hung up at TCP.onStreamRead
- 預設重試參數：MAX_RETRIES=5, BASE_DELAY=200ms
- commit 3f2a9c1e4b5d6f708192a3b4c5d6e7f8091a2b3c
"""

SSH_ED25519 = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 "
SSH_RSA = b"\x00\x00\x00\x07ssh-rsa"

LOOKALIKE_GENERATORS: list[Callable[[random.Random], str]] = [
    lambda r: f"commit {pick(r, HEX, 40)}",
    lambda r: f"HEAD is now at {pick(r, HEX, 40)[:7]}; merged {pick(r, HEX, 40)}",
    lambda r: f"- verified: git rev-parse HEAD = {pick(r, HEX, 40)}",
    lambda r: f"sha256 {pick(r, HEX, 64)}",
    lambda r: f"image: ghcr.io/acme/web@sha256:{pick(r, HEX, 64)}",
    lambda r: f"Agy-Head: {pick(r, HEX, 40)}",
    lambda r: (
        f"request {r.randbytes(16).hex()[:8]}-{pick(r, HEX, 4)}-4{pick(r, HEX, 3)}-a{pick(r, HEX, 3)}-{pick(r, HEX, 12)}"
    ),
    lambda r: (
        f'"id": "{pick(r, HEX, 8)}-{pick(r, HEX, 4)}-{pick(r, HEX, 4)}-{pick(r, HEX, 4)}-{pick(r, HEX, 12)}"'
    ),
    lambda r: f"trace_id={pick(r, HEX, 32)} span_id={pick(r, HEX, 16)}",
    base64_prose,
    cjk,
    lambda r: f"## 已完成\n- [x] {cjk(r)}\n- [ ] {cjk(r)}",
    certificate,
    public_key,
    lambda r: "ssh-ed25519 " + b64(SSH_ED25519 + r.randbytes(32)) + " dev@laptop",
    lambda r: "ssh-rsa " + b64(SSH_RSA + r.randbytes(270)) + " ci@runner",
    lambda r: (
        f"v{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)}-rc.{r.randint(1, 9)}+build.{r.randint(1, 999)}"
    ),
    lambda r: (
        f"python {r.randint(3, 3)}.{r.randint(8, 13)}.{r.randint(0, 20)}, node {r.randint(16, 22)}.{r.randint(0, 20)}.{r.randint(0, 9)}"
    ),
    lambda r: f"see /home/{pick(r, LOWER, 5)}/.ssh/id_ed25519 and ~/.config/gh/hosts.yml",
    lambda r: f"src/auth/{pick(r, LOWER, 6)}_token_store.py:{r.randint(1, 999)}",
    lambda r: f"C:\\Users\\{pick(r, LOWER, 5)}\\.aws\\credentials",
    lambda r: f"arn:aws:iam::{pick(r, DIGITS, 12)}:role/deploy-{pick(r, LOWER, 5)}",
    lambda r: f"s3://acme-{pick(r, LOWER, 6)}/keys/{pick(r, HEX, 8)}.json",
    lambda r: (
        f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d} retry {r.randint(1, 9)}/5"
    ),
    lambda r: f"2026-0{r.randint(1, 9)}-1{r.randint(0, 9)}T23:40:00+08:00 saved",
    lambda r: (
        f"contact {pick(r, LOWER, 6)}@example.org, host 10.{r.randint(0, 255)}.{r.randint(0, 255)}.7:8443"
    ),
    lambda r: f"https://github.com/acme/{pick(r, LOWER, 6)}/pull/{r.randint(1, 9999)}",
    lambda r: f"postgres://localhost:5432/{pick(r, LOWER, 6)}",
    lambda r: f"https://{pick(r, LOWER, 5)}@git.internal/acme/repo.git",
    lambda r: f"com.acme.{pick(r, LOWER, 8)}.{pick(r, LOWER, 10)}.MainActivity",
    lambda r: f"chat_id: -100{pick(r, DIGITS, 10)}",
    lambda r: f"build {pick(r, DIGITS, 8)}:{pick(r, LOWER, 12)} finished",
    lambda r: f"color: #{pick(r, HEX, 6)}",
    # placeholders
    lambda r: "sk-" + "x" * r.randint(20, 48),
    lambda r: "OPENAI_API_KEY=sk-" + "X" * 4 + "..." + "X" * 4,
    lambda r: r.choice(
        ("API_KEY=<your-token>", "token: <your-token-here>", "GITHUB_TOKEN=<token>")
    ),
    lambda r: r.choice(("TOKEN=${TOKEN}", "DB_PASS=${DB_PASS:-}", "password: ${{ secrets.DB }}")),
    lambda r: r.choice(("password: changeme", "DB_PASSWORD=changeme", '"password": "changeme"')),
    lambda r: r.choice(("DB_PASSWORD=****", "SMTP_PASS=********", "token: ●●●●●●")),
    lambda r: r.choice(("ghp_" + "X" * 36, "glpat-" + "x" * 20, "hf_" + "x" * 34)),
    lambda r: r.choice(("AKIAXXXXXXXXXXXXXXXX", "AKIAIOSFODNN7EXAMPLE", "xoxb-your-token")),
    lambda r: r.choice(
        ("API_KEY=your-api-key-here", "SECRET_KEY=replace-me", "password=<password>")
    ),
    lambda r: r.choice(('curl -u "$USER:$PASS" https://x', "curl -u user:password https://x")),
    # ordinary code and commands
    lambda r: r.choice(
        (
            'token = os.environ["GITHUB_TOKEN"]',
            "def check_password(password: str) -> bool:",
            "const apiKey = process.env.API_KEY;",
            'key := fmt.Sprintf("%s:%s", owner, name)',
            'cache_key = f"user:{uid}:profile"',
            "rows.sort(key=lambda row: row.created_at)",
            "for key, value in sorted(config.items()):",
            "if password != confirm_password:",
            'headers = {"Authorization": f"Bearer {token}"}',
            'primary_key=True, sort_key="-created_at"',
            'credentials: "same-origin",',
            "passenger_count: 4",
            "bypass=cache_only",
            "hotkey: ctrl+shift+p",
            "monkey-patch the client in conftest.py",
        )
    ),
    lambda r: r.choice(
        (
            f"docker run -u {r.randint(1000, 1999)}:{r.randint(1000, 1999)} acme/web",
            "git push -u origin main",
            "ssh -i ~/.ssh/id_ed25519 git@github.com",
            "curl -fsSL https://get.acme.dev/install.sh | sh",
            f"kubectl -n prod rollout restart deploy/web-{pick(r, LOWER, 4)}",
            "pip install -U gitstate",
            "sort -u names.txt > unique.txt",
        )
    ),
    lambda r: (
        f"MAX_TOKENS={r.randint(100, 9000)} TOKEN_LIMIT={r.randint(100, 9000)} PASSWORD_MIN_LENGTH=12"
    ),
    lambda r: f"idempotency_key: {pick(r, HEX, 8)}-{pick(r, HEX, 4)}-{pick(r, HEX, 4)}",
    lambda r: f"PUBLIC_KEY={b64(r.randbytes(32))}",
    lambda r: f"- 密碼錯誤時重試 {r.randint(2, 5)} 次，令牌過期時重新整理",
    lambda r: f"Slack channel C0{pick(r, UPPER + DIGITS, 8)}, user U0{pick(r, UPPER + DIGITS, 8)}",
    lambda r: f"JIRA SK-{r.randint(100, 9999)} and AC-{r.randint(100, 9999)}",
    lambda r: f"the task-runner-{pick(r, LOWER, 8)} and disk-{pick(r, HEX, 24)} are ready",
    # random-looking but harmless: ids, hashes and blobs with no credential's shape
    lambda r: f"blob {b64(r.randbytes(r.randint(12, 90)))} stored",
    lambda r: f"build id {pick(r, ALNUM, r.randint(20, 64))}",
    lambda r: f"digest {pick(r, HEX, r.choice((16, 32, 40, 56, 64, 96, 128)))}",
    lambda r: f'etag: "{pick(r, HEX, 32)}"',
    lambda r: f"nonce={b64url(r.randbytes(16))}&state={b64url(r.randbytes(12))}",
    lambda r: f"{pick(r, LOWER, 6)}.{pick(r, LOWER + DIGITS, 6)}.{pick(r, LOWER, 30)}",
    lambda r: f"this.s.{pick(r, LOWER, 4)}{pick(r, UPPER, 1)}{pick(r, LOWER, 19)} = null;",
    lambda r: (
        f"ticket {pick(r, UPPER, 3)}-{r.randint(1, 99999)}: fix the {pick(r, LOWER, 6)} retry"
    ),
    lambda r: STATE_SAMPLE,
    lambda r: r.choice(
        (
            "      - uses: actions/checkout@v4",
            "        env:\n          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
            "RUN pip install --no-cache-dir -r requirements.txt",
            '  "scripts": {"test": "pytest -q", "lint": "ruff check ."},',
            'requires-python = ">=3.10"',
            "let token = lexer.next_token()?;",
            "func (s *Store) Token(ctx context.Context) (string, error) {",
            "export function hashPassword(password: string): Promise<string> {",
            "SELECT id, password_hash FROM users WHERE email = $1",
            "password_hash: argon2id",
            'api_key_header = APIKeyHeader(name="X-API-Key")',
            "ENV PATH=/opt/venv/bin:$PATH",
            "auth: {username: ci, password: env.CI_PASSWORD}",
            "- key: sort-order\n  value: descending",
        )
    ),
    lambda r: f"{r.randint(1, 9)} passed, {r.randint(0, 3)} failed in {r.random() * 9:.2f}s",
    lambda r: f"GET /api/v1/items?page={r.randint(1, 99)}&per_page=50 200 {r.randint(5, 900)}ms",
]

# --- the corpus --------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    label: str
    text: str
    secrets: tuple[str, ...]
    bare: bool


def corpus() -> tuple[list[Case], list[str]]:
    rng = random.Random(SEED)
    positives: list[Case] = []
    for fmt in FORMATS:
        for _ in range(PER_FORMAT):
            token = fmt.make(rng)
            for bare, context in TOKEN_CONTEXTS:
                if bare and not fmt.shaped:
                    bare_case = Case(
                        fmt.name + " (no shape)", context(fmt.env, token), (token,), True
                    )
                    positives.append(bare_case)
                    continue
                positives.append(Case(fmt.name, context(fmt.env, token), (token,), bare))
    for index, make in enumerate(NAMED_CONTEXTS):
        for _ in range(PER_FORMAT):
            secret, text = make(rng)
            positives.append(Case(f"named #{index}", text, (secret,), False))
    for _ in range(PER_FORMAT):
        for text, body in key_cases(rng):
            positives.append(Case("private key", text, tuple(body), False))
    lookalikes = [make(rng) for make in LOOKALIKE_GENERATORS for _ in range(PER_FORMAT * 2)]
    return positives, lookalikes


def caught(case: Case) -> bool:
    clean, hits = redact(case.text)
    return bool(scan(case.text)) and bool(hits) and not any(s in clean for s in case.secrets)


def test_the_corpus_meets_the_targets(capsys: pytest.CaptureFixture[str]) -> None:
    positives, lookalikes = corpus()
    missed = [case for case in positives if not caught(case)]
    bare = [case for case in positives if case.bare]
    bare_missed = [case for case in missed if case.bare]
    alarms = [text for text in lookalikes if scan(text)]

    rate = 1 - len(missed) / len(positives)
    bare_rate = 1 - len(bare_missed) / len(bare)
    alarm_rate = len(alarms) / len(lookalikes)
    with capsys.disabled():
        print(
            f"\nsecret corpus: caught {rate:.1%} of {len(positives)}, bare {bare_rate:.1%} of "
            f"{len(bare)}, false alarms {alarm_rate:.1%} of {len(lookalikes)} look-alikes"
        )
    detail = [f"missed {c.label}: {c.text[:100]!r}" for c in missed if "no shape" not in c.label]
    detail += [f"false alarm: {t[:100]!r} -> {scan(t)[0].kind}" for t in alarms]
    assert rate >= 0.95, detail
    assert bare_rate >= 0.90, detail
    assert alarm_rate <= 0.02, detail


def test_every_shaped_format_is_caught_bare() -> None:
    """No single format may hide behind the totals: each shaped one is found with no name."""
    positives, _ = corpus()
    missed = sorted(
        {c.label for c in positives if c.bare and "no shape" not in c.label and not caught(c)}
    )
    assert missed == []


def test_the_shapeless_formats_are_found_by_name_only() -> None:
    # The honest limit of a scan without an entropy rule (docs/secrets.md).
    positives, _ = corpus()
    shapeless = [c for c in positives if "no shape" in c.label]
    assert shapeless and not any(caught(c) for c in shapeless)
    named = [c for c in positives if c.label in ("AWS secret access key", "Twilio auth token")]
    assert named and all(caught(c) for c in named)


def test_a_new_key_body_under_an_old_begin_line_is_reported() -> None:
    rng = random.Random(SEED + 1)
    body = pem_lines(rsa_der(rng))
    old = "\n".join(["# notes", "-----BEGIN RSA PRIVATE KEY-----", ""])
    new = "\n".join(
        ["# notes", "-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"]
    )
    assert [(h.line, h.kind) for h in scan_changed(new, old)] == [(2, "private key block")]


def test_scan_changed_sees_each_secret_once_added_and_never_when_old() -> None:
    positives, _ = corpus()
    for case in positives:
        if not caught(case):
            continue
        assert scan_changed(case.text, "") == scan(case.text), case.text[:80]
        assert scan_changed(case.text, case.text) == [], case.text[:80]


def test_a_key_is_reported_whichever_of_its_lines_a_write_adds() -> None:
    rng = random.Random(SEED + 2)
    for label, make in KEYS:
        body = pem_lines(make(rng), 70 if label.startswith("OPENSSH") else 64)
        lines = ["notes", f"-----BEGIN {label}-----", *body, f"-----END {label}-----", "end"]
        new = "\n".join(lines)
        for added in range(1, len(lines) - 1):  # every line of the block, one at a time
            old = "\n".join(lines[:added] + lines[added + 1 :])
            assert [h.kind for h in scan_changed(new, old)] == ["private key block"], (label, added)
