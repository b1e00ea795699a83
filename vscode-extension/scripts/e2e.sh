#!/usr/bin/env bash
# End-to-end test in a real VS Code (code-server 4.100.3) driven by headless Chromium:
#   build the .vsix -> install it into an isolated code-server profile -> open a workspace ->
#   run test/e2e/run.mjs (playwright-core) -> screenshots in test-artifacts/.
# E2E_SERVER=fake (default) uses test/e2e/fake_server.py; E2E_SERVER=real uses
# `<python> -m sessionkeeper serve` (PYTHONPATH=<repo>/server, python from E2E_PYTHON or python3).
# E2E_SERVER_COMMAND='["/x/python","-m","sessionkeeper","serve"]' overrides both.
# SKIP_PACKAGE=1 reuses dist/session-keeper.vsix. KEEP_RUN_DIR=1 keeps the temp profile.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/.." && pwd)
E2E_CACHE=${E2E_CACHE:-$HERE/.e2e-cache}
ART=${E2E_ARTIFACTS:-$HERE/test-artifacts}
CS_ENTRY=$E2E_CACHE/code-server/node_modules/code-server/out/node/entry.js
VSIX=$HERE/dist/session-keeper.vsix
MODE=${E2E_SERVER:-fake}
START=$(date +%s.%N)

log() { echo "[e2e] $*"; }

[ -f "$CS_ENTRY" ] && [ -x /usr/bin/chromium ] && [ -x "$E2E_CACHE/venv/bin/python" ] || bash "$HERE/scripts/install-e2e-deps.sh"
[ -d "$HERE/node_modules/playwright-core" ] || (cd "$HERE" && npm ci --no-audit --no-fund)

if [ "${SKIP_PACKAGE:-0}" != 1 ] || [ ! -f "$VSIX" ]; then
  log "packaging"
  (cd "$HERE" && npm run -s package) > /tmp/sk-e2e-package.log 2>&1 || { cat /tmp/sk-e2e-package.log; exit 1; }
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

case "$MODE" in
  fake) SERVER_CMD=$(printf '["%s", "%s"]' "$E2E_CACHE/venv/bin/python" "$HERE/test/e2e/fake_server.py")
        export FAKE_SERVER_LOG=$R/fake-server.jsonl FAKE_WORKSPACE=$WS ;;
  real) SERVER_CMD=$(printf '["%s", "-m", "sessionkeeper", "serve"]' "${E2E_PYTHON:-python3}")
        export PYTHONPATH="$REPO/server${PYTHONPATH:+:$PYTHONPATH}" ;;
  *) echo "E2E_SERVER must be fake or real" >&2; exit 2 ;;
esac
SERVER_CMD=${E2E_SERVER_COMMAND:-$SERVER_CMD}
log "server ($MODE): $SERVER_CMD"

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
E2E_SERVER="$MODE" E2E_URL="http://127.0.0.1:$PORT" E2E_WORKSPACE="$WS" E2E_ARTIFACTS="$ART" E2E_STORE="$STORE" \
  node "$HERE/test/e2e/run.mjs"
RC=$?
set -e

# Keep the extension's log (server stderr, requests) next to the screenshots.
find "$R/ud/logs" -name '*Session Keeper*.log' -exec cp {} "$ART/session-keeper.log" \; 2>/dev/null || true
cp "$R/code-server.log" "$ART/code-server.log" 2>/dev/null || true
[ -n "${FAKE_SERVER_LOG:-}" ] && cp "$FAKE_SERVER_LOG" "$ART/fake-server.jsonl" 2>/dev/null || true
log "screenshots: $(ls "$ART"/*.png 2>/dev/null | tr '\n' ' ')"
log "duration $(echo "$(date +%s.%N) - $START" | bc 2>/dev/null || echo '?') s (rc=$RC)"
exit $RC
