"""Redact credentials from event payloads before they reach disk.

Two kinds of rule:
- a *shape* is a credential recognisable by itself: a `ghp_…` token, an `AKIA…` key, a PEM
  private key, a JWT, a password in a URL, an `Authorization:` header, `DB_PASSWORD=…` in a
  `.env` line or a shell command, `"password": "…"` inside a text, a bare AWS secret key, …;
- a *name*: a value stored under a credential-named key (`password`, `DB_PASSWORD`,
  `client_secret`, `Authorization`, `Cookie`, …) is a secret whatever it looks like.
A secret is replaced by `[REDACTED:<kind>:<sha256 prefix>]`, so equal secrets stay recognisable
without being stored; a placeholder is never redacted again.

Invariants (they make the common case cheap: a body with nothing secret costs one `lower()`, one
Aho-Corasick pass over it for every literal at once (ahocorasick-rs), a `translate()` and a
`bytes.find`, then is returned untouched; otherwise only the shapes whose literal occurs and
whose `confirm` pattern matches the encoded body run, on the decoded strings):
- every text a shape matches contains, lower-cased, one of the shape's `literals`; the bare AWS
  secret key, which has no literal, is a run of exactly 40 base64 characters (`_BOUNDED`);
- every secret-named key, as orjson encodes it (`…password":`), ends with one of `_KEY_MARKS`;
- a shape's pattern starts with a literal (the regex engine then jumps between occurrences of
  it instead of trying every position); case-insensitive shapes run on the lower-cased text.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing, dataclasses, re and orjson are not imported: a tool hook loads this
if TYPE_CHECKING:  # (re only when a body may hold a secret: its first confirmation compiles it)
    import re
    from collections.abc import Callable
    from typing import Any


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


_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
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
           not_after=_ALNUM + "_-", accept=_random_run),
    _shape("stripe_key", "sk_live_ sk_test_ rk_live_ rk_test_ whsec_",
           r"(?:[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})", not_after=_ALNUM),
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
    _shape("npm_token", "npm_", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", not_after=_ALNUM),
    _shape("pypi_token", "pypi-ageichlwas5vcmc", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    _shape("huggingface_token", "hf_", r"hf_[A-Za-z0-9]{34,}", not_after=_ALNUM),
    _shape("sendgrid_key", "sg.", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
    _shape("mailgun_key", "key-", r"key-[0-9a-f]{32}(?![0-9a-f])", not_after=_ALNUM),
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
           r"([^\s\"'-][^\s\"']*)", 1, lower=True, not_after=_ALNUM + "-", accept=_assigned,
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
_LITERALS = tuple((lit, n) for n, shape in enumerate(SHAPES) for lit in shape.literals)
# a run of 40 base64 characters (a bare AWS secret access key), found without a regex
_B64 = frozenset((_ALNUM + "/+").encode())
_RUN_TABLE = bytes(0x61 if b in _B64 else 0x20 for b in range(256))
_RUN = b"a" * 40
_BOUNDED = tuple((width, b" " + b"a" * width + b" ") for width in (40, 41, 45))
_PLACEHOLDER = r"\[REDACTED:[A-Za-z0-9_.\-]+:[0-9a-f]{8}\]"  # compiled on first use (re's cache)
_SECRET_KEY_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "api_key", "apikey",
                       "api-key", "private_key", "access_key", "secret_key", "master_key",
                       "authorization", "credentials", "accountkey", "sharedaccesskey", "cookie",
                       "session_key", "signing_key", "encryption_key")
_KEY_MARKS = tuple(e.encode() + b'":' for e in _SECRET_KEY_ENDINGS)


def secret_key(key: str) -> bool:
    """True for a key whose value is a secret by name."""
    return key.lower().endswith(_SECRET_KEY_ENDINGS)


def placeholder(kind: str, secret: str) -> str:
    """The text that stands in for a redacted secret."""
    import hashlib  # here: a body with no secret never loads OpenSSL

    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"[REDACTED:{kind}:{digest}]"


class _Plan:
    """What a body needs: the shapes it may hold, whether a bare AWS key may be in it, whether a
    key is secret by name."""

    __slots__ = ("shapes", "runs", "names")

    def __init__(self, shapes: tuple[Shape, ...], runs: bool, names: bool) -> None:
        self.shapes = shapes
        self.runs = runs
        self.names = names

    @property
    def empty(self) -> bool:
        return not (self.shapes or self.runs or self.names)


_AUTOMATON: list[tuple[Any, tuple[int, ...]]] = []


def _automaton() -> tuple[Any, tuple[int, ...]]:
    """One Aho-Corasick automaton over every literal and key mark (built on first use):
    pattern index -> shape index, or -1 for a key mark."""
    if not _AUTOMATON:
        from ahocorasick_rs import BytesAhoCorasick, Implementation

        owners = tuple(n for _lit, n in _LITERALS) + (-1,) * len(_KEY_MARKS)
        patterns = [lit for lit, _n in _LITERALS] + list(_KEY_MARKS)
        _AUTOMATON.append((BytesAhoCorasick(patterns, implementation=Implementation.DFA), owners))
    return _AUTOMATON[0]


_NOTHING = _Plan((), False, False)


def _hits(low: bytes, *, once: bool) -> set[int]:
    """The owners (shape index, -1 for a key mark) of every literal that occurs in `low`; `once`:
    the process redacts this one body (a tool hook), so a small one is searched literal by
    literal rather than by building the Aho-Corasick automaton."""
    if once and len(low) <= 16384:
        return {n for lit, n in _LITERALS if lit in low} | (
            {-1} if any(mark in low for mark in _KEY_MARKS) else set())
    automaton, owners = _automaton()
    return {owners[i] for i, _start, _end in
            automaton.find_matches_as_indexes(low, overlapping=True)}


def _plan(encoded: bytes, *, once: bool = False) -> _Plan:
    """One pass over the lower-cased bytes for every literal, then each shape found confirmed."""
    low = encoded.lower()
    hits = _hits(low, once=once)
    runs = _has_run(encoded)
    if not hits and not runs:
        return _NOTHING  # the common case
    shapes = tuple(SHAPES[n] for n in sorted(hits - {-1})
                   if SHAPES[n].confirm_regex.search(low if SHAPES[n].lower else encoded))
    return _Plan(shapes, runs, -1 in hits)


def _has_run(encoded: bytes) -> bool:
    """True when `encoded` holds a plausible bare AWS secret key: exactly 40 base64 characters
    between two others, mixed case. In JSON a string may hold escapes (`\\n`, `\\u00e9`): a run
    right after an unescaped backslash starts with the escape's letters (1, or 5 for `\\u`), so
    runs of 41 and 45 are looked at too."""
    runs = encoded.translate(_RUN_TABLE)
    if _RUN not in runs:
        return False  # no 40 base64 characters in a row anywhere: the common case
    for width, needle in _BOUNDED:
        at = runs.find(needle)
        while at != -1:
            start, end = at + 1 + width - 40, at + 1 + width
            back = at + 1
            while back and encoded[back - 1] == 0x5C:  # backslashes right before the run
                back -= 1
            escaped = (at + 1 - back) % 2 == 1
            run = encoded[start:end]
            if (escaped == (width > 40) and run != run.lower() and run != run.upper()
                    and encoded[start - 1:start] != b"=" and encoded[end:end + 1] != b"="
                    and _random_key(run.decode())):
                return True
            at = runs.find(needle, at + 1)
    return False


def _apply(shape: Shape, text: str) -> str:
    """`text` with every match of `shape` replaced (its secret part only)."""
    subject = text.lower() if shape.lower else text
    if len(subject) != len(text):  # a character whose lower case is longer: match as it is
        import re

        subject, pattern = text, re.compile(shape.pattern, re.IGNORECASE)
    else:
        pattern = shape.regex
    out: list[str] = []
    done = 0
    for match in pattern.finditer(subject):
        start = match.start()
        if shape.not_after and start and text[start - 1] in shape.not_after:
            continue
        group = shape.group if shape.group >= 0 else next(
            g for g in range(1, (match.lastindex or 0) + 1) if match.group(g) is not None)
        left, right = match.span(group)
        secret = text[left:right]
        if shape.accept is not None and not shape.accept(secret):
            continue
        out += [text[done:left], placeholder(shape.kind, secret)]
        done = right
    return "".join(out) + text[done:] if out else text


def _aws_secrets(text: str) -> str:
    """`text` with every bare AWS secret access key (a random-looking 40-run) replaced."""
    encoded = b" " + text.encode("utf-8", "surrogatepass") + b" "
    runs = encoded.translate(_RUN_TABLE)
    needle = _BOUNDED[0][1]
    found = set()
    at = runs.find(needle)
    while at != -1:
        run = encoded[at + 1:at + 41]
        if encoded[at:at + 1] != b"=" and encoded[at + 41:at + 42] != b"=":
            candidate = run.decode()
            if _random_key(candidate):
                found.add(candidate)
        at = runs.find(needle, at + 1)
    for secret in found:
        text = text.replace(secret, placeholder("aws_secret_key", secret))
    return text


def _random_key(text: str) -> bool:
    """An AWS secret access key, not a hex digest or a word: mixed case, digits, high entropy."""
    if not (any(c.isupper() for c in text) and any(c.islower() for c in text)
            and any(c.isdigit() or c in "/+" for c in text)):
        return False
    import math
    from collections import Counter

    counts = Counter(text)
    return -sum(n / 40 * math.log2(n / 40) for n in counts.values()) >= 4.0


def _redact_str(text: str, plan: _Plan) -> str:
    """Apply the plan's shapes in turn, each to the parts of `text` that are not placeholders."""
    from functools import partial

    steps: list[Callable[[str], str]] = [partial(_apply, shape) for shape in plan.shapes]
    if plan.runs:
        steps.append(_aws_secrets)
    for step in steps:
        if "[REDACTED:" not in text:
            text = step(text)
            continue
        import re

        kept = re.findall(_PLACEHOLDER, text)
        pieces = [step(piece) for piece in re.split(_PLACEHOLDER, text)]
        text = "".join(piece + (kept[i] if i < len(kept) else "") for i, piece in enumerate(pieces))
    return text


