"""The reader on mutated rollouts: it never raises and never accepts a mutated record as intact.

The rule checked on every mutated copy, for a full read and for a resume's read from the latest
snapshot (reliability.md §4.5 B5; issue 12 items 3, 10a):
- every record returned is byte-for-byte one of the original records (same seq, same content),
  and the meta is the original one or none;
- a read that reports nothing wrong (no damage, no tail, no duplicate, status ok) is only allowed
  for bytes that are a clean cut of the original at a line boundary (a shorter log, which no
  reader can tell apart), and then it returns exactly the original records up to the cut.

Fixture ORIGINAL: a meta, ten records (messages, an operation with numbers, a cost with a float),
a snapshot vouching for the bytes before it, then six more records. Exhaustive single-bit flips,
then seeded random mutations (bit flips, byte insertions and deletions, overwrites, line swaps,
duplications and deletions, truncations), then Hypothesis-driven mutations. Counts are printed.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionkeeper.store.codec import frame
from sessionkeeper.store.reader import Rollout, Status, parse_rollout, read_latest

TS = b"2026-11-29T10:00:00.000Z"
SESSION = "c3a1e9d4-5b6f-4a7c-8d9e-0f1a2b3c4d5e"
META = {"type": "session_meta", "schema_version": 2, "thread_id": "7b0c4a52-3f7e-4c1e-9a43-"
        "1f2d5e6a7b80", "session_id": SESSION, "cwd": "/w", "source": "startup",
        "baseline": {"branch": "main", "head": "1" * 40}}
BEFORE: list[dict[str, Any]] = [{"type": "message", "role": "user", "text": f"message {i} " + "x" * (i * 7)}
          for i in range(7)] + [
    {"type": "operation", "operation_id": "op-1", "tool": "shell", "status": "started",
     "args": {"cmd": "make test", "n": 3}},
    {"type": "operation", "operation_id": "op-1", "tool": "shell", "status": "committed",
     "result_persisted": True, "result": {"exit": 0, "passed": 7, "total": 9}},
    {"type": "cost", "model": "gpt-5", "input_tokens": 1200, "output_tokens": 300, "usd": 0.0125},
]
AFTER: list[dict[str, Any]] = [{"type": "message", "role": "assistant", "text": f"after {i}"}
                               for i in range(4)] + [
    {"type": "todo", "items": [{"id": "1", "text": "fix", "status": "done"}]},
    {"type": "verifier", "kind": "tests", "passed": 9, "total": 9},
]


def _build() -> tuple[bytes, list[dict[str, Any]], int]:
    lines = [frame(0, TS, orjson.dumps(META))]
    lines += [frame(i, TS, orjson.dumps(e)) for i, e in enumerate(BEFORE, start=1)]
    prefix = b"".join(lines)
    snap_seq = len(BEFORE) + 1
    snapshot: dict[str, Any] = {"type": "snapshot", "through_seq": snap_seq - 1,
                "state": {"subsystems": {"todos": {"items": []}}, "summary": {"title": "t"}},
                "prefix_bytes": len(prefix), "prefix_crc": f"{zlib.crc32(prefix):08x}"}
    events = [*BEFORE, snapshot, *AFTER]
    lines.append(frame(snap_seq, TS, orjson.dumps(snapshot)))
    lines += [frame(i, TS, orjson.dumps(e)) for i, e in enumerate(AFTER, start=snap_seq + 1)]
    records = [{"seq": i, "ts": TS.decode(), **e} for i, e in enumerate(events, start=1)]
    return b"".join(lines), records, snap_seq


ORIGINAL, RECORDS, SNAPSHOT_SEQ = _build()
BY_SEQ = {r["seq"]: r for r in RECORDS}
ORIGINAL_META = {"seq": 0, "ts": TS.decode(), **META}
COUNTS: Counter[str] = Counter()


def check(data: bytes, rollout: Rollout, *, window: bool) -> None:
    """The rule of the module docstring for one read of `data`."""
    for record in rollout.records:
        assert BY_SEQ.get(record["seq"]) == record, f"invented or altered record {record}"
    assert rollout.meta in (None, ORIGINAL_META), "altered meta accepted"
    clean = (rollout.status is Status.OK and not rollout.damage and rollout.tail is None
             and not rollout.duplicates)
    if not clean:
        COUNTS["noticed"] += 1
        return
    cut = ORIGINAL.startswith(data) and data.endswith(b"\n")
    assert cut, "a mutated rollout was read as intact"
    kept = data.count(b"\n") - 1  # records after the meta in the cut
    start = SNAPSHOT_SEQ - 1 if window and rollout.from_snapshot else 0
    assert rollout.records == RECORDS[start:kept], "a clean cut returned other records"
    COUNTS["clean cut"] += 1


def both_reads(data: bytes, path: Path) -> None:
    """Check a full read and a resume's read (from the latest snapshot) of `data`."""
    check(data, parse_rollout(data), window=False)
    path.write_bytes(data)
    check(data, read_latest(path), window=True)
    COUNTS["mutated rollouts"] += 1


