"""Redaction cost on the record path, side by side in one process (issue 13: "redaction is 30% of
the record path").

    python tests/benchmarks/bench_redact.py [--quick] [--reps N] [--json OUT.json]

Cases, each over the same encoded event bodies, subject and baseline alternating:
  plain   500-byte messages of plain words (the bodies of bench_store's record benchmarks);
  clean   bodies an agent records all day, none secret (messages with code, URLs, hashes and
          paths; shell operations with their args digest; test output; todos; costs): the
          common case, where redaction must only decide "nothing here";
  secret  the same bodies with one credential planted in one body of ten;
  record  the whole Python-API record path (Session.record of the clean bodies as dicts) with
          redaction now, with wave 1's redact_json in its place, and off: the share of the
          record path redaction costs.
Subjects: `now` (sessionkeeper.redact.redact_json) against `wave 1` (the implementation this
replaced, kept below verbatim as the baseline: a 10-branch regex over the lower-cased body, a
key-name scan, 9 shape regexes) — which found 12 of the 45 canary shapes of
tests/faults/canaries.py, against 45 of 45 now (the run prints the count for today's list: 12 of
64 since issue 31 added 19 Basic forms). With `detect-secrets` importable (it is not a
dependency), its line scan of the same bodies is shown too, for scale.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "server"), str(ROOT)]

from sessionkeeper.redact import redact_json  # noqa: E402
from tests.benchmarks._bench import alternate  # noqa: E402
from tests.benchmarks.rollouts import message_bodies  # noqa: E402
from tests.faults.canaries import CANARIES  # noqa: E402

# ---- the wave-1 implementation, verbatim: the baseline ------------------------------------------
_W1_SHAPES: list[tuple[str, re.Pattern[str]]] = [
    ("private_key", re.compile(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)")),
    ("anthropic_key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai_key", re.compile(r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("github_token", re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack_token", re.compile(r"xox[baprs]-[A-Za-z0-9-]{10,}")),
    ("google_api_key", re.compile(r"AIza[0-9A-Za-z_\-]{35}")),
    ("jwt", re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer_token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{20,}")),
]
_W1_ENDINGS = ("password", "passwd", "secret", "token", "api_key", "apikey", "private_key",
               "access_key", "secret_access_key", "authorization", "credentials")
_W1_KEY_ENDINGS = tuple(e.encode() for e in _W1_ENDINGS)
_W1_PREFILTER = re.compile(
    rb"private key|sk-|gh[pousr]_|github_pat_|akia|asia|xox[baprs]-|aiza|eyj|bearer ")


def _w1_placeholder(kind: str, secret: str) -> str:
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"[REDACTED:{kind}:{digest}]"


def _w1_text(text: str) -> str:
    for kind, pattern in _W1_SHAPES:
        swap = lambda m, k=kind: _w1_placeholder(k, m.group(0))  # type: ignore[misc]  # noqa: E731
        text = pattern.sub(swap, text)
    return text


def _w1_value(value: Any, key: str | None = None) -> Any:
    if isinstance(value, str):
        if key is not None and value and key.lower().endswith(_W1_ENDINGS):
            return _w1_placeholder(key.lower(), value)
        return _w1_text(value)
    if isinstance(value, dict):
        return {k: _w1_value(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_w1_value(v) for v in value]
    return value


def _w1_has_secret_key(low: bytes) -> bool:
    end = low.find(b'":')
    while end != -1:
        if low[low.rfind(b'"', 0, end) + 1:end].endswith(_W1_KEY_ENDINGS):
            return True
        end = low.find(b'":', end + 2)
    return False


def wave1_redact_json(body: bytes) -> bytes:
    """The wave-1 redact_json (baseline)."""
    low = body.lower()
    if not _W1_PREFILTER.search(low) and not _w1_has_secret_key(low):
        return body
    return orjson.dumps(_w1_value(orjson.loads(body)))


# ---- data -------------------------------------------------------------------------------------
WORDS = ["the", "payment", "rounding", "bug", "fix", "test", "passes", "refactor", "module",
         "function", "call", "tool", "result", "review", "diff", "commit", "branch", "session",
         "keeper", "store", "index", "rollout", "charge", "amount", "cents", "decimal", "quantize",
         "handler", "request", "response", "error", "retry", "timeout"]
SNIPPETS = ["def charge(amount: Decimal) -> Decimal:\n    return amount.quantize(CENTS)\n",
            "see https://github.com/org/payments/pull/128 and https://docs.python.org/3/",
            "commit 1f2d5e6a7b801f2d5e6a7b801f2d5e6a7b80abcd (HEAD -> fix/payment)",
            "tests/unit/test_payment.py::test_rounding_half_even PASSED",
            "FAILED tests/unit/test_payment.py::test_refund - AssertionError: 1.01 != 1.00",
            "git diff --stat HEAD~1 | tail -3", "task-based retry with disk-backed queue",
            "Traceback (most recent call last):\n  File \"payment.py\", line 12, in charge\n"]


def _text(rng: random.Random, size: int) -> str:
    out: list[str] = []
    length = 0
    while length < size:
        piece = rng.choice(SNIPPETS) if rng.random() < 0.15 else rng.choice(WORDS)
        out.append(piece)
        length += len(piece) + 1
    return " ".join(out)


def clean_bodies(n: int, seed: int = 7) -> list[bytes]:
    """n encoded bodies of the mix an agent records (no credential anywhere)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        draw = rng.random()
        if draw < 0.55:
            event: dict[str, Any] = {"type": "message", "role": rng.choice(["user", "assistant"]),
                                     "text": _text(rng, rng.choice([120, 400, 1200, 3000]))}
        elif draw < 0.75:
            args = {"cmd": f"pytest -q tests/unit -k {rng.choice(WORDS)}", "cwd": "/work/repo-a",
                    "timeout": 120}
            event = {"type": "operation", "operation_id": f"op-{i}", "tool": "shell",
                     "status": "started", "args": args, "args_digest":
                     hashlib.sha256(orjson.dumps(args)).hexdigest()}
        elif draw < 0.9:
            event = {"type": "operation", "operation_id": f"op-{i}", "tool": "shell",
                     "status": "committed", "result_persisted": True,
                     "result": {"exit": 1, "stdout": _text(rng, rng.choice([800, 6000])),
                                "passed": 7, "total": 9}}
        elif draw < 0.95:
            event = {"type": "todo", "items": [{"id": str(k), "text": _text(rng, 40),
                                                "status": "pending"} for k in range(4)]}
        else:
            event = {"type": "cost", "model": "gpt-5", "input_tokens": 1200, "output_tokens": 300,
                     "usd": 0.0125}
        out.append(orjson.dumps(event))
    return out