def _hide(value: Any, kind: str) -> Any:
    """Every leaf of a value stored under a secret-named key, replaced."""
    if isinstance(value, str):
        import re

        return value if not value or re.fullmatch(_PLACEHOLDER, value) else placeholder(kind, value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return placeholder(kind, repr(value))
    if isinstance(value, dict):
        return {k: _hide(v, kind) for k, v in value.items()}
    if isinstance(value, list):
        return [_hide(v, kind) for v in value]
    return value


def _walk(value: Any, plan: _Plan) -> Any:
    if isinstance(value, str):
        return _redact_str(value, plan)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = _redact_str(key, plan) if isinstance(key, str) else key
            out[name] = (_hide(item, key.lower()) if isinstance(key, str) and secret_key(key)
                         else _walk(item, plan))
        return out
    if isinstance(value, list):
        return [_walk(item, plan) for item in value]
    return value


def redact_text(text: str) -> str:
    """Replace every credential-shaped substring of `text`."""
    plan = _plan(text.encode("utf-8", "surrogatepass"))
    return _redact_str(text, plan) if plan.shapes or plan.runs else text


def redact_value(value: Any, key: str | None = None) -> Any:
    """Return `value` (any JSON value) with secrets replaced, recursing into lists and dicts."""
    import orjson

    if key is not None and secret_key(key):
        return _hide(value, key.lower())
    plan = _plan(orjson.dumps(value))
    return value if plan.empty else _walk(value, plan)


def redact_decoded(value: Any, encoded: bytes) -> Any:
    """Return `value` with secrets replaced, given its JSON encoding (compact, UTF-8): what a
    tool hook spools, without orjson."""
    plan = _plan(encoded, once=True)
    return value if plan is _NOTHING or plan.empty else _walk(value, plan)


def redact_json(body: bytes) -> bytes:
    """Redact an encoded JSON object; returns the same bytes when nothing looks secret."""
    plan = _plan(body)
    if plan is _NOTHING or plan.empty:
        return body
    import orjson

    return orjson.dumps(_walk(orjson.loads(body), plan))
