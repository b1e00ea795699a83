"""Security: every file Session Keeper writes lies in its store (audited with sys.addaudithook).

Runs a whole story — start, record, crash, bad ids, resume, fork, archive, fsck, reindex — in a
child process whose audit hook logs every `open` for writing, then checks each path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent('''
    import os, sys
    written = []
    WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def audit(event, args):
        if event == "open":
            path, mode, flags = args
            if (mode and any(c in mode for c in "wax+")) or (flags and flags & WRITE):
                written.append(os.fspath(path) if not isinstance(path, int) else "<fd>")

    sys.addaudithook(audit)
    from sessionkeeper.api import Keeper
    from sessionkeeper.errors import InvalidId
    store, repo = sys.argv[1], sys.argv[2]
    keeper = Keeper(store)
    session = keeper.start(repo, title="audited")
    session.record({"type": "message", "role": "user", "text": "hello"})
    session.begin_operation("op-1", "shell", {"cmd": "true"})
    session.writer.recorder.sink.close(); session.writer._lock.release()   # crash
    for bad in ("../../etc/passwd", "/tmp/x", "a" * 300, "x\\x00y"):
        for call in (keeper.archive, keeper.unarchive, keeper.replay,
                     lambda t: keeper.check_resume(t, workspace=repo),
                     lambda t: keeper.attach(t), lambda t: keeper.fork(t)):
            try:
                call(bad)
                raise SystemExit(f"accepted bad id {bad!r}")
            except InvalidId:
                pass
    report, resumed = keeper.resume(session.thread_id, workspace=repo)
    resumed.close()
    keeper.fork(session.thread_id).close()
    keeper.archive(session.thread_id); keeper.unarchive(session.thread_id)
    keeper.fsck(repair=True); keeper.reindex()
    keeper.resume(session.thread_id, workspace=repo, decision="export")
    print("\\n".join(written))
''')


def test_every_written_path_is_inside_the_store(store_dir, repo):
    """Fixture: `store_dir`, `repo`; the audit log of a child process running the story."""
    server = str(Path(__file__).resolve().parents[2] / "server")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([server, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(store_dir), str(repo)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    written = [line for line in done.stdout.splitlines() if line]
    assert any(p.endswith(".jsonl") for p in written) and any("state.db" in p for p in written)
    root = os.path.realpath(store_dir)
    outside = [p for p in written
               if p not in ("<fd>", os.devnull) and os.path.commonpath([root, os.path.realpath(p)]) != root]
    assert outside == []
