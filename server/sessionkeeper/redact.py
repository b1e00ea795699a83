"""Redact credentials from event payloads before they reach disk.

The rules are `redact_shapes`': credential *shapes* (a `ghp_…` token, an `Authorization:` header,
`DB_PASSWORD=…`, …) and secret key *names* (`password`, `client_secret`, `Cookie`, …); here they
are found and applied, and a bare AWS secret key is found too. A secret is replaced by
`[REDACTED:<kind>:<sha256 prefix>]`, so equal secrets stay recognisable without being stored; a
placeholder is never redacted again.

Invariants (they make the common case cheap: a body with nothing secret costs one `lower()`, one
Aho-Corasick pass over it for every literal at once (ahocorasick-rs), a `translate()` and a
`bytes.find`, then is returned untouched; otherwise only the shapes whose literal occurs and
whose `confirm` pattern matches the encoded body run, on the decoded strings):
- every text a shape matches contains, lower-cased, one of its literals, and every secret-named
  key ends with one of `KEY_MARKS` (`redact_shapes`' invariants); the bare AWS secret key, which
  has no literal, is a run of exactly 40 base64 characters (`_BOUNDED`).
"""

from __future__ import annotations

from .redact_shapes import ALNUM, KEY_MARKS, LITERALS, SHAPES, Shape, secret_key

TYPE_CHECKING = False  # typing, dataclasses, re and orjson are not imported: a tool hook loads this
if TYPE_CHECKING:  # (re only when a body may hold a secret: its first confirmation compiles it)
    from collections.abc import Callable
    from typing import Any

# a run of 40 base64 characters (a bare AWS secret access key), found without a regex
_B64 = frozenset((ALNUM + "/+").encode())
_RUN_TABLE = bytes(0x61 if b in _B64 else 0x20 for b in range(256))
_RUN = b"a" * 40
_BOUNDED = tuple((width, b" " + b"a" * width + b" ") for width in (40, 41, 45))
_PLACEHOLDER = r"\[REDACTED:[A-Za-z0-9_.\-]+:[0-9a-f]{8}\]"  # compiled on first use (re's cache)


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
        from . import with_site

        with_site()  # a tool hook (started with -S) reaches this with a large call
        from ahocorasick_rs import BytesAhoCorasick, Implementation

        owners = tuple(n for _lit, n in LITERALS) + (-1,) * len(KEY_MARKS)
        patterns = [lit for lit, _n in LITERALS] + list(KEY_MARKS)
        _AUTOMATON.append((BytesAhoCorasick(patterns, implementation=Implementation.DFA), owners))
    return _AUTOMATON[0]


def prepare() -> None:
    """Build the automaton now: a process that forks workers builds it once, not per worker."""
    _automaton()


_NOTHING = _Plan((), False, False)


def _hits(low: bytes, *, once: bool) -> set[int]:
    """The owners (shape index, -1 for a key mark) of every literal that occurs in `low`; `once`:
    the process redacts this one body (a tool hook), so a small one is searched literal by
    literal rather than by building the Aho-Corasick automaton."""
    if once and len(low) <= 16384:
        return {n for lit, n in LITERALS if lit in low} | (
            {-1} if any(mark in low for mark in KEY_MARKS) else set())
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
