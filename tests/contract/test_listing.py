"""Listing threads: summaries from the index with an estimated resume state per thread."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sessionkeeper.api import Keeper
from sessionkeeper.events import GitBaseline, RepoIdentity
from sessionkeeper.keeper.listing import summaries
from sessionkeeper.recovery.summary import estimate_state
from sessionkeeper.store.index import ThreadRow

from ..conftest import git, init_repo


def test_listing_estimates_ok_drift_and_blocked_without_reading_rollouts(store_dir, repo, tmp_path):
    """Fixture: three closed threads: on fix/payment, on another branch, in another repository."""
    keeper = Keeper(store_dir)
    keeper.start(repo, title="here").close()
    git(repo, "checkout", "-q", "-b", "other")
    keeper.start(repo, title="on other").close()
    git(repo, "checkout", "-q", "fix/payment")
    elsewhere = init_repo(tmp_path / "unrelated", {"f": "f"})
    foreign = keeper.start(elsewhere, title="foreign")
    foreign.close()
    (store_dir / "sessions").rename(store_dir / "away")  # listing must not read rollouts
    states = {t.title: t.state for t in keeper.threads(workspace=str(repo))}
    assert states == {"here": "ok", "on other": "drift"}
    listed = keeper.threads(workspace=str(repo), limit=1)
    assert [t.title for t in listed] == ["on other"]
    assert listed[0].forked_from is None and listed[0].archived is False
    assert listed[0].state_reason == "branch other → fix/payment"
    all_threads = {t.title: t.state for t in keeper.threads()}
    assert all_threads == {"here": None, "on other": None, "foreign": None}
    (store_dir / "away").rename(store_dir / "sessions")


def test_listing_estimates_blocked_when_another_repository_took_the_path(store_dir, tmp_path):
    """Fixture: a thread recorded in a repository later replaced by an unrelated one."""
    place = tmp_path / "project"
    for n in (1, 2):
        init_repo(place, {"f": f"repository {n}"}, message=f"root {n}")
        if n == 1:
            Keeper(store_dir).start(place, title="old repo").close()
            __import__("shutil").rmtree(place)
    assert [t.state for t in Keeper(store_dir).threads(workspace=str(place))] == ["blocked"]


def test_a_fork_is_titled_as_a_fork(store_dir, repo):
    """Fixture: a closed thread titled "fix payment", forked."""
    keeper = Keeper(store_dir)
    thread = keeper.start(repo, title="fix payment")
    thread.close()
    fork = keeper.fork(thread.thread_id)
    fork.close()
    titles = sorted(t.title for t in keeper.threads(workspace=str(repo)))
    assert titles == ["fix payment", "fix payment (fork)"]
    forked = next(t for t in keeper.threads(workspace=str(repo)) if t.title.endswith("(fork)"))
    assert forked.forked_from is not None and forked.forked_from["thread_id"] == thread.thread_id


def _estimate_and_check(keeper: Keeper, thread: str, workspace: Path) -> tuple[str | None, str]:
    """The listing's estimate and the full check of one thread in one workspace (verdicts)."""
    [listed] = [t for t in keeper.threads(workspace=str(workspace)) if t.thread_id == thread]
    return listed.state, keeper.check_resume(thread, workspace=str(workspace)).verdict


def test_the_estimate_agrees_with_the_check_in_a_shallow_clone_of_the_same_repository(
        store_dir, tmp_path):
    """Fixture: a thread recorded in a clone of `src` (origin set) at `work`; `src` moves on one
    commit and `work` is replaced by a CI-style shallow clone (depth 1) of it: its history is cut,
    so it shows no root commit and the repository is known by its origin (or its path)."""
    origin = "https://example.com/team/payment.git"
    src = init_repo(tmp_path / "src", {"payment.py": "x = 1\n"})
    git(src, "commit", "-q", "--allow-empty", "-m", "second")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", f"file://{src}", str(work))
    git(work, "remote", "set-url", "origin", origin)
    keeper = Keeper(store_dir)
    thread = keeper.start(work, title="before CI")
    thread.close()
    git(src, "commit", "-q", "--allow-empty", "-m", "third")
    __import__("shutil").rmtree(work)
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{src}", str(work))
    git(work, "remote", "set-url", "origin", origin)
    assert _estimate_and_check(keeper, thread.thread_id, work) == ("drift", "drift")
    other = init_repo(tmp_path / "other", {"b.py": "y = 1\n"})  # another project, shallow too
    git(other, "commit", "-q", "--allow-empty", "-m", "second")
    __import__("shutil").rmtree(work)
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{other}", str(work))
    git(work, "remote", "set-url", "origin", "https://example.com/team/other.git")
    assert _estimate_and_check(keeper, thread.thread_id, work) == ("blocked", "blocked")


