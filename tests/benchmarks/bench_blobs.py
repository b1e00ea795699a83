"""Blob store benchmarks, side by side with a raw baseline on the same bytes, in one process.

    python tests/benchmarks/bench_blobs.py [--quick] [--json OUT.json] [--reps N]

Cases (issue 14, "Benchmarks"):
  a  store a 100 KB source file's content: BlobStore.put (sha256, zstd, temp file, fsync, rename,
     fsync of the directory) vs zstd-compressing the same bytes and writing them to a new file
     with fsync (target <= 1.5x), in a store whose 256 fan-out directories exist. Reported beside
     it: the raw write made atomic and durable by hand (temp, fsync, rename, fsync of the
     directory: what put does, without Python), put of the next version with the previous one
     as delta base, and put of content already stored (verified, not rewritten).
  b  bytes on disk for 100 versions of a 100 KB source file edited a few lines at a time, as a
     ratio to the raw total: zstd per version (no dedup), BlobStore.put without a base (whole
     blobs + dedup), and BlobStore.put with the previous version as base (deltas).
  c  BlobStore.get (read, decompress, sha256 check) of a whole blob and of a delta vs reading and
     zstd-decompressing the same whole file (reported, no target).
  d  record a file_change with the content of a 100 KB file through Session.record (the record
     names no hash: the file is read, hashed, kept as a blob against its previous version, fsynced,
     and the record appended at the session's durability, `written`) vs zstd-compressing the same
     bytes and writing them to a new file with fsync (target <= 1.5x, issue 14); beside it the
     same record at durability `durable` (the rollout fsynced too). The agent's own write of the
     file is not timed; the file's first version (one git look-up) is recorded before timing.

The source text is the standard library's own Python (real code, not random words); versions
edit 1-4 lines each (replace, insert, delete) from a fixed seed, and one version in ten
reverts to an earlier one (what an undo or a rewind produces: dedup has something to find).
Figures are medians over repetitions; subject and baseline alternate, the order flipping every
repetition. Everything runs in temp dirs, removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))

from sessionkeeper.store.blobs import LEVEL, BlobStore  # noqa: E402

perf = time.perf_counter
SIZE = 100_000


def source_text(size: int = SIZE) -> bytes:
    """`size` bytes of real Python source from the standard library."""
    import argparse as a
    import difflib as d
    import inspect as i
    import pathlib as p
    import typing as t

    data = b"".join(Path(m.__file__ or "").read_bytes() for m in (a, d, i, p, t))
    return data[:size]


def versions(n: int, *, seed: int = 14) -> list[bytes]:
    """n versions of the source, each 1-4 lines edited from the one before; every tenth an undo."""
    rng = random.Random(seed)
    lines = source_text().splitlines(keepends=True)
    out = [b"".join(lines)]
    while len(out) < n:
        if len(out) % 10 == 9:
            out.append(out[rng.randrange(len(out) - 1)])
            lines = out[-1].splitlines(keepends=True)
            continue
        for _ in range(rng.randint(1, 4)):
            j, k = rng.randrange(len(lines)), rng.random()
            if k < 0.5:
                lines[j] = b"    value = compute(%d)  # edited\n" % rng.randrange(10**6)
            elif k < 0.8:
                lines.insert(j, b"    log.debug('step %d')\n" % rng.randrange(1000))
            else:
                del lines[j]
        out.append(b"".join(lines))
    return out


def raw_write(directory: Path, name: str, data: bytes) -> None:
    """The baseline: zstd-compress at the store's level, write a new file, fsync, close."""
    payload = zstandard.ZstdCompressor(level=LEVEL).compress(data)
    fd = os.open(directory / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)


