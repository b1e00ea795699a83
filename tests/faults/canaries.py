"""Fake credentials of every shape the redaction knows, and texts that must stay as they are.

Each canary is (kind, the secret as it reaches disk if not redacted, a text that carries it).
They are made up (random-looking, right shape, never valid anywhere) and built at import time so
that no credential-shaped literal sits in the repository for scanners to flag.
"""

from __future__ import annotations

import base64
import random

_rng = random.Random(20261129)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def _r(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _b64(n: int) -> str:
    while True:  # a bare AWS secret: mixed case, digits, a slash, as AWS makes them
        key = _r(n - 2, _ALNUM + "+/") + "/" + _r(1, "0123456789")
        if any(c.isupper() for c in key) and any(c.islower() for c in key):
            return key


_AKIA = "AKIA" + _r(16, _UPPER)
_AWS_SECRET = _b64(40)
_BASIC = base64.b64encode(b"admin:Basic-pw-" + _r(8).encode()).decode()


def _basic(user: str, length: int) -> str:
    """A Basic credential (base64 of `user:password`), its padding stripped: the part that must
    never reach the store (`length` bytes of `user:password`; its remainder mod 3 sets the
    padding: 0 none, 1 `==`, 2 `=`)."""
    return base64.b64encode(f"{user}:{_r(length - len(user) - 1)}".encode()).decode().rstrip("=")


# the header line issue 31 was reported with: `user:Xq9secretPW`, as curl -v prints it
_HEADER_LINE = base64.b64encode(b"user:Xq9secretPW").decode()
_B0, _B1, _B2 = _basic("deploy", 24), _basic("deploy", 25), _basic("deploy", 26)  # none, ==, =
_SHORT = base64.b64encode(b"ab:cd").decode()  # 7 base64 characters before the padding
_PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + _r(64) + "\n" + _r(64)
        + "\n-----END RSA PRIVATE KEY-----")
_OPENSSH = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + _r(60)
            + "\n-----END OPENSSH PRIVATE KEY-----")
_JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + _r(24) + "In0." + _r(43))