def secret_bodies(clean: list[bytes]) -> list[bytes]:
    """The clean bodies with a credential planted in one message of ten."""
    out = []
    for i, body in enumerate(clean):
        if i % 10 == 0:
            text = CANARIES[(i // 10) % len(CANARIES)][2]
            body = orjson.dumps({"type": "message", "role": "user", "text": f"note: {text}"})
        out.append(body)
    return out


# ---- timing -------------------------------------------------------------------------------------
def over(fn: Callable[[bytes], Any], bodies: list[bytes]) -> Callable[[], float]:
    def run() -> float:
        t0 = time.perf_counter()
        for body in bodies:
            fn(body)
        return time.perf_counter() - t0
    return run


def detect_secrets_run(bodies: list[bytes]) -> Callable[[], float] | None:
    """detect-secrets' line scan (its 27 default plugins) over the bodies, if it is installed."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def run() -> float:
        with default_settings():
            t0 = time.perf_counter()
            for body in bodies:
                list(scan_line(body.decode()))
            return time.perf_counter() - t0
    return run


def record_path(bodies: list[bytes], redactor: str) -> Callable[[], float]:
    """Session.record of the bodies as dicts, through the public API, into a fresh store, with
    redaction as it is now (`now`), with the wave-1 redact_json in its place, or `off`."""
    import sessionkeeper.session.live as session_module
    from sessionkeeper.api import Keeper

    events = [orjson.loads(b) for b in bodies]
    use = {"now": redact_json, "wave 1": wave1_redact_json, "off": redact_json}[redactor]

    def run() -> float:
        with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
            workspace = Path(tmp) / "w"
            workspace.mkdir()
            session = Keeper(Path(tmp) / "store", redact=redactor != "off").start(workspace)
            session_module.redact_json = use
            try:
                t0 = time.perf_counter()
                for event in events:
                    session.record(event)
                took = time.perf_counter() - t0
            finally:
                session_module.redact_json = redact_json
            session.close()
        return took
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 7, quick 3)")
    ap.add_argument("--json", metavar="PATH", help="write every figure to this JSON file")
    a = ap.parse_args()
    reps = a.reps or (3 if a.quick else 7)
    n = 2_000 if a.quick else 20_000
    clean = clean_bodies(n)
    secret = secret_bodies(clean)
    nbytes = sum(map(len, clean))
    missed = sum(1 for _k, s, t in CANARIES
                 if s.encode() in wave1_redact_json(orjson.dumps({"text": t})))
    print(f"{n} bodies, {nbytes / n:.0f} B on average; medians of {reps} repetitions, "
          f"alternating; wave 1 misses {missed}/{len(CANARIES)} canary shapes, now 0 "
          f"(tests/faults/test_secret_canaries.py)")
    res: dict[str, Any] = {"n": n, "mean_body_bytes": nbytes / n, "reps": reps}
    plain = message_bodies(n)
    cases: dict[str, dict[str, Callable[[], float]]] = {
        "plain": {"now": over(redact_json, plain), "wave 1": over(wave1_redact_json, plain)},
        "clean": {"now": over(redact_json, clean), "wave 1": over(wave1_redact_json, clean)},
        "secret": {"now": over(redact_json, secret), "wave 1": over(wave1_redact_json, secret)},
    }
    sample = clean[: max(100, n // 100)]  # detect-secrets takes milliseconds per body
    scan = detect_secrets_run(sample)
    if scan is not None:
        cases["clean"]["detect-secrets"] = scan
    for case, subjects in cases.items():
        times = alternate(reps, subjects, collect=True)
        per = {k: statistics.median(v) / (len(sample) if k == "detect-secrets" else n) * 1e6
               for k, v in times.items()}
        res[case] = per
        ratio = per["wave 1"] / per["now"]
        extra = (f"; detect-secrets {per['detect-secrets']:,.0f} µs/body "
                 f"({per['detect-secrets'] / per['now']:,.0f}x the time of now)"
                 if "detect-secrets" in per else "")
        print(f"{case:<7} now {per['now']:.2f} µs/body, wave 1 {per['wave 1']:.2f} µs/body: "
              f"now is {ratio:.2f}x as fast{extra}")
    for corpus, bodies in (("plain", plain), ("clean", clean)):
        rec = alternate(max(3, reps // 2), {k: record_path(bodies, k)
                                            for k in ("now", "wave 1", "off")}, collect=True)
        per = {k: statistics.median(v) / n * 1e6 for k, v in rec.items()}
        shares = {k: (per[k] - per["off"]) / per[k] for k in ("now", "wave 1")}
        res[f"record {corpus}"] = {"us_per_event": per, "redaction_share": shares}
        print(f"record  Session.record of the {corpus} bodies: {1e6 / per['now']:,.0f} ev/s now, "
              f"{1e6 / per['wave 1']:,.0f} ev/s with wave 1's redaction, "
              f"{1e6 / per['off']:,.0f} ev/s without ({per['wave 1'] / per['now']:.2f}x); "
              f"redaction is {100 * shares['now']:.0f}% of the record path now, "
              f"{100 * shares['wave 1']:.0f}% with wave 1")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
