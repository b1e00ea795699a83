"""The reader's batched runs (codec.decode_run) read exactly what its line-by-line rules read.

Every mutated copy of a 2,600-line rollout is parsed twice: as the reader does (clean runs of
lines decoded together) and with runs turned off (every line through the per-line rules); the
two results must be equal in every field — records, damage with line numbers, duplicates, tail,
status. The mutations are crafted to pass the checksum (an attacker recomputes it), so each one
reaches a rule behind it: a checksum spelled in upper case, split 7+9 over two lines or holding
a comma, a float or bool seq, a gap, a re-delivery, an unknown type, an integer beyond 64 bits
in a walked record or in a `data` member, a second meta, a duplicated `crc` member.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import asdict

import orjson
import pytest

from sessionkeeper.store import rollout as rollout_module
from sessionkeeper.store.codec import frame
from sessionkeeper.store.reader import Status, parse_rollout

TS = b"2026-11-29T10:00:00.000Z"
META = {"type": "session_meta", "schema_version": 2, "thread_id": "7b0c4a52-3f7e-4c1e-9a43-"
        "1f2d5e6a7b80", "session_id": "c3a1e9d4-5b6f-4a7c-8d9e-0f1a2b3c4d5e", "cwd": "/w",
        "source": "startup"}


def body(i: int) -> dict:
    """The i-th event: mostly messages, with operations, costs, todos and a `data` member."""
    kind = i % 10
    if kind == 3:
        return {"type": "operation", "operation_id": f"op-{i}", "tool": "shell",
                "status": "started", "args": {"n": i}}
    if kind == 6:
        return {"type": "cost", "model": "m", "input_tokens": i, "usd": i / 1000}
    if kind == 8:
        return {"type": "todo", "items": [{"id": str(i), "text": "t", "status": "pending"}]}
    if kind == 9:
        return {"type": "message", "role": "user", "text": f"m {i}", "data": {"k": [i, 1.5]}}
    return {"type": "message", "role": ("user", "assistant")[i % 2], "text": f"message {i}"}


def original(n: int = 2600) -> list[bytes]:
    """Meta + n events framed by the writer's own codec (the fixture of every test here)."""
    return [frame(0, TS, orjson.dumps(META))] + [frame(i, TS, orjson.dumps(body(i)))
                                                   for i in range(1, n + 1)]


def crafted(core: bytes, *, spelled: str | None = None) -> bytes:
    """A line from its core (without the checksum) with a checksum that passes, or `spelled`."""
    text = spelled if spelled is not None else f"{zlib.crc32(core):08x}"
    return core + b',"crc":"' + text.encode() + b'"}\n'


def core_of(line: bytes) -> bytes:
    """The bytes a line's checksum covers."""
    return line[:-19]


