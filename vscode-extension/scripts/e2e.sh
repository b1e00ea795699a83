#!/usr/bin/env bash
# End-to-end test in a real VS Code (code-server 4.100.3) driven by headless Chromium, against the
# real server: build the .vsix -> seed a store with the real CLI in a scratch git repo -> install
# the .vsix into an isolated code-server profile -> open the workspace -> run test/e2e/run.mjs
# (playwright-core) -> screenshots in test-artifacts/real/.
# The server is `<python> -m sessionkeeper serve` with python from E2E_PYTHON, else
# $E2E_CACHE/venv-real (`pip install -e <repo>`, kept current by install-e2e-deps.sh); a seeding
# failure fails the run. E2E_SERVER_COMMAND='["/x/python","-m","sessionkeeper","serve"]' overrides it.
# The agents' homes of the run are seeded by the REAL Codex CLI and Claude Code (installed, pinned
# and cached, by tests/e2e/agents/install.sh; driven against the project's fake model servers on
# 127.0.0.1 by tests/e2e/agents/seed_editor.py) and reach the server only through the extension's
# settings sessionKeeper.codexHome / claudeHome: code-server's own CODEX_HOME / CLAUDE_CONFIG_DIR
# are empty folders, so a setting that did not arrive shows no agent thread, and the machine's
# ~/.codex and ~/.claude are never read. `codex` / `claude` on the integrated terminals' PATH
# (terminal.integrated.env.linux) are stubs that log what they were asked to run, and where (the
# real CLIs would open an interactive session against a model server that is gone by then).
# SKIP_PACKAGE=1 reuses dist/session-keeper.vsix (a developer's shortcut: under CI the extension is
# always packaged from this checkout, so a stale package is never tested). KEEP_RUN_DIR=1 keeps the
# temp profile.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/.." && pwd)
E2E_CACHE=${E2E_CACHE:-$HERE/.e2e-cache}
ART=${E2E_ARTIFACTS:-$HERE/test-artifacts/real}
CS_ENTRY=$E2E_CACHE/code-server/node_modules/code-server/out/node/entry.js
VSIX=$HERE/dist/session-keeper.vsix
START_NS=$(date +%s%N)

log() { echo "[e2e] $*"; }

# Idempotent, 0.4 s and one line when everything is present; installs what is missing.
E2E_CACHE=$E2E_CACHE bash "$HERE/scripts/install-e2e-deps.sh"

if [ -n "${CI:-}" ] && [ "${SKIP_PACKAGE:-0}" = 1 ]; then
  log "SKIP_PACKAGE=1 ignored under CI: packaging this checkout"
  SKIP_PACKAGE=0
fi
if [ "${SKIP_PACKAGE:-0}" != 1 ] || [ ! -f "$VSIX" ]; then
  log "packaging"
  PKG_LOG=$(mktemp /tmp/sk-e2e-package.XXXXXX.log)
  (cd "$HERE" && npm run -s package) > "$PKG_LOG" 2>&1 || { cat "$PKG_LOG"; rm -f "$PKG_LOG"; exit 1; }
  rm -f "$PKG_LOG"
fi

R=$(mktemp -d /tmp/sk-e2e.XXXXXX)
CS_PID=""
cleanup() {
  if [ -n "$CS_PID" ] && kill -0 "$CS_PID" 2>/dev/null; then
    kill "$CS_PID" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$CS_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$CS_PID" 2>/dev/null || true
  fi
  if [ "${KEEP_RUN_DIR:-0}" = 1 ]; then log "run dir kept: $R"; else rm -rf "$R"; fi
}
trap cleanup EXIT

# install.sh caches the agents under the caller's cache dir, not the run's isolated one.
AGENTS_XDG_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}
export XDG_CONFIG_HOME=$R/xdg-config XDG_DATA_HOME=$R/xdg-data XDG_CACHE_HOME=$R/xdg-cache PLAYWRIGHT_BROWSERS_PATH=$R/pw
# The agents' own folders: the seeded ones reach the server through the settings only; the
# environment names empty ones of this run (never the machine's).
CODEX_SEED=$R/agents/codex-home CLAUDE_SEED=$R/agents/claude-config AGENT_HOME=$R/agents/home
export CODEX_HOME=$R/codex-home-empty CLAUDE_CONFIG_DIR=$R/claude-config-empty
mkdir -p "$CODEX_HOME" "$CLAUDE_CONFIG_DIR" "$CODEX_SEED" "$CLAUDE_SEED" "$AGENT_HOME"
# Stubs for the terminal the extension opens on an agent's resume: they log argv and cwd.
AGENT_CALLS=$R/agent-calls.log
mkdir -p "$R/agent-bin"
for a in codex claude; do
  cat > "$R/agent-bin/$a" <<STUB
