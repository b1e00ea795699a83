"""The credential shapes redaction looks for, and the key names whose values are secret.

Two kinds of rule (`redact` applies them):
- a *shape* (`SHAPES`) is a credential recognisable by itself: a `ghp_…` token, an `AKIA…` key, a
  PEM private key, a JWT, a password in a URL, an `Authorization:` header, `DB_PASSWORD=…` in a
  `.env` line or a shell command, `"password": "…"` inside a text, …;
- a *name* (`secret_key`): a value stored under a credential-named key (`password`,
  `DB_PASSWORD`, `client_secret`, `Authorization`, `Cookie`, …) is a secret whatever it looks like.

Invariants (`redact`'s prefilter relies on them):
- every text a shape matches contains, lower-cased, one of the shape's `literals` (`LITERALS`:
  each with its shape's index);
- every secret-named key, as orjson encodes it (`…password":`), ends with one of `KEY_MARKS`;
- a shape's pattern starts with a literal (the regex engine then jumps between occurrences of
  it instead of trying every position); case-insensitive shapes run on the lower-cased text;
- nothing is compiled at import: a pattern compiles on first use (a tool hook loads this).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing and re are not imported: a tool hook loads this
if TYPE_CHECKING:
    import re
    from collections.abc import Callable


class Shape:
    """A credential recognisable by itself (a plain class: its patterns compile on first use)."""

    __slots__ = ("kind", "literals", "pattern", "confirm", "group", "lower", "not_after", "accept",
                 "_regex", "_confirm_regex")

    def __init__(self, kind: str, literals: tuple[bytes, ...], pattern: str, confirm: str,
                 group: int = 0, lower: bool = False, not_after: str = "",
                 accept: Callable[[str], bool] | None = None) -> None:
        self.kind = kind
        self.literals = literals  # lower-case; every match contains one of them
        self.pattern = pattern  # compiled on first use (start-up compiles nothing)
        self.confirm = confirm  # matches the encoded JSON of every string `pattern` matches
        self.group = group  # the part of a match that is the secret (-1: the first group matched)
        self.lower = lower  # pattern and confirm are written for, and run on, lower-cased text
        self.not_after = not_after  # characters that may not precede a match (a word boundary)
        self.accept = accept  # a last check of the secret (its original case)
        self._regex: re.Pattern[str] | None = None
        self._confirm_regex: re.Pattern[bytes] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled pattern."""
        if self._regex is None:
            import re

            self._regex = re.compile(self.pattern)
        return self._regex

    @property
    def confirm_regex(self) -> re.Pattern[bytes]:
        """The compiled confirmation pattern (for bytes)."""
        if self._confirm_regex is None:
            import re

            self._confirm_regex = re.compile(self.confirm.encode())
        return self._confirm_regex


