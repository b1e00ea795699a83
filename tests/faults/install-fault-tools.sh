#!/usr/bin/env bash
# Installs what the real fault suite (tests/faults/) needs, only when it is missing. Idempotent;
# with everything present it prints one line. Run as root (or with sudo) on Debian 12.
#   - fiu-utils + libfiu0: `fiu-run -x` preloads libfiu's POSIX wrappers, so a test can make
#     fsync() and write() fail with a real EIO inside an unmodified Python process
#   - strace: `-e inject=fsync:delay_enter=…` holds a real process inside a window (a rollout
#     created and not yet written) long enough for another process to act in it
#   - faketime (libfaketime): runs a real Hermes Agent turn "yesterday", so a reset boundary of its
#     policy lies between that message and now (tests/e2e/agents/test_real_hermes.py)
#   - util-linux `mount` (tmpfs for a real ENOSPC) is part of every Debian base system
set -euo pipefail

log() { echo "[install-fault-tools] $*"; }
need=()
command -v fiu-run >/dev/null 2>&1 || need+=(fiu-utils)
dpkg -s libfiu0 >/dev/null 2>&1 || need+=(libfiu0)
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v faketime >/dev/null 2>&1 || need+=(faketime)
if [ ${#need[@]} -eq 0 ]; then
  log "all present ($(command -v fiu-run))"
  exit 0
fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
LOG=$(mktemp /tmp/install-fault-tools.XXXXXX)
trap 'rm -f "$LOG"' EXIT
log "apt-get install ${need[*]}"
if ! { $SUDO apt-get update -qq && \
       $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"; } \
     > "$LOG" 2>&1; then
  log "FAILED:"; tail -40 "$LOG"; exit 1
fi
log "done ($(command -v fiu-run))"
