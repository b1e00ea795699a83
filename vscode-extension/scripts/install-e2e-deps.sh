#!/usr/bin/env bash
# Installs what the end-to-end test needs, each piece only when it is missing:
#   - Debian packages: chromium (headless browser), ripgrep, libkrb5-dev + build-essential (native rebuilds)
#   - code-server $CODE_SERVER_VERSION from npm into $E2E_CACHE/code-server (recipe: shared ide-stack.md §3.2)
#   - a Python venv with pygls for the fake server in $E2E_CACHE/venv
# playwright-core is a devDependency of the extension (installed by `npm ci`).
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
E2E_CACHE=${E2E_CACHE:-$HERE/.e2e-cache}
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.100.3}
NODEDIR=${NODEDIR:-/usr}
CS_DEST=$E2E_CACHE/code-server
CS_ENTRY=$CS_DEST/node_modules/code-server/out/node/entry.js
mkdir -p "$E2E_CACHE"

log() { echo "[install-e2e-deps] $*"; }

# --- Debian packages ------------------------------------------------------------------------
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v rg >/dev/null 2>&1 || need_apt+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
dpkg -s build-essential >/dev/null 2>&1 || need_apt+=(build-essential)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
else
  log "apt packages present"
fi

# --- code-server from npm (the plain `npm install code-server` fails offline, see recipe) -----
installed_version() { [ -f "$CS_ENTRY" ] && node -p "require('$CS_DEST/node_modules/code-server/package.json').version" 2>/dev/null || true; }
if [ "$(installed_version)" = "$CODE_SERVER_VERSION" ] && [ -f "$CS_DEST/.complete" ]; then
  log "code-server $CODE_SERVER_VERSION present"
else
  log "installing code-server $CODE_SERVER_VERSION into $CS_DEST"
  rm -rf "$CS_DEST"; mkdir -p "$CS_DEST"
  (
    export PATH="$NODEDIR/bin:$PATH" npm_config_nodedir="$NODEDIR" npm_config_yes=true
    cd "$CS_DEST"
    echo '{"name":"cs-host","private":true}' > package.json
    npm install --no-audit --no-fund --ignore-scripts "code-server@$CODE_SERVER_VERSION"
    npm rebuild argon2
    cd node_modules/code-server/lib/vscode
    npm install --no-audit --no-fund --omit=dev --ignore-scripts
    mkdir -p node_modules/@vscode/ripgrep/bin
    ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
    npm rebuild --foreground-scripts || true
    ln -sfn node_modules node_modules.asar
    (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
    (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
    cd extensions && npm install --no-audit --no-fund --omit=dev
  ) > "$E2E_CACHE/code-server-install.log" 2>&1 || { tail -40 "$E2E_CACHE/code-server-install.log"; exit 1; }
  XDG_CONFIG_HOME=$E2E_CACHE/xdg-probe XDG_DATA_HOME=$E2E_CACHE/xdg-probe XDG_CACHE_HOME=$E2E_CACHE/xdg-probe \
    node "$CS_ENTRY" --version
  touch "$CS_DEST/.complete"
fi

# --- venv for the fake server ------------------------------------------------------------------
VENV=$E2E_CACHE/venv
PY=${PYTHON:-python3}
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -m pip show pygls 2>/dev/null | grep -q '^Version: 2.1.1$'; then
  log "venv with pygls 2.1.1 present"
else
  log "creating venv $VENV (pygls==2.1.1)"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check pygls==2.1.1
fi
log "done"