def _basic_credentials(text: str) -> bool:
    """The base64 of `user:password`: printable ASCII with a colon in it (a word after `Basic`,
    `Basic usage`, decodes to no such thing, or not at all)."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and all(0x20 <= b < 0x7F for b in decoded)


_NOT_SECRETS = frozenset({"none", "null", "nil", "true", "false", "undefined", "required",
                          "optional", "string", "redacted", "changeme"})


_RANDOM_RUN = r"[A-Za-z0-9]{16}"


def _random_run(text: str) -> bool:
    """An `sk-` key holds a random run of 16+ letters and digits; hyphenated words (a project
    named `sk-learn-experiments-2024`, a path) do not."""
    import re

    return re.search(_RANDOM_RUN, text) is not None  # re's cache: compiled once, on first use


def _assigned(text: str) -> bool:
    """A value after `NAME=` / `NAME:` that is not a reference, a placeholder or a bare word."""
    return not (text[:1] in "$%<{" or text.lower() in _NOT_SECRETS or set(text) <= set("*xX.-_"))


ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_VALUE = (r"(?:\"((?:[^\"\\\n]|\\.)+)\"|'([^'\n]+)'|"
          r"([^\s\"'`,;&|<>(){}\[\]=][^\s\"'`,;&|<>(){}\[\]]*)(?=[\s\"'`,;&|<>)}\]]|$))")
# the space between a name (or an auth scheme) and its value: any whitespace but a line break.
# A text copied from a web page, a chat or a PDF has no-break or other Unicode spaces where it
# showed spaces (U+00A0, U+202F, U+2009, U+3000, ...): `Authorization: Basic …` looks the same
_SPACE = r"[^\S\r\n]"
_ASSIGN = r"[\"']?" + _SPACE + r"*(?:=|:(?=" + _SPACE + r"*\S{4}))" + _SPACE + "*" + _VALUE
_SCHEMES = r"(?:basic|bearer|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256)"
# in a confirm pattern (run on the encoded JSON, or on the UTF-8 of a text): what `\s` and
# `_SPACE` match in the decoded text — raw, or as JSON writes it (`\t`, `\n`, `\u000b`), or a
# non-ASCII space, kept as its UTF-8 bytes (a confirm may match more than its pattern)
_JSON_SPACE = r"(?:[\s\x1c-\x1f]|\\[tnrf]|\\u00[01][0-9a-f]|[\x80-\xff]+)"


def _shape(kind: str, literals: str, pattern: str, group: int = 0, *, lower: bool = False,
           not_after: str = "", accept: Callable[[str], bool] | None = None,
           confirm: str | None = None) -> Shape:
    """A shape; `confirm` defaults to the pattern itself (fine when nothing in a match is ever
    escaped in JSON and no look-behind guards it: boundaries live in `not_after`)."""
    return Shape(kind, tuple(lit.encode() for lit in literals.split()), pattern,
                 pattern if confirm is None else confirm, group, lower, not_after, accept)


def _assignment(name: str, *spellings: str) -> Shape:
    """`<…name>=value`, `<…name>: value`, `"<…name>": "value"` in free text, for each spelling."""
    words = "|".join(s.replace("-", "\\-") for s in spellings)  # [a-z_-]: re.escape's answer
    return _shape("secret", " ".join(spellings), f"(?:{words}){_ASSIGN}", -1, lower=True,
                  accept=_assigned, confirm=f"(?:{words})[\\\\\"']*{_JSON_SPACE}*[=:]")


SHAPES: tuple[Shape, ...] = (
    _shape("private_key", "private", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
           r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
           confirm=r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY"),
    _shape("anthropic_key", "sk-ant-", r"sk-ant-[A-Za-z0-9_\-]{20,}", accept=_random_run),
    _shape("openai_key", "sk-", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
           not_after=ALNUM + "_-", accept=_random_run),
    _shape("stripe_key", "sk_live_ sk_test_ rk_live_ rk_test_ whsec_",
           r"(?:[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})", not_after=ALNUM),
    _shape("github_token", "ghp_ gho_ ghu_ ghs_ ghr_ github_pat_",
           r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    _shape("gitlab_token", "glpat- gldt- glrt- glptt- glft- glsoat-",
           r"gl(?:pat|dt|rt|ptt|ft|soat)-[A-Za-z0-9_\-]{20,}"),
    _shape("aws_access_key", "akia asia abia acca a3t",
           r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])",
           not_after="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
    _shape("slack_token", "xox", r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    _shape("slack_webhook", "hooks.slack.com",
           r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+\-]+"),
    _shape("google_api_key", "aiza", r"AIza[0-9A-Za-z_\-]{35}"),
    _shape("google_oauth", "gocspx- ya29.", r"(?:GOCSPX-[A-Za-z0-9_\-]{20,}|ya29\.[0-9A-Za-z_\-]{20,})"),
    _shape("jwt", "eyj", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _shape("npm_token", "npm_", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", not_after=ALNUM),
    _shape("pypi_token", "pypi-ageichlwas5vcmc", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    _shape("huggingface_token", "hf_", r"hf_[A-Za-z0-9]{34,}", not_after=ALNUM),
    _shape("sendgrid_key", "sg.", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
    _shape("mailgun_key", "key-", r"key-[0-9a-f]{32}(?![0-9a-f])", not_after=ALNUM),
    _shape("digitalocean_token", "dop_v1_ doo_v1_ dor_v1_", r"do[opr]_v1_[a-f0-9]{64}"),
    _shape("shopify_token", "shpat_ shpca_ shppa_ shpss_", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _shape("age_secret_key", "age-secret-key-1", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    _shape("authorization", "authorization",
           r"authorization(?:\\*[\"'])?\s*[:=]\s*(?:\\*[\"'])?(?:" + _SCHEMES + _SPACE + "+)?"
           r"(?!" + _SCHEMES + r"\b)([^\s\"'\\,;]{6,})", 1, lower=True,
           confirm=r"authorization[\\\"']*" + _JSON_SPACE + "*[:=]"),
    _shape("bearer_token", "bearer", r"bearer" + _SPACE + r"+([a-z0-9._~+/=\-]{16,})", 1,
           lower=True, confirm=r"bearer" + _JSON_SPACE + r"+[a-z0-9._~+/=\-]{16,}"),
    # `user:password` in base64 after `Basic` (6 characters before the padding: `u:pw`), after
    # `%20` too (a URL-encoded header); `_basic_credentials` tells it from a word
    _shape("basic_auth", "basic", r"basic(?:" + _SPACE + r"|%20)+([a-z0-9+/]{6,}={0,2})", 1,
           lower=True, accept=_basic_credentials,
           confirm=r"basic(?:" + _JSON_SPACE + r"|%20)+[a-z0-9+/]{6,}"),
    _shape("url_password", "://", r"://[^\s/?#@:'\"]*:([^\s/?#@'\"]+)@", 1,
           confirm=r"://[^\s/?#@]*:[^\s/?#@]*@"),
    _shape("cli_password", "--pass --token --secret --api-key --apikey --access-key",
           r"--(?:password|passwd|pass|token|secret|api-key|apikey|access-key)(?:=|" + _SPACE + "+)"
           r"([^\s\"'-][^\s\"']*)", 1, lower=True, not_after=ALNUM + "-", accept=_assigned,
           confirm=r"--(?:pass|token|secret|api-key|apikey|access-key)[a-z]*(?:=|"
           + _JSON_SPACE + ")"),
    # NAME=value / NAME: value / "name": "value" / name = 'value' in free text (.env, YAML, JSON)
    _assignment("password", "password", "passwd", "passphrase"),
    _assignment("secret key", "secret_key", "secret-key", "secretkey"),
    _assignment("secret", "secret"),
    _assignment("token", "token"),
    _assignment("api key", "api_key", "api-key", "apikey"),
    _assignment("access key", "access_key", "access-key", "accesskey"),
    _assignment("private key", "private_key", "private-key", "privatekey"),
    _assignment("account key", "accountkey", "sharedaccesskey", "master_key", "masterkey"),
    _assignment("credentials", "credentials", "credential"),
    _assignment("other keys", "session_key", "signing_key", "encryption_key"),
)
LITERALS = tuple((lit, n) for n, shape in enumerate(SHAPES) for lit in shape.literals)
"""(literal, index of its shape in SHAPES) for every literal of every shape."""
SECRET_KEY_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "api_key", "apikey",
                      "api-key", "private_key", "access_key", "secret_key", "master_key",
                      "authorization", "credentials", "accountkey", "sharedaccesskey", "cookie",
                      "session_key", "signing_key", "encryption_key")
KEY_MARKS = tuple(e.encode() + b'":' for e in SECRET_KEY_ENDINGS)
"""A secret-named key as orjson encodes it ends with one of these (`…password":`)."""


def secret_key(key: str) -> bool:
    """True for a key whose value is a secret by name."""
    return key.lower().endswith(SECRET_KEY_ENDINGS)