def test_the_estimate_agrees_with_the_check_when_a_folder_recorded_outside_git_is_a_repository(
        store_dir, tmp_path):
    """Fixture: a thread recorded in a plain folder (no repository), where a repository with a
    commit is then made."""
    plain = tmp_path / "plain"
    plain.mkdir()
    keeper = Keeper(store_dir)
    thread = keeper.start(plain, title="scratch")
    thread.close()
    assert _estimate_and_check(keeper, thread.thread_id, plain) == ("ok", "ok")
    git(plain, "init", "-q", "-b", "main")
    git(plain, "commit", "-q", "--allow-empty", "-m", "first")
    assert _estimate_and_check(keeper, thread.thread_id, plain) == ("blocked", "blocked")
    [listed] = keeper.threads(workspace=str(plain))
    assert listed.state_reason == "recorded outside git"


def _agent_keeper(store: Path, agent: str, root: Path) -> Keeper:
    from sessionkeeper.agents.importer import AgentSources

    return Keeper(store, agents=AgentSources(agents=(agent,), roots={agent: (str(root),)}))


def test_the_estimate_agrees_with_the_check_on_a_claude_session_on_a_detached_head(
        store_dir, tmp_path):
    """Fixture: a real repository with its HEAD detached and a Claude transcript of a session run
    there (gitBranch "HEAD": Claude Code's word for a detached HEAD), under `tmp_path/claude`."""
    from tests.unit._agents import generator

    gen = generator()
    work = init_repo(tmp_path / "work", {"a.py": "a\n"})
    git(work, "checkout", "-q", "--detach")
    project = tmp_path / "claude" / "projects" / "-work"
    project.mkdir(parents=True)
    transcript = gen.Transcript(cwd=str(work), branch="HEAD")
    (project / f"{gen.CLAUDE_SESSION}.jsonl").write_bytes(gen.dump(gen.claude_lines(transcript)))
    keeper = _agent_keeper(store_dir, "claude", tmp_path / "claude")
    assert _estimate_and_check(keeper, gen.CLAUDE_SESSION, work) == ("ok", "ok")


def test_the_estimate_agrees_with_the_check_on_a_codex_thread_of_a_repository_without_commits(
        store_dir, tmp_path):
    """Fixture: a real `git init` repository without commits and, under `tmp_path/codex`, a Codex
    rollout created there, whose session header says `git: {}` (no branch, no commit)."""
    from tests.unit._agents import generator

    gen = generator()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")
    lines = gen.codex_lines(str(fresh))
    lines[0]["payload"]["git"] = {}
    day = tmp_path / "codex" / gen.CODEX_DAY
    day.mkdir(parents=True)
    (day / gen.CODEX_NAME).write_bytes(gen.dump(lines))
    keeper = _agent_keeper(store_dir, "codex", tmp_path / "codex")
    assert _estimate_and_check(keeper, gen.CODEX_THREAD, fresh) == ("ok", "ok")


def test_the_estimate_agrees_with_the_check_once_a_repository_without_commits_gets_one(
        store_dir, tmp_path):
    """Fixture: a thread recorded in a `git init` repository without commits (its HEAD recorded
    as none), then a first commit made there."""
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")
    keeper = Keeper(store_dir)
    thread = keeper.start(fresh, title="new project")
    thread.close()
    assert _estimate_and_check(keeper, thread.thread_id, fresh) == ("ok", "ok")
    git(fresh, "commit", "-q", "--allow-empty", "-m", "first")
    assert _estimate_and_check(keeper, thread.thread_id, fresh) == ("drift", "drift")


_ROOT = "a" * 40
_HEAD = "b" * 40
_maybe = st.sampled_from([None, "main", "HEAD"])
_sha = st.sampled_from([None, _ROOT, _HEAD])
_summary = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "branch": _maybe, "head": _sha, "origin": st.sampled_from([None, "https://x/a.git", "https://y/b.git"]),
    "identity": st.sampled_from([None, {}, {"outside_git": True}, {"outside_git": False}]),
    "title": st.text(max_size=3)}))
_row = st.builds(
    ThreadRow, thread_id=st.uuids().map(str), cwd=st.sampled_from([None, "/ws", "/elsewhere"]),
    repo_key=_sha, branch=_maybe, damaged=st.booleans(), imported=st.booleans(),
    summary=_summary, agent=st.sampled_from(["native", "codex", "claude"]))