def raw_atomic_write(directory: Path, name: str, data: bytes) -> None:
    """The same made atomic and durable by hand: temp file, fsync, rename, fsync of the directory."""
    payload = zstandard.ZstdCompressor(level=LEVEL).compress(data)
    tmp = directory / f".{name}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, directory / name)
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def disk_bytes(root: Path) -> int:
    """Bytes of every blob file under `root` (locks and temps excluded)."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def medians(reps: int, *runs: Callable[[], float]) -> list[float]:
    """Median seconds of each run; the order rotates every repetition."""
    times: list[list[float]] = [[] for _ in runs]
    for rep in range(reps):
        for k in range(len(runs)):
            i = (k + rep) % len(runs)
            times[i].append(runs[i]())
    return [statistics.median(t) for t in times]


def warm_up(store: BlobStore) -> int:
    """Put small blobs until all 256 fan-out directories exist (a store in use); returns how many.

    The first blob of a fan-out directory also creates it and fsyncs its parent: a one-off cost
    that a store pays 256 times in its life, kept out of the steady-state figure.
    """
    n = 0
    while len({p.name for p in store.root.iterdir() if p.is_dir()} if store.root.is_dir() else ()) < 256:
        store.put(b"warm-up %d\n" % n)
        n += 1
    return n


def case_a(tmp: Path, reps: int, per: int) -> dict[str, Any]:
    """Put with fsync vs compress + write + fsync; delta put and dedup put beside it."""
    texts = versions(per * reps * 4 + 1, seed=1)
    texts = [t + b"# %d\n" % i for i, t in enumerate(texts)]  # all distinct: no dedup in the timing
    store = BlobStore(tmp / "a-store")
    warm_up(store)
    raw_dir, atomic_dir = tmp / "a-raw", tmp / "a-atomic"
    raw_dir.mkdir()
    atomic_dir.mkdir()
    cursor = iter(texts)
    count = iter(range(len(texts)))

    def timed(write: Callable[[bytes], object]) -> Callable[[], float]:
        def run() -> float:
            batch = [next(cursor) for _ in range(per)]
            t0 = perf()
            for data in batch:
                write(data)
            return (perf() - t0) / per
        return run

    chain = iter(versions(per * reps + 1, seed=2))
    last = [store.put(next(chain))]

    def put_delta(data: bytes) -> None:
        last.append(store.put(next(chain), base=last[-1]))

    put_s, raw_s, atomic_s, delta_s = medians(
        reps, timed(store.put), timed(lambda d: raw_write(raw_dir, f"r{next(count)}", d)),
        timed(lambda d: raw_atomic_write(atomic_dir, f"a{next(count)}", d)), timed(put_delta))
    assert all(store.info(k).base is not None for k in last[1:])  # type: ignore[union-attr]
    hit_times = []
    for key in last[1: per + 1]:
        data = store.get(key)
        t0 = perf()
        store.put(data)
        hit_times.append(perf() - t0)
    return {"put_s": put_s, "raw_s": raw_s, "ratio": put_s / raw_s, "atomic_s": atomic_s,
            "delta_put_s": delta_s, "dedup_put_s": statistics.median(hit_times)}


def case_b(tmp: Path, n: int) -> dict[str, Any]:
    """Bytes on disk for n versions: zstd alone, whole blobs + dedup, deltas + dedup."""
    texts = versions(n)
    raw_total = sum(map(len, texts))
    zstd_only = sum(len(zstandard.ZstdCompressor(level=LEVEL).compress(t)) for t in texts)
    whole = BlobStore(tmp / "b-whole")
    for data in texts:
        whole.put(data)
    delta = BlobStore(tmp / "b-delta")
    prev = None
    for data in texts:
        prev = delta.put(data, base=prev)
    blobs, _ = delta.scan()
    for data in texts:  # every version reads back exactly
        assert delta.get(delta.put(data)) == data
    return {"versions": n, "distinct": len(set(texts)), "raw_bytes": raw_total,
            "zstd_bytes": zstd_only, "whole_bytes": disk_bytes(whole.root),
            "delta_bytes": disk_bytes(delta.root), "whole_blobs": sum(b.base is None for b in blobs),
            "delta_blobs": sum(b.base is not None for b in blobs)}


def case_c(tmp: Path, reps: int) -> dict[str, Any]:
    """get() of a whole blob and of a delta vs read + decompress of the whole file."""
    texts = versions(2, seed=3)
    store = BlobStore(tmp / "c-store")
    first = store.put(texts[0])
    second = store.put(texts[1], base=first)
    path = store.root / first[:2] / first[2:]

    def raw_get() -> None:
        zstandard.ZstdDecompressor().decompress(path.read_bytes()[5:])

    def timed(fn: Callable[[], object]) -> float:
        t0 = perf()
        for _ in range(20):
            fn()
        return (perf() - t0) / 20

    whole, raw, delta = [], [], []
    for _ in range(reps):
        whole.append(timed(lambda: store.get(first)))
        raw.append(timed(raw_get))
        delta.append(timed(lambda: store.get(second)))
    return {"get_whole_s": statistics.median(whole), "get_delta_s": statistics.median(delta),
            "raw_s": statistics.median(raw)}


def _git(cwd: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def case_d(tmp: Path, reps: int, per: int) -> dict[str, Any]:
    """Session.record of a 100 KB file_change read now vs zstd + write + fsync of the same bytes."""
    from sessionkeeper.api import Keeper

    repo = tmp / "d-repo"
    repo.mkdir()
    texts = versions(per * reps * 4 + 1, seed=4)
    texts = [t + b"# %d\n" % i for i, t in enumerate(texts)]  # distinct: no dedup in the timing
    (repo / "big.py").write_bytes(texts[0])
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "start")
    keeper = Keeper(tmp / "d-store")
    warm_up(keeper.store.blobs)
    session = keeper.start(repo)
    cursor = iter(texts[1:])
    raw_dir = tmp / "d-raw"
    raw_dir.mkdir()
    count = iter(range(len(texts)))
    event = {"type": "file_change", "path": "big.py"}
    session.record(event)  # the first version (and its git look-up) outside the timing

    def recorded(durability: str) -> Callable[[], float]:
        def run() -> float:
            total = 0.0
            for _ in range(per):
                (repo / "big.py").write_bytes(next(cursor))  # the agent's write: not timed
                t0 = perf()
                session.record(event, durability=durability)  # type: ignore[arg-type]
                total += perf() - t0
            return total / per
        return run

    def baseline(write: Callable[[Path, str, bytes], None]) -> Callable[[], float]:
        def run() -> float:
            batch = [next(cursor) for _ in range(per)]
            t0 = perf()
            for data in batch:
                write(raw_dir, f"r{next(count)}", data)
            return (perf() - t0) / per
        return run

    written_s, durable_s, raw_s, atomic_s = medians(
        reps, recorded("written"), recorded("durable"), baseline(raw_write),
        baseline(raw_atomic_write))
    session.close()
    blobs, _ = keeper.store.blobs.scan()
    assert sum(b.base is not None for b in blobs) >= per * reps  # every version stored (deltas)
    return {"record_s": written_s, "record_durable_s": durable_s, "raw_s": raw_s,
            "atomic_s": atomic_s, "ratio": written_s / raw_s, "durable_ratio": durable_s / raw_s,
            "deltas": sum(b.base is not None for b in blobs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    ap.add_argument("--json", metavar="PATH", help="write every figure to this JSON file")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 15, quick 3)")
    a = ap.parse_args()
    reps = a.reps or (3 if a.quick else 15)
    per = 5 if a.quick else 20
    print(f"machine: nproc {os.cpu_count()}, Python {platform.python_version()}, "
          f"zstandard {zstandard.__version__}, load {os.getloadavg()[0]:.1f}")
    print(f"medians of {reps} repetitions of {per} puts; subject and baseline alternating")
    tmp = Path(tempfile.mkdtemp(prefix="skbench_blobs_"))
    try:
        res = {"a": case_a(tmp, reps, per), "b": case_b(tmp, 100), "c": case_c(tmp, reps),
               "d": case_d(tmp, reps, per)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ra, rb, rc, rd = res["a"], res["b"], res["c"], res["d"]
    raw = rb["raw_bytes"]
    print()
    print(f"{'case':<62} {'subject':>12} {'baseline':>12} {'ratio':>8}  target")
    print(f"{'a  put 100 KB, fsync (BlobStore.put) vs zstd + write + fsync':<62} "
          f"{ra['put_s'] * 1e3:>9.2f} ms {ra['raw_s'] * 1e3:>9.2f} ms {ra['ratio']:>7.2f}x  <= 1.5x"
          f"{'' if ra['ratio'] <= 1.5 else ' (missed)'}")
    print(f"{'a  same vs temp + fsync + rename + fsync of the directory':<62} "
          f"{ra['put_s'] * 1e3:>9.2f} ms {ra['atomic_s'] * 1e3:>9.2f} ms "
          f"{ra['put_s'] / ra['atomic_s']:>7.2f}x  -")
    print(f"{'a  put of the next version against the previous (delta)':<62} "
          f"{ra['delta_put_s'] * 1e3:>9.2f} ms {ra['raw_s'] * 1e3:>9.2f} ms "
          f"{ra['delta_put_s'] / ra['raw_s']:>7.2f}x  -")
    print(f"{'a  put of content already stored (verified, kept)':<62} "
          f"{ra['dedup_put_s'] * 1e3:>9.2f} ms {ra['raw_s'] * 1e3:>9.2f} ms "
          f"{ra['dedup_put_s'] / ra['raw_s']:>7.2f}x  -")
    for label, key in (("zstd per version, no dedup", "zstd_bytes"), ("whole blobs + dedup", "whole_bytes"),
                       ("deltas against the previous version + dedup", "delta_bytes")):
        print(f"{'b  100 versions, ' + label:<62} {rb[key]:>11,} B {raw:>11,} B {rb[key] / raw:>7.4f}x  -")
    print(f"   ({rb['distinct']} distinct versions; with deltas: {rb['whole_blobs']} whole blobs, "
          f"{rb['delta_blobs']} deltas; deltas vs whole blobs: {rb['whole_bytes'] / rb['delta_bytes']:.1f}x "
          "smaller)")
    print(f"{'c  get whole blob (read, decompress, sha256) vs read + decompress':<62} "
          f"{rc['get_whole_s'] * 1e3:>9.3f} ms {rc['raw_s'] * 1e3:>9.3f} ms "
          f"{rc['get_whole_s'] / rc['raw_s']:>7.2f}x  -")
    print(f"{'c  get delta (base and delta, two sha256)':<62} "
          f"{rc['get_delta_s'] * 1e3:>9.3f} ms {rc['raw_s'] * 1e3:>9.3f} ms "
          f"{rc['get_delta_s'] / rc['raw_s']:>7.2f}x  -")
    print(f"{'d  Session.record file_change 100 KB (read now) vs zstd+write+fsync':<62} "
          f"{rd['record_s'] * 1e3:>9.2f} ms {rd['raw_s'] * 1e3:>9.2f} ms {rd['ratio']:>7.2f}x  <= 1.5x"
          f"{'' if rd['ratio'] <= 1.5 else ' (missed)'}")
    print(f"{'d  same vs temp + fsync + rename + fsync of the directory':<62} "
          f"{rd['record_s'] * 1e3:>9.2f} ms {rd['atomic_s'] * 1e3:>9.2f} ms "
          f"{rd['record_s'] / rd['atomic_s']:>7.2f}x  -")
    print(f"{'d  the same at durability durable (rollout fsynced too)':<62} "
          f"{rd['record_durable_s'] * 1e3:>9.2f} ms {rd['raw_s'] * 1e3:>9.2f} ms "
          f"{rd['durable_ratio']:>7.2f}x  -")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2))
        print(f"figures written to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