#!/bin/sh
# e2e stub of the $a CLI: logs what it was asked to run, and where.
printf '%s\t%s\n' "\$PWD" "$a \$*" >> "$AGENT_CALLS"
echo "[e2e stub] $a \$* (in \$PWD)"
STUB
  chmod +x "$R/agent-bin/$a"
done
: > "$AGENT_CALLS"
WS=$R/workspace
STORE=$R/store
mkdir -p "$WS" "$STORE" "$R/ud/User" "$ART"
rm -f "$ART"/*.png
echo "# e2e workspace" > "$WS/README.md"

# The editable install of the repository that install-e2e-deps.sh keeps current (rebuilt when
# pyproject.toml changes or the import fails), unless E2E_PYTHON names another interpreter.
E2E_PYTHON=${E2E_PYTHON:-$E2E_CACHE/venv-real/bin/python}
"$E2E_PYTHON" -c 'import sessionkeeper, pygls' || { echo "e2e: 0 passed, 1 failed ($E2E_PYTHON cannot import sessionkeeper)"; exit 1; }
SERVER_CMD=$(printf '["%s", "-m", "sessionkeeper", "serve"]' "$E2E_PYTHON")
SERVER_CMD=${E2E_SERVER_COMMAND:-$SERVER_CMD}
# The real agent CLIs (pinned versions from npm, cached in ~/.cache/sessionkeeper-agents).
for a in codex claude; do
  exe=$(XDG_CACHE_HOME=$AGENTS_XDG_CACHE bash "$REPO/tests/e2e/agents/install.sh" "$a" 2> "$R/install-$a.log") || {
    cat "$R/install-$a.log"; echo "not ok - install the real $a CLI (tests/e2e/agents/install.sh)"; echo "e2e: 0 passed, 1 failed"; exit 1; }
  printf -v "EXE_$a" '%s' "$exe"
done
log "agents: $("$EXE_codex" --version 2>/dev/null | head -1); claude $("$EXE_claude" --version 2>/dev/null | head -1)"
{
  # Threads recorded with the real CLI in a scratch git repo (DESIGN §7 scenario 3):
  #   "Clean thread"   on main (which stays checked out): todos 1 of 3 done, tests 7/9; the agent
  #                    read payment.py (as committed) and wrote notes.md (untracked);
  #   "Drifted thread" started on fix/payment, a branch one commit ahead of main (payment.py
  #                    rounds); then `git checkout main`: its resume must drift on the branch.
  # Before these, in the agents' homes, written by the real CLIs (one read-only shell call each):
  #   a Codex session on main, with Session Keeper's hooks installed into its home (baseline
  #                    exact: the hook recorded it) -> resumes ok;
  #   a Claude Code session on fix/payment, no hooks (baseline reconstructed from its log), then
  #                    `git checkout main` -> drift on the branch.
  # Every step must succeed and the store must then say exactly that (verdicts ok / drift), else
  # the e2e fails here: a half-seeded store would only make the checks below pass vacuously.
  seed() {
    set -euo pipefail
    trap 'echo "seeding step failed (rc=$?): $BASH_COMMAND" >&2' ERR
    cd "$WS"
    g() { git -c user.name=e2e -c user.email=e2e@example.invalid -c init.defaultBranch=main "$@"; }
    sk() { SESSIONKEEPER_HOME="$STORE" "$E2E_PYTHON" -m sessionkeeper --store "$STORE" "$@"; }
    # The CLI reads the seeded agent homes, as the server will through the settings.
    export CODEX_HOME=$CODEX_SEED CLAUDE_CONFIG_DIR=$CLAUDE_SEED
    agent() { (cd "$REPO" && "$E2E_PYTHON" -m tests.e2e.agents.seed_editor "$1" --exe "$2" --cwd "$WS" --root "$3" --home "$AGENT_HOME"); }
    field() { "$E2E_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
    printf 'def charge(amount):\n    return amount\n' > payment.py
    local clean drifted sid elsewhere
    # A thread of another folder (outside git), oldest: only the all-workspaces view lists it.
    mkdir -p "$R/elsewhere"
    elsewhere=$(sk start --workspace "$R/elsewhere" --title "Elsewhere thread" --json)
    g init -q -b main .
    g add README.md payment.py
    g commit -qm init
    g checkout -q -b fix/payment
    printf 'def charge(amount):\n    return round(amount, 2)\n' > payment.py
    g commit -qam "round charges to cents"
    g checkout -q main
    local codex claude
    sk hooks install --agent codex --config-dir "$CODEX_SEED" --store "$STORE" --json > "$R/hooks-install.json"
    grep -q -- "--store $STORE codex" "$CODEX_SEED/hooks.json"   # the hook writes into this store only
    codex=$(agent codex "$EXE_codex" "$CODEX_SEED")
    g checkout -q fix/payment
    claude=$(agent claude "$EXE_claude" "$CLAUDE_SEED")
    g checkout -q main
    [ -z "$(g status --porcelain)" ]   # the agents' tool calls only read
    clean=$(sk start --workspace "$WS" --title "Clean thread" --json)
    sid=$(field session_id <<<"$clean")
    printf '# Rounding\nCharges are rounded to cents.\n' > notes.md
    printf '%s\n' \
      '{"type":"todo","items":[{"id":"1","text":"reproduce the rounding bug","status":"done"},{"id":"2","text":"fix Money.round"},{"id":"3","text":"add regression tests"}]}' \
      '{"type":"file_change","path":"payment.py","author":"agent"}' \
      '{"type":"file_change","path":"notes.md","author":"agent"}' \
      '{"type":"verifier","kind":"tests","passed":7,"total":9,"checkpoint":"tests: 7/9"}' \
      | sk record --session "$sid" --json
    g checkout -q fix/payment
    drifted=$(sk start --workspace "$WS" --title "Drifted thread" --json)
    sid=$(field session_id <<<"$drifted")
    printf '%s\n' '{"type":"todo","items":[{"id":"1","text":"round half-even"},{"id":"2","text":"update the changelog"}]}' \
      | sk record --session "$sid" --json
    g checkout -q main
    # What the server will be asked: the clean thread resumes ok, the drifted one drifts on the branch.
    sk --check-resume "$(field thread_id <<<"$clean")" --workspace "$WS" --json > "$R/check-clean.json"
    sk --check-resume "$(field thread_id <<<"$drifted")" --workspace "$WS" --allow-drift --json > "$R/check-drifted.json"
    sk --check-resume "$(field session_id <<<"$codex")" --workspace "$WS" --json > "$R/check-codex.json"
    sk --check-resume "$(field session_id <<<"$claude")" --workspace "$WS" --allow-drift --json > "$R/check-claude.json"
    sk list --json > "$R/list.json"
    CLEAN=$clean DRIFTED=$drifted ELSEWHERE=$elsewhere CODEX=$codex CLAUDE=$claude \
      CODEX_SEED=$CODEX_SEED CLAUDE_SEED=$CLAUDE_SEED AGENT_CALLS=$AGENT_CALLS "$E2E_PYTHON" - "$R" > "$R/seed.json" <<'PY'
import json, os, sys
r = sys.argv[1]
load = lambda n: json.load(open(os.path.join(r, n)))
clean, drifted = json.loads(os.environ["CLEAN"]), json.loads(os.environ["DRIFTED"])
elsewhere = json.loads(os.environ["ELSEWHERE"])
codex, claude = json.loads(os.environ["CODEX"]), json.loads(os.environ["CLAUDE"])
cc, cd, threads = load("check-clean.json"), load("check-drifted.json"), load("list.json")
cx, cl = load("check-codex.json"), load("check-claude.json")
assert cc["verdict"] == "ok" and not cc["differences"], f"clean thread does not resume ok: {cc['verdict']} {cc['differences']}"
todos, tests = cc["subsystems"]["todos"]["summary"], cc["subsystems"]["verifier"]["summary"]["tests"] or {}
assert todos["done"] == 1 and todos["total"] == 3, f"clean todos: {todos}"
assert tests.get("passed") == 7 and tests.get("total") == 9, f"clean verifier: {tests}"
assert cd["verdict"] == "drift", f"drifted thread: verdict {cd['verdict']}"
assert {"kind": "branch", "recorded": "fix/payment", "current": "main"}.items() <= next(
    (d for d in cd["differences"] if d["kind"] == "branch"), {}).items(), f"drifted differences: {cd['differences']}"
assert cd["switch_back"] == "git checkout fix/payment", f"drifted switch back: {cd['switch_back']}"
assert (cx["verdict"], cx["agent"], cx["differences"]) == ("ok", "codex", []), f"codex: {cx['verdict']} {cx['differences']}"
assert cx["facts"]["git"]["exact"] is True, f"codex git facts: {cx['facts'].get('git')}"
assert (cl["verdict"], cl["agent"]) == ("drift", "claude"), f"claude: {cl['verdict']}"
assert [(d["kind"], d["recorded"], d["current"]) for d in cl["differences"]] == [("branch", "fix/payment", "main")], cl["differences"]
ids = [t["thread_id"] for t in threads]
want = [drifted["thread_id"], clean["thread_id"], claude["session_id"], codex["session_id"], elsewhere["thread_id"]]
assert ids == want, f"store lists {ids} (newest first), want {want}"
rows = {t["thread_id"]: t for t in threads}
assert (rows[codex["session_id"]]["agent"], rows[codex["session_id"]]["baseline"]) == ("codex", "hook"), rows[codex["session_id"]]
assert (rows[claude["session_id"]]["agent"], rows[claude["session_id"]]["baseline"]) == ("claude", "log"), rows[claude["session_id"]]
agent = lambda a, s, home, branch: {"title": s["title"], "thread_id": s["session_id"], "transcript": s["transcript"],
                                    "home": home, "branch": branch, "model": rows[s["session_id"]]["model"]}
json.dump({"clean": {"title": "Clean thread", "thread_id": clean["thread_id"], "branch": "main"},
           "drifted": {"title": "Drifted thread", "thread_id": drifted["thread_id"], "branch": "fix/payment"},
           "elsewhere": {"title": "Elsewhere thread", "thread_id": elsewhere["thread_id"]},
           "codex": agent("codex", codex, os.environ["CODEX_SEED"], "main"),
           "claude": agent("claude", claude, os.environ["CLAUDE_SEED"], "fix/payment"),
           "agent_calls": os.environ["AGENT_CALLS"], "current_branch": "main"}, sys.stdout)
PY
  }
  # Not `if (seed)`: errexit is ignored inside a tested command, so a failing step would not stop it.
  set +e; (seed) > "$R/seed.log" 2>&1; seed_rc=$?; set -e
  if [ "$seed_rc" -eq 0 ]; then
    export E2E_SEED=$R/seed.json E2E_PYTHON
    log "seeded: $(cat "$R/seed.json")"
  else
    log "seeding the real store failed:"; cat "$R/seed.log"
    echo "not ok - seed the threads with the real CLI (see above)"
    echo "e2e: 0 passed, 1 failed"
    exit 1
  fi
}
log "server: $SERVER_CMD"

cat > "$R/ud/User/settings.json" <<EOF
{
  "workbench.startupEditor": "none", "workbench.tips.enabled": false, "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false, "update.mode": "none",
  "security.workspace.trust.enabled": false, "workbench.enableExperiments": false,
  "terminal.integrated.tabs.hideCondition": "never",
  "terminal.integrated.env.linux": { "PATH": "$R/agent-bin:\${env:PATH}" },
  "sessionKeeper.serverCommand": $SERVER_CMD,
  "sessionKeeper.storePath": "$STORE",
  "sessionKeeper.codexHome": "$CODEX_SEED",
  "sessionKeeper.claudeHome": "$CLAUDE_SEED"
}
EOF

CS=(node "$CS_ENTRY" --user-data-dir "$R/ud" --extensions-dir "$R/exts")
"${CS[@]}" --install-extension "$VSIX" > "$R/install.log" 2>&1 || { cat "$R/install.log"; exit 1; }
log "installed $(basename "$VSIX")"

PORT=${E2E_PORT:-$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}
"${CS[@]}" --bind-addr "127.0.0.1:$PORT" --auth none --disable-telemetry --disable-update-check \
  --disable-workspace-trust "$WS" > "$R/code-server.log" 2>&1 &
CS_PID=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  kill -0 "$CS_PID" 2>/dev/null || { cat "$R/code-server.log"; exit 1; }
  sleep 0.2
done
log "code-server up on port $PORT"

set +e
E2E_SETTINGS="$R/ud/User/settings.json" E2E_USER_DATA="$R/ud" E2E_URL="http://127.0.0.1:$PORT" E2E_WORKSPACE="$WS" E2E_ARTIFACTS="$ART" E2E_STORE="$STORE" \
  node "$HERE/test/e2e/run.mjs"
RC=$?
set -e

# Keep the extension's log (server stderr, requests) next to the screenshots.
find "$R/ud/logs" -name '*Session Keeper*.log' -exec cp {} "$ART/session-keeper.log" \; 2>/dev/null || true
cp "$R/code-server.log" "$ART/code-server.log" 2>/dev/null || true
log "screenshots: $(ls "$ART"/*.png 2>/dev/null | tr '\n' ' ')"
ms=$(( ($(date +%s%N) - START_NS) / 1000000 ))
log "duration $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s (rc=$RC)"
exit $RC