CANARIES: list[tuple[str, str, str]] = [
    ("openai_key", s := "sk-proj-" + _r(48), f"use {s} for the eval"),
    ("openai_legacy_key", s := "sk-" + _r(48), f"OPENAI={s}"),
    ("anthropic_key", s := "sk-ant-api03-" + _r(40) + "-" + _r(20), f"key {s}"),
    ("github_token", s := "ghp_" + _r(36), f"git clone https://{s}@github.com/o/r"),
    ("github_pat", s := "github_pat_" + _r(22) + "_" + _r(59), f"token: {s}"),
    ("gitlab_token", s := "glpat-" + _r(20), f"PRIVATE-TOKEN {s}"),
    ("aws_access_key", _AKIA, f"aws configure set aws_access_key_id {_AKIA}"),
    ("aws_access_key_glued", _AKIA, f"export KEY_{_AKIA}_ID=1"),
    ("aws_secret_bare", _AWS_SECRET, f"the secret is {_AWS_SECRET} keep it safe"),
    ("aws_secret_named", _AWS_SECRET, f"aws_secret_access_key = {_AWS_SECRET}"),
    ("slack_token", s := "xoxb-" + _r(11, "0123456789") + "-" + _r(24), f"slack {s}"),
    ("slack_webhook", s := "https://hooks.slack.com/services/T" + _r(8, _UPPER) + "/B"
     + _r(8, _UPPER) + "/" + _r(24), f"curl -X POST {s}"),
    ("google_api_key", s := "AIza" + _r(35), f"maps key={s}"),
    ("google_oauth_secret", s := "GOCSPX-" + _r(28), f"client secret {s}"),
    ("jwt", _JWT, f"cookie session={_JWT}"),
    ("npm_token", s := "npm_" + _r(36), f"//registry.npmjs.org/:_authToken={s}"),
    ("npm_token_bare", s := "npm_" + _r(36), f"publish with {s}"),
    ("pypi_token", s := "pypi-AgEIcHlwaS5vcmc" + _r(60), f"twine upload -p {s}"),
    ("huggingface_token", s := "hf_" + _r(34), f"HF {s}"),
    ("sendgrid_key", s := "SG." + _r(22) + "." + _r(43), f"mail via {s}"),
    ("stripe_key", s := "sk_live_" + _r(24), f"stripe {s}"),
    ("digitalocean_token", s := "dop_v1_" + _r(64, "0123456789abcdef"), f"doctl {s}"),
    ("shopify_token", s := "shpat_" + _r(32, "0123456789abcdef"), f"shop {s}"),
    ("age_secret_key", s := "AGE-SECRET-KEY-1" + _r(58, _UPPER), f"age -i {s}"),
    ("mailgun_key", s := "key-" + _r(32, "0123456789abcdef"), f"mailgun {s}"),
    ("private_key_rsa", _PEM, f"here it is:\n{_PEM}\n"),
    ("private_key_openssh", _OPENSSH, f"id_ed25519:\n{_OPENSSH}"),
    ("postgres_url_password", s := "Pg-" + _r(12), f"DATABASE_URL=postgres://app:{s}@db:5432/app"),
    ("redis_url_password", s := "Rd-" + _r(12), f"connect redis://:{s}@cache:6379/0"),
    ("https_url_token", s := "Ht-" + _r(16), f"git remote add o https://ci:{s}@git.example.com/r"),
    ("authorization_basic", _BASIC, f"curl -H 'Authorization: Basic {_BASIC}' http://x"),
    ("basic_bare", _BASIC, f"header was Basic {_BASIC}"),
    # Basic credentials in every form a user pastes (issue 31): header name case, with and
    # without padding, the line anywhere in the text, in curl flags, JSON strings, tool output
    ("basic_header_line", _HEADER_LINE.rstrip("="), f"Authorization: Basic {_HEADER_LINE}"),
    ("basic_curl_verbose", _B1, "*   Trying 10.0.0.7:443...\n> GET /v1/me HTTP/1.1\r\n"
     f"> Host: api.example.com\r\n> Authorization: Basic {_B1}==\r\n> User-Agent: curl/8.5.0"
     "\r\n>\r\n< HTTP/1.1 200 OK"),
    ("basic_lower_case", _B2, f"authorization: basic {_B2}="),
    ("basic_upper_case", _B0, f"AUTHORIZATION: BASIC {_B0}"),
    ("basic_no_space_after_colon", _B2, f"Authorization:Basic {_B2}="),
    ("basic_curl_header_double_quoted", _B0,
     f'curl --header "Authorization: Basic {_B0}" https://api.example.com/v1/me'),
    ("basic_curl_glued_flag", _B1, f"curl -sH'authorization: Basic {_B1}==' https://x"),
    ("basic_padding_stripped", _B1, f"Authorization: Basic {_B1}"),
    ("proxy_authorization_basic", _B2, f"Proxy-Authorization: Basic {_B2}="),
    ("proxy_authorization_curl", _B0,
     f"curl -x http://proxy:3128 -H 'Proxy-Authorization: Basic {_B0}' https://x"),
    ("basic_json_string", _B1,
     f'{{"headers": {{"Authorization": "Basic {_B1}==", "Accept": "application/json"}}}}'),
    ("basic_json_escaped", _B2, f'{{\\"headers\\":{{\\"Authorization\\":\\"Basic {_B2}=\\"}}}}'),
    ("basic_har_entry", _B0, f'{{"name": "authorization", "value": "Basic {_B0}"}}'),
    ("basic_go_header_set", _B1, f'req.Header.Set("Authorization", "Basic {_B1}==")'),
    ("basic_python_requests", _B2,
     f'requests.get(url, headers={{"Authorization": f"Basic {_B2}="}})'),
    ("basic_markdown", _B0, f"send `Authorization: Basic {_B0}` with it"),
    ("basic_nbsp", _B1, f"Authorization:\u00a0Basic\u00a0{_B1}=="),
    ("basic_short_credential", _SHORT.rstrip("="), f'req.Header.Set("Authorization", "Basic {_SHORT}")'),
    ("basic_short_in_escaped_json", _SHORT.rstrip("="), f'{{\\"Authorization\\": \\"Basic {_SHORT}\\"}}'),
    ("authorization_bearer", s := _r(40), f"Authorization: Bearer {s}"),
    ("authorization_token", s := _r(32), f"Authorization: token {s}"),
    ("dotenv_password", s := "hunter2-" + _r(6), f"DB_PASSWORD={s}\nDB_HOST=db"),
    ("dotenv_api_key", s := "plain" + _r(10), f"STRIPE_API_KEY={s}"),
    ("dotenv_secret_key", s := "dj-" + _r(20), f"DJANGO_SECRET_KEY='{s}'"),
    ("dotenv_quoted_password", s := "pw " + _r(8), f'SMTP_PASSWORD="{s}"'),
    ("json_password_in_text", s := "Js-" + _r(10), f'config is {{"password": "{s}", "u": 1}}'),
    ("yaml_password", s := "yml" + _r(9), f"db:\n  password: {s}\n  host: x"),
    ("cli_password_flag", s := "Cli" + _r(9), f"mysql --password {s} -h db"),
    ("cli_token_flag", s := "Tk" + _r(14), f"gh auth login --token={s}"),
    ("azure_account_key", s := _r(86) + "==", f"AccountName=x;AccountKey={s};EndpointSuffix=c"),
    ("client_secret_assignment", s := "cs-" + _r(16), f"client_secret: {s}"),
    ("password_query_string", s := "Qs" + _r(10), f"GET /login?user=a&password={s}&x=1"),
]

# texts with nothing secret in them: they must come out exactly as they went in
INNOCENT: list[str] = [
    "fix the rounding bug in payment.py and run the tests",
    "commit 1f2d5e6a7b801f2d5e6a7b801f2d5e6a7b80abcd on branch fix/payment",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d488ec7c1ba7d",
    "uuid 7b0c4a52-3f7e-4c1e-9a43-1f2d5e6a7b80",
    "SyntaxError: Unexpected token '}' in JSON at position 5",
    "the password field is required",
    "tokens used: 1200 input, 300 output; max_tokens=4096",
    "task-based workflow, disk-usage report, risk-assessment",
    "see https://docs.python.org/3/library/re.html#module-re",
    "ssh://git@github.com/org/repo.git",
    "password == expected  # compare",
    "api_key = load_api_key()",
    "token = os.environ['GITHUB_TOKEN']",
    "export DB_PASSWORD=$DB_PASSWORD_FROM_VAULT",
    "tests/unit/test_resume_reports_drift_when_branch_changed.py",
    "ThisIsALongCamelCaseIdentifierWithoutAnyDigitsInIt",
    "name ThisIsAFortyCharacterCamelCaseIdentifyXY here",
    "[REDACTED:github_token:1a2b3c4d] was already redacted",
    "Basic usage: run make test",
    'WWW-Authenticate: Basic realm="api", charset="UTF-8"',
    "Basic Settings and basic types: int, str; the Basic plan; BASIC 2.0 interpreter",
    "key-value store with keys and values",
    "git push -u origin main",
]