_current = st.one_of(st.none(), *[st.builds(
    GitBaseline, repo_root=st.just("/ws"), worktree=st.just("/ws"),
    identity=st.builds(RepoIdentity, root_commits=st.sampled_from([[], [_ROOT]]),
                       remote_url=st.sampled_from([None, "https://x/a.git"])),
    branch=st.sampled_from([None, "main"]), head=st.sampled_from([None, _HEAD]))] * 3)


_VARIED = ([("row", f) for f in ("cwd", "repo_key", "branch", "damaged", "imported")]
           + [("summary", k) for k in ("branch", "head", "origin", "identity")] + [("drop", "head")])


@st.composite
def _alike_rows(draw: st.DrawFn) -> list[ThreadRow]:
    """A row, then rows that differ from it in one field (of the row or of its summary, a
    summary key dropped included): the rows a listing could take for alike."""
    base = draw(_row)
    rows = [base]
    where, name = draw(st.sampled_from(_VARIED))
    for _ in range(draw(st.integers(1, 6))):
        other = draw(_row)
        if where == "row":
            rows.append(dataclasses.replace(base, **{name: getattr(other, name)}))
            continue
        summary = dict(base.summary or {})
        if where == "drop":
            summary.pop(name, None)
        else:
            summary[name] = (other.summary or {}).get(name)
        rows.append(dataclasses.replace(base, summary=summary))
    return draw(st.permutations(rows))


_NO_ROOTS = GitBaseline(repo_root="/ws", worktree="/ws", branch="main", head=_HEAD,
                        identity=RepoIdentity(root_commits=[], remote_url="https://x/a.git"))


@settings(max_examples=1000, deadline=None)
@given(rows=_alike_rows(), current=_current)
@example(rows=[ThreadRow(thread_id=f"t{n}", branch="main", cwd="/ws", summary={"origin": origin})
               for n, origin in enumerate(["https://x/a.git", "https://y/b.git"])],
         current=_NO_ROOTS)  # ok, then blocked: another repository (told by the origin)
@example(rows=[ThreadRow(thread_id=f"t{n}", imported=True, cwd="/ws", summary=summary)
               for n, summary in enumerate([{}, {"identity": {"outside_git": True}}])],
         current=_NO_ROOTS)  # ok, then blocked: recorded outside git
def test_a_listing_estimates_every_row_as_if_it_were_alone(rows, current):
    """Generated: rows alike but for one field the estimate may read; the listing (which
    estimates alike rows once) gives each row the estimate of that row alone."""
    listed = summaries(rows, workspace="/ws", baseline=current)
    assert [(s.state, s.state_reason) for s in listed] == [estimate_state(r, current) for r in rows]


_live = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "title": st.sampled_from([None, "live"]), "branch": _maybe, "model": st.sampled_from([None, "m"]),
    "cost_usd": st.sampled_from([None, 0.5]), "todos": st.sampled_from([None, {"done": 1, "total": 2}]),
    "tests": st.sampled_from([None, {"passed": 3, "total": 4}, {"total": None}])}))


@settings(max_examples=300, deadline=None)
@given(row=_row, live=_live, estimate=st.sampled_from([None, ("ok", None), ("drift", "branch x → y")]),
       current=st.booleans(), baseline=st.sampled_from([None, "hook", "log"]))
def test_a_thread_summary_is_the_value_its_dataclass_would_make(row, live, estimate, current,
                                                                 baseline):
    """Generated: index rows (with and without a live summary, an estimate, a baseline source);
    `thread_summary` (which fills a ThreadSummary without its frozen __init__) makes a value equal
    to, ordered and converted like, the one the dataclass's own constructor makes."""
    from sessionkeeper.recovery.summary import ThreadSummary, thread_summary

    made = thread_summary(row, live=live, estimate=estimate, current=current, baseline=baseline)
    names = [f.name for f in dataclasses.fields(ThreadSummary)]
    assert list(vars(made)) == names
    rebuilt = ThreadSummary(**{name: getattr(made, name) for name in names})
    assert made == rebuilt
    assert repr(made) == repr(rebuilt)
    assert dataclasses.asdict(made) == dataclasses.asdict(rebuilt)
    summary = live or row.summary or {}
    assert made.title == (summary.get("title") or row.title)
    assert made.state == (estimate[0] if estimate else None) and made.current is current
