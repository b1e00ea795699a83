#!/usr/bin/env bash
# Installs what the end-to-end test needs, each piece only when it is missing (run as root on a
# fresh Debian 12, or with sudo). Idempotent; with everything present it prints one line.
#   - Debian packages (one `apt-get update`, then one install): chromium (headless browser),
#     ripgrep, libkrb5-dev + build-essential (native rebuilds), git + curl (scratch repo, health
#     check), python3-venv; nodejs only when node is missing (code-server 4.100.x needs Node 20)
#   - code-server $CODE_SERVER_VERSION from npm into $E2E_CACHE/code-server (recipe: shared ide-stack.md §3.2)
#   - playwright-core and the rest of the extension's devDependencies (`npm ci`)
#   - $E2E_CACHE/venv-real: `pip install -e <repo>` for the real server; rebuilt when the import
#     fails or <repo>/pyproject.toml changed since it was built (the editable install follows
#     source edits by itself)
# Logs of each install step go to $E2E_CACHE/*.log and are shown only on failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/.." && pwd)
E2E_CACHE=${E2E_CACHE:-$HERE/.e2e-cache}
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.100.3}
NODEDIR=${NODEDIR:-/usr}
CS_DEST=$E2E_CACHE/code-server
CS_ENTRY=$CS_DEST/node_modules/code-server/out/node/entry.js
PY=${PYTHON:-python3}
mkdir -p "$E2E_CACHE"

log() { echo "[install-e2e-deps] $*"; }
did=0   # set when anything was installed
# run <log name> <command…>: quiet on success, the log's tail on failure.
run() {
  local name=$1; shift
  "$@" > "$E2E_CACHE/$name.log" 2>&1 || { log "FAILED: $* (log: $E2E_CACHE/$name.log)"; tail -40 "$E2E_CACHE/$name.log"; exit 1; }
}

# --- Debian packages ------------------------------------------------------------------------
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v rg >/dev/null 2>&1 || need_apt+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
dpkg -s build-essential >/dev/null 2>&1 || need_apt+=(build-essential)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  run apt-update $SUDO apt-get update -qq
  run apt-install $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
  did=1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  log "node $(node --version) is too old: code-server $CODE_SERVER_VERSION needs Node 20 (e.g. from nodesource)"; exit 1
fi

# --- code-server from npm (the plain `npm install code-server` fails offline, see recipe) -----
installed_version() { [ -f "$CS_ENTRY" ] && node -p "require('$CS_DEST/node_modules/code-server/package.json').version" 2>/dev/null || true; }
if [ "$(installed_version)" != "$CODE_SERVER_VERSION" ] || [ ! -f "$CS_DEST/.complete" ]; then
  log "installing code-server $CODE_SERVER_VERSION into $CS_DEST (about a minute)"
  rm -rf "$CS_DEST"; mkdir -p "$CS_DEST"
  (
    set -euo pipefail
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
    # code-server writes config even for --version: keep it out of $HOME.
    XDG_CONFIG_HOME=$E2E_CACHE/xdg-probe XDG_DATA_HOME=$E2E_CACHE/xdg-probe XDG_CACHE_HOME=$E2E_CACHE/xdg-probe \
      node "$CS_ENTRY" --version
  ) > "$E2E_CACHE/code-server-install.log" 2>&1 || { log "FAILED: code-server install"; tail -40 "$E2E_CACHE/code-server-install.log"; exit 1; }
  touch "$CS_DEST/.complete"
  did=1
fi

# --- playwright-core (a devDependency of the extension) --------------------------------------
if [ ! -f "$HERE/node_modules/playwright-core/package.json" ]; then
  log "npm ci (playwright-core and the extension's devDependencies)"
  (cd "$HERE" && run npm-ci npm ci --no-audit --no-fund)
  did=1
fi

# --- venv for the real server: an editable install of the repository ---------------------------
VENV_REAL=$E2E_CACHE/venv-real
want=$(sha256sum "$REPO/pyproject.toml" | cut -d' ' -f1)
have=$(cat "$VENV_REAL/.pyproject.sha256" 2>/dev/null || true)
if [ "$have" != "$want" ] || [ ! -x "$VENV_REAL/bin/python" ] \
   || ! "$VENV_REAL/bin/python" -c 'import sessionkeeper, pygls' >/dev/null 2>&1; then
  if [ -z "$have" ]; then why="new"; elif [ "$have" != "$want" ]; then why="pyproject.toml changed"; else why="import failed"; fi
  log "creating $VENV_REAL (pip install -e $REPO; $why)"
  rm -rf "$VENV_REAL"
  run venv-real "$PY" -m venv "$VENV_REAL"
  run venv-real "$VENV_REAL/bin/python" -m pip install -q --disable-pip-version-check -e "$REPO"
  "$VENV_REAL/bin/python" -c 'import sessionkeeper, pygls' || { rm -rf "$VENV_REAL"; exit 1; }
  echo "$want" > "$VENV_REAL/.pyproject.sha256"
  did=1
fi

if [ "$did" = 1 ]; then log "done"; else log "all present (code-server $CODE_SERVER_VERSION, chromium, playwright-core, venv-real)"; fi