@pytest.fixture
def path(tmp_path: Path) -> Iterator[Path]:
    """Where the mutated copies are written for read_latest: in memory (/dev/shm) when there is
    one, since rewriting a file thousands of times on ext4 costs ~0.3 ms each (auto_da_alloc)."""
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path
    yield folder / f"rollout-20261129T100000Z-{SESSION}.jsonl"
    if folder != tmp_path:
        shutil.rmtree(folder)


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    """Print the counts once the module's tests have run."""
    yield
    print(f"\nreader fuzz: {COUNTS['mutated rollouts']} mutated rollouts, each read in full and "
          f"from its snapshot; {COUNTS['noticed']} reads reported the damage, "
          f"{COUNTS['clean cut']} were clean cuts at a line boundary; 0 accepted as intact")


def test_the_original_reads_clean_both_ways(path: Path) -> None:
    """Fixture: ORIGINAL, unaltered (the rule's baseline)."""
    full = parse_rollout(ORIGINAL)
    assert full.status is Status.OK and full.records == RECORDS
    path.write_bytes(ORIGINAL)
    latest = read_latest(path)
    assert latest.from_snapshot and latest.damage == []
    assert latest.records == RECORDS[SNAPSHOT_SEQ - 1:]


def test_every_single_bit_flip_is_noticed_by_both_reads(path: Path) -> None:
    """Fixture: ORIGINAL with each of its bits flipped in turn (exhaustive)."""
    data = bytearray(ORIGINAL)
    for bit in range(len(ORIGINAL) * 8):
        data[bit // 8] ^= 1 << (bit % 8)
        mutated = bytes(data)
        data[bit // 8] ^= 1 << (bit % 8)
        before = COUNTS["clean cut"]
        both_reads(mutated, path)
        assert COUNTS["clean cut"] == before, f"bit {bit} flipped and not noticed"
        COUNTS["bit flips"] += 1
    assert COUNTS["bit flips"] == len(ORIGINAL) * 8


def _lines_of(data: bytearray) -> list[bytes]:
    return bytes(data).split(b"\n")


def mutate(rng: random.Random, data: bytearray) -> str:
    """Apply one random mutation in place; return its kind."""
    kind = rng.choice(["flip", "insert", "delete", "overwrite", "swap_lines", "dup_line",
                       "drop_line", "truncate"])
    at = rng.randrange(len(data) + 1) if data else 0
    if kind == "flip" and data:
        data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
    elif kind == "insert":
        data[at:at] = rng.choice([b"\n", b"\x00" * rng.randint(1, 600), rng.randbytes(rng.randint(1, 40)),
                                  b'{"seq":3}', b'","crc":"00000000"}'])
    elif kind == "delete":
        del data[at:at + rng.randint(1, 80)]
    elif kind == "overwrite":
        chunk = rng.randbytes(rng.randint(1, 16))
        data[at:at + len(chunk)] = chunk
    elif kind in ("swap_lines", "dup_line", "drop_line"):
        lines = _lines_of(data)
        if len(lines) > 2:
            i, j = rng.sample(range(len(lines) - 1), 2)
            if kind == "swap_lines":
                lines[i], lines[j] = lines[j], lines[i]
            elif kind == "dup_line":
                lines.insert(j, lines[i])
            else:
                del lines[i]
            data[:] = b"\n".join(lines)
    else:
        del data[at:]
    return kind


def test_thousands_of_random_mutations_never_pass_as_intact(path: Path) -> None:
    """Fixture: ORIGINAL under 1-3 seeded random mutations each (`SK_FUZZ_SEED`, `SK_FUZZ_N`)."""
    seed = int(os.environ.get("SK_FUZZ_SEED", "20261129"))
    n = int(os.environ.get("SK_FUZZ_N", "4000"))
    rng = random.Random(seed)
    kinds: Counter[str] = Counter()
    for trial in range(n):
        data = bytearray(ORIGINAL)
        done = [mutate(rng, data) for _ in range(rng.randint(1, 3))]
        kinds.update(done)
        try:
            both_reads(bytes(data), path)
        except AssertionError as exc:
            raise AssertionError(f"trial {trial} (SK_FUZZ_SEED={seed}, {done}): {exc}") from None
    print(f"\nrandom mutations: {n} rollouts, SK_FUZZ_SEED={seed}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


FUZZ = settings(max_examples=600, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["cut", "insert", "overwrite", "swap"]),
                          st.integers(0, len(ORIGINAL)), st.binary(min_size=1, max_size=40)),
                min_size=1, max_size=4))
def test_hypothesis_mutations_never_pass_as_intact(path: Path, mutations: list[tuple[str, int,
                                                   bytes]]) -> None:
    """Fixture: ORIGINAL with Hypothesis-chosen truncations, insertions, overwrites and swaps."""
    data = bytearray(ORIGINAL)
    for kind, at, chunk in mutations:
        at = min(at, len(data))
        if kind == "cut":
            del data[at:]
        elif kind == "insert":
            data[at:at] = chunk
        elif kind == "overwrite":
            data[at:at + len(chunk)] = chunk
        elif len(data) > 2 * len(chunk):
            j = (at + len(chunk)) % (len(data) - len(chunk))
            a, b = bytes(data[at:at + len(chunk)]), bytes(data[j:j + len(chunk)])
            data[at:at + len(a)], data[j:j + len(b)] = b, a
    both_reads(bytes(data), path)
