#!/usr/bin/env bash
# End-to-end test in a real VS Code (code-server 4.100.3) driven by headless Chromium, against the
# real server: build the .vsix -> seed a store with the real CLI in a scratch git repo -> install
# the .vsix into an isolated code-server profile -> open the workspace -> run test/e2e/run.mjs
# (playwright-core) -> screenshots in test-artifacts/real/.
# The server is `<python> -m sessionkeeper serve` with python from E2E_PYTHON, else
# $E2E_CACHE/venv-real (`pip install -e <repo>`, kept current by install-e2e-deps.sh); a seeding
# failure fails the run. E2E_SERVER_COMMAND='["/x/python","-m","sessionkeeper","serve"]' overrides it.
# SKIP_PACKAGE=1 reuses dist/session-keeper.vsix. KEEP_RUN_DIR=1 keeps the temp profile.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
E2E_CACHE=${E2E_CACHE:-$HERE/.e2e-cache}
ART=${E2E_ARTIFACTS:-$HERE/test-artifacts/real}
CS_ENTRY=$E2E_CACHE/code-server/node_modules/code-server/out/node/entry.js
VSIX=$HERE/dist/session-keeper.vsix
START_NS=$(date +%s%N)

log() { echo "[e2e] $*"; }

# Idempotent, 0.4 s and one line when everything is present; installs what is missing.
E2E_CACHE=$E2E_CACHE bash "$HERE/scripts/install-e2e-deps.sh"

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

export XDG_CONFIG_HOME=$R/xdg-config XDG_DATA_HOME=$R/xdg-data XDG_CACHE_HOME=$R/xdg-cache PLAYWRIGHT_BROWSERS_PATH=$R/pw
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
{
  # Threads recorded with the real CLI in a scratch git repo (DESIGN §7 scenario 3):
  #   "Clean thread"   on main (which stays checked out): todos 1 of 3 done, tests 7/9; the agent
  #                    read payment.py (as committed) and wrote notes.md (untracked);
  #   "Drifted thread" started on fix/payment, a branch one commit ahead of main (payment.py
  #                    rounds); then `git checkout main`: its resume must drift on the branch.
  # Every step must succeed and the store must then say exactly that (verdicts ok / drift), else
  # the e2e fails here: a half-seeded store would only make the checks below pass vacuously.
  seed() {
    set -euo pipefail
    trap 'echo "seeding step failed (rc=$?): $BASH_COMMAND" >&2' ERR
    cd "$WS"
    g() { git -c user.name=e2e -c user.email=e2e@example.invalid -c init.defaultBranch=main "$@"; }
    sk() { SESSIONKEEPER_HOME="$STORE" "$E2E_PYTHON" -m sessionkeeper --store "$STORE" "$@"; }
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
    sk list --json > "$R/list.json"
    CLEAN=$clean DRIFTED=$drifted ELSEWHERE=$elsewhere "$E2E_PYTHON" - "$R" > "$R/seed.json" <<'PY'
import json, os, sys
r = sys.argv[1]
load = lambda n: json.load(open(os.path.join(r, n)))
clean, drifted = json.loads(os.environ["CLEAN"]), json.loads(os.environ["DRIFTED"])
elsewhere = json.loads(os.environ["ELSEWHERE"])
cc, cd, threads = load("check-clean.json"), load("check-drifted.json"), load("list.json")
assert cc["verdict"] == "ok" and not cc["differences"], f"clean thread does not resume ok: {cc['verdict']} {cc['differences']}"
todos, tests = cc["subsystems"]["todos"]["summary"], cc["subsystems"]["verifier"]["summary"]["tests"] or {}
assert todos["done"] == 1 and todos["total"] == 3, f"clean todos: {todos}"
assert tests.get("passed") == 7 and tests.get("total") == 9, f"clean verifier: {tests}"
assert cd["verdict"] == "drift", f"drifted thread: verdict {cd['verdict']}"
assert {"kind": "branch", "recorded": "fix/payment", "current": "main"}.items() <= next(
    (d for d in cd["differences"] if d["kind"] == "branch"), {}).items(), f"drifted differences: {cd['differences']}"
assert cd["switch_back"] == "git checkout fix/payment", f"drifted switch back: {cd['switch_back']}"
ids = [t["thread_id"] for t in threads]
assert ids == [drifted["thread_id"], clean["thread_id"], elsewhere["thread_id"]], f"store lists {ids} (newest first)"
json.dump({"clean": {"title": "Clean thread", "thread_id": clean["thread_id"], "branch": "main"},
           "drifted": {"title": "Drifted thread", "thread_id": drifted["thread_id"], "branch": "fix/payment"},
           "elsewhere": {"title": "Elsewhere thread", "thread_id": elsewhere["thread_id"]},
           "current_branch": "main"}, sys.stdout)
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
  "sessionKeeper.serverCommand": $SERVER_CMD,
  "sessionKeeper.storePath": "$STORE"
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