def split_checksums(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    """Two lines whose checksums, 7 and 9 characters long, spell the right 16 when joined.

    A reader cuts the last 18 bytes off a line to checksum it: with a 7-character checksum it
    checksums `a` less its last byte, with a 9-character one `b` plus `,`; the spellings are
    chosen so that the two joined read as the two checksums a reader computes, in place.
    """
    whole = "%08x%08x" % (zlib.crc32(a[:-1]), zlib.crc32(b + b","))  # noqa: UP031
    return crafted(a, spelled=whole[:7]), crafted(b, spelled=whole[7:])


def mutate(lines: list[bytes], rng: random.Random) -> list[bytes]:
    """One crafted mutation somewhere in the file."""
    out = list(lines)
    i = rng.randrange(1, len(out) - 2)
    how = rng.randrange(14)
    if how == 0:  # a checksum in upper case hex
        core = core_of(out[i])
        out[i] = crafted(core, spelled=f"{zlib.crc32(core):08X}")
    elif how == 1:  # checksums of two neighbours split 7 + 9: the concatenation still matches
        out[i], out[i + 1] = split_checksums(core_of(out[i]), core_of(out[i + 1]))
    elif how == 2:  # a checksum holding a comma
        out[i] = crafted(core_of(out[i]), spelled=f"{zlib.crc32(core_of(out[i])):08x}"[:4] + ",")
    elif how == 3:  # a float seq, its checksum recomputed
        out[i] = crafted(out[i][:-19].replace(b'{"seq":%d,' % i, b'{"seq":%d.0,' % i, 1))
    elif how == 4:  # a bool seq where an integer 1 would do
        out[1] = crafted(out[1][:-19].replace(b'{"seq":1,', b'{"seq":true,', 1))
    elif how == 5:  # a gap
        del out[i]
    elif how == 6:  # a re-delivery of the previous line
        out.insert(i, out[i - 1])
    elif how == 7:  # an unknown type
        out[i] = crafted(b'{"seq":%d,"ts":"%s","type":"mystery"' % (i, TS))
    elif how == 8:  # an integer beyond 64 bits in a walked record
        out[i] = crafted(b'{"seq":%d,"ts":"%s","type":"cost","input_tokens":%d' % (i, TS, 2**70))
    elif how == 9:  # an integer beyond 64 bits in the data member of a message
        out[i] = crafted(b'{"seq":%d,"ts":"%s","type":"message","text":"x","data":[%d]'
                         % (i, TS, -(2**64)))
    elif how == 10:  # a second meta
        out[i] = crafted(core_of(out[0]).replace(b'{"seq":0,', b'{"seq":%d,' % i, 1))
    elif how == 11:  # a duplicated crc member inside the record
        out[i] = crafted(core_of(out[i]) + b',"crc":"00000000"')
    elif how == 12:  # a snapshot in the middle (rules of its own), valid or not
        state = b'{"subsystems":{}}' if rng.random() < 0.5 else b'"nope"'
        out[i] = crafted(b'{"seq":%d,"ts":"%s","type":"snapshot","through_seq":%d,"state":%s'
                         % (i, TS, i - 1, state))
    else:  # a flipped bit (the checksum catches it)
        line = bytearray(out[i])
        line[rng.randrange(len(line) - 1)] ^= 1 << rng.randrange(8)
        out[i] = bytes(line)
    return out


def both_ways(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    """The rollout as read with runs, then with every line through the per-line rules."""
    batched = asdict(parse_rollout(data))
    with monkeypatch.context() as patch:
        patch.setattr(rollout_module, "decode_run", lambda *args, **kwargs: None)
        single = asdict(parse_rollout(data))
    return batched, single


def test_an_intact_rollout_reads_the_same_in_runs_and_line_by_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: original() (2,600 events, three runs), unchanged."""
    batched, single = both_ways(b"".join(original()), monkeypatch)
    assert batched == single
    assert batched["status"] is Status.OK and len(batched["records"]) == 2600
    assert all("crc" not in r for r in batched["records"])


@pytest.mark.parametrize("seed", range(40))
def test_a_crafted_mutation_reads_the_same_in_runs_and_line_by_line(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: original() with one to three crafted mutations (seeded)."""
    rng = random.Random(seed)
    lines = original()
    for _ in range(rng.randrange(1, 4)):
        lines = mutate(lines, rng)
    batched, single = both_ways(b"".join(lines), monkeypatch)
    assert batched == single


@pytest.mark.parametrize("how", ["upper", "split", "comma", "float", "bool"])
def test_a_respelled_checksum_or_seq_is_damage_even_inside_a_clean_run(how: str) -> None:
    """Fixture: original() with one crafted line whose every other byte is clean."""
    lines = original()
    core = core_of(lines[500])
    if how == "upper":
        lines[500] = crafted(core, spelled=f"{zlib.crc32(core):08X}")
    elif how == "split":
        lines[500], lines[501] = split_checksums(core, core_of(lines[501]))
    elif how == "comma":
        lines[500] = crafted(core, spelled=f"{zlib.crc32(core):08x}"[:7] + ",")
    elif how == "float":
        lines[500] = crafted(core.replace(b'{"seq":500,', b'{"seq":500.0,', 1))
    else:
        lines[1] = crafted(core_of(lines[1]).replace(b'{"seq":1,', b'{"seq":true,', 1))
    rollout = parse_rollout(b"".join(lines))
    assert rollout.status is Status.DAMAGED
    damaged = {d.line for d in rollout.damage}
    assert damaged and damaged <= {2, 501, 502}


@pytest.mark.parametrize("how", ["no seq", "no type", "null seq", "list type"])
def test_a_record_lacking_its_seq_or_type_reads_the_same_in_runs_and_line_by_line(
        how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture: original() with line 700 (inside a clean run) re-framed without its seq or its
    type, or with either of another kind, its checksum recomputed."""
    lines = original()
    core = core_of(lines[700])
    if how == "no seq":
        core = core.replace(b'{"seq":700,', b"{", 1)
    elif how == "no type":
        core = core.replace(b'"type":"message",', b"", 1)
    elif how == "null seq":
        core = core.replace(b'{"seq":700,', b'{"seq":null,', 1)
    else:
        core = core.replace(b'"type":"message"', b'"type":["message"]', 1)
    lines[700] = crafted(core)
    batched, single = both_ways(b"".join(lines), monkeypatch)
    assert batched == single
    assert batched["status"] is Status.DAMAGED or len(batched["records"]) < 2600
