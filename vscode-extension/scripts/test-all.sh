#!/usr/bin/env bash
# Everything, in order: npm ci -> protocol types current -> build (typecheck + bundle) -> unit tests -> e2e in code-server.
# Exits non-zero on any failure and ends with "N passed, M failed" (unit + e2e checks).
# The e2e runs against the real `python -m sessionkeeper serve` (store seeded with the real CLI).
# SKIP_E2E=1 skips the e2e (e.g. on a machine without apt access); the skip is announced and
# counted as one failure, so it is never mistaken for a full pass (under CI it is refused outright). An e2e run that prints no
# "e2e: N passed, M failed" line, or passes zero checks, counts as a failure.
set -uo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
cd "$HERE" || exit 1
TMP=$(mktemp -d /tmp/sk-test-all.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0
rc=0

step() { echo; echo "=== $* ==="; }

step "npm ci"
if ! npm ci --no-audit --no-fund > "$TMP/ci.log" 2>&1; then
  cat "$TMP/ci.log"; echo "npm ci failed"; failed=$((failed + 1)); echo "$passed passed, $failed failed"; exit 1
fi
tail -1 "$TMP/ci.log"

step "protocol types (src/protocol-gen/ from protocol/schema.json)"
if ! node scripts/gen-protocol.mjs --check; then
  echo "stale protocol types"; failed=$((failed + 1)); echo "$passed passed, $failed failed"; exit 1
fi

step "build"
if ! npm run -s build; then
  echo "build failed"; failed=$((failed + 1)); echo "$passed passed, $failed failed"; exit 1
fi
echo "built dist/extension.js"

step "unit tests"
npm run -s test:unit > "$TMP/unit.log" 2>&1
unit_rc=$?
grep -E -A12 '^not ok' "$TMP/unit.log" || { [ "$unit_rc" -eq 0 ] || tail -40 "$TMP/unit.log"; }
grep -E '^(# |ℹ )(tests|pass|fail) ' "$TMP/unit.log"
up=$(grep -E '^(# |ℹ )pass [0-9]+' "$TMP/unit.log" | grep -oE '[0-9]+' | tail -1)
uf=$(grep -E '^(# |ℹ )fail [0-9]+' "$TMP/unit.log" | grep -oE '[0-9]+' | tail -1)
up=${up:-0}; uf=${uf:-0}
if [ "$unit_rc" -ne 0 ] && [ "$uf" -eq 0 ]; then uf=1; fi   # crashed before counting
passed=$((passed + up)); failed=$((failed + uf))
[ "$unit_rc" -eq 0 ] || rc=1
echo "unit: $up passed, $uf failed"

summary=()
if [ "${SKIP_E2E:-0}" = 1 ] && [ -n "${CI:-}" ]; then
  step "SKIP_E2E=1 refused under CI: a skipped e2e is a test that did not run"
  summary+=("e2e: refused SKIP_E2E=1 under CI, counted as 1 failed")
  failed=$((failed + 1)); rc=1
elif [ "${SKIP_E2E:-0}" = 1 ]; then
  step "e2e SKIPPED (SKIP_E2E=1): this is not a full run"
  summary+=("e2e: SKIPPED (SKIP_E2E=1), counted as 1 failed")
  failed=$((failed + 1)); rc=1
else
  for server in real; do
    step "e2e against the $server server (code-server + headless chromium)"
    t0=$(date +%s)
    bash scripts/e2e.sh 2>&1 | tee "$TMP/e2e-$server.log"
    e2e_rc=${PIPESTATUS[0]}
    line=$(grep -E '^e2e: [0-9]+ passed, [0-9]+ failed' "$TMP/e2e-$server.log" | tail -1)
    ep=$(echo "$line" | sed -nE 's/^e2e: ([0-9]+) passed.*/\1/p'); ef=$(echo "$line" | sed -nE 's/^e2e: [0-9]+ passed, ([0-9]+) failed.*/\1/p')
    ep=${ep:-0}; ef=${ef:-0}
    if [ "$e2e_rc" -ne 0 ] && [ "$ef" -eq 0 ]; then ef=1; fi  # setup failed before any check
    if [ "$ep" -eq 0 ] && [ "$ef" -eq 0 ]; then                 # no check ran: never a silent pass
      echo "e2e against the $server server ran no checks"; ef=1
    fi
    passed=$((passed + ep)); failed=$((failed + ef))
    [ "$e2e_rc" -eq 0 ] && [ "$ef" -eq 0 ] || rc=1
    summary+=("e2e ($server server): $ep passed, $ef failed in $(( $(date +%s) - t0 )) s")
  done
fi

echo
echo "unit: $up passed, $uf failed"
for s in "${summary[@]}"; do echo "$s"; done
echo "$passed passed, $failed failed"
exit $rc
