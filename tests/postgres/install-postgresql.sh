#!/usr/bin/env bash
# Installs the PostgreSQL server the shared-index tests start (Debian's `postgresql`: initdb,
# pg_ctl, postgres, psql), only when it is missing. Idempotent; with it present it prints one line.
# Run as root (or with sudo) on Debian 12. The tests start their own server on a temporary
# directory and a free loopback port (tests/pg_server.py); nothing here starts a service.
set -euo pipefail

log() { echo "[install-postgresql] $*"; }
found() { ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1; }
if [ -n "$(found)" ] && command -v psql >/dev/null 2>&1; then
  log "present ($(found))"
  exit 0
fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
LOG=$(mktemp /tmp/install-postgresql.XXXXXX)
POLICY=/usr/sbin/policy-rc.d
OURS=""
cleanup() { rm -f "$LOG"; [ -z "$OURS" ] || $SUDO rm -f "$POLICY"; }
trap cleanup EXIT
# the package's own cluster is never used: no service is started for it while it installs (a
# policy-rc.d refusing every start, removed again unless one was there before)
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null && $SUDO chmod 755 "$POLICY" && OURS=1
fi
log "apt-get install postgresql postgresql-client"
if ! { timeout 300 $SUDO apt-get update -qq && \
       $SUDO env DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq \
         --no-install-recommends postgresql postgresql-client; } > "$LOG" 2>&1; then
  log "FAILED:"; tail -40 "$LOG"; exit 1
fi
[ -n "$(found)" ] || { log "FAILED: no initdb under /usr/lib/postgresql after the install"; exit 1; }
log "done ($(found))"
