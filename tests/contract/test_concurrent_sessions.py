"""Several threads recording into one session: the state folds every record, in seq order."""

from __future__ import annotations

import threading

from sessionkeeper.api import Keeper


def _run(workers: int, fn) -> None:
    threads = [threading.Thread(target=fn) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_concurrent_durable_records_all_reach_the_state_and_the_log(store_dir, repo):
    """Fixture: one session; 8 threads x 50 durable cost records."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    _run(8, lambda: [session.record({"type": "cost", "model": "m", "input_tokens": 1},
                                    durability="durable") for _ in range(50)])
    assert session.state["cost"].totals()["input_tokens"] == 400
    assert session.state.skipped == []
    session.close()
    assert keeper.replay(session.thread_id).state["cost"].totals()["input_tokens"] == 400
    full = keeper.replay(session.thread_id, full=True)
    assert full.state["cost"].totals()["input_tokens"] == 400


def test_concurrent_operations_are_never_run_again_after_resume(store_dir, repo):
    """Fixture: one session; 8 threads x 25 begin/finish operation pairs; then a resume."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    counter = iter(range(10_000))
    lock = threading.Lock()

    def work() -> None:
        for _ in range(25):
            with lock:
                op = f"op-{next(counter)}"
            assert session.begin_operation(op, "shell").action == "run"
            session.finish_operation(op, result={"ok": True})

    _run(8, work)
    session.close()
    report, resumed = keeper.resume(session.thread_id, workspace=str(repo))
    assert report.in_doubt_operations == []
    assert resumed.state["operations"].counts()["committed"] == 200
    assert all(resumed.begin_operation(f"op-{i}", "shell").action == "reuse" for i in range(200))
    resumed.close()


def test_two_threads_beginning_the_same_operation_run_it_once(store_dir, repo):
    """Fixture: one session; 8 threads race to begin the same operation id, 50 rounds."""
    keeper = Keeper(store_dir)
    session = keeper.start(repo)
    for round_ in range(50):
        actions: list[str] = []
        lock = threading.Lock()
        start = threading.Barrier(8)

        def race(op: str = f"op-{round_}", start: threading.Barrier = start,
                 lock: threading.Lock = lock, actions: list[str] = actions) -> None:
            start.wait()
            action = session.begin_operation(op, "shell").action
            with lock:
                actions.append(action)

        _run(8, race)
        assert actions.count("run") == 1, actions
    session.close()
