#!/usr/bin/env bash
# install.sh AGENT [VERSION] — install a real agent CLI from npm into a cache outside the checkout
# and print the path of its executable.
#
#   AGENT    codex | claude | openclaw (from npm; OpenClaw needs Node >= 24.16: the npm package
#            `node`, pinned below, is installed beside it and the executable printed is a
#            wrapper that runs OpenClaw with that Node) | hermes (Hermes Agent, from PyPI, in its
#            own virtualenv: its dependencies never touch the project's)
#   VERSION  a version, or "latest" (resolved with `npm view` / `pip index versions`); default: the
#            pinned one below, or $SK_CODEX_VERSION / $SK_CLAUDE_VERSION / $SK_OPENCLAW_VERSION /
#            $SK_HERMES_VERSION.
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/sessionkeeper-agents/<agent>-<version>/ (reused between runs;
# a broken install is removed and redone). Every network step has a timeout. The npm registry is
# the only thing reached.
set -euo pipefail

CODEX_PINNED=0.171.0
CLAUDE_PINNED=2.1.332
OPENCLAW_PINNED=2026.9.6
HERMES_PINNED=0.19.0
OPENCLAW_NODE=24.21.0

agent=${1:?usage: install.sh codex|claude|openclaw|hermes [VERSION|latest]}
case $agent in
  codex)  pkg=@openai/codex;             bin=codex;  version=${2:-${SK_CODEX_VERSION:-$CODEX_PINNED}} ;;
  claude) pkg=@anthropic-ai/claude-code; bin=claude; version=${2:-${SK_CLAUDE_VERSION:-$CLAUDE_PINNED}} ;;
  openclaw) pkg=openclaw;                bin=openclaw; version=${2:-${SK_OPENCLAW_VERSION:-$OPENCLAW_PINNED}} ;;
  hermes) pkg=hermes-agent;              bin=hermes; version=${2:-${SK_HERMES_VERSION:-$HERMES_PINNED}} ;;
  *) echo "install.sh: unknown agent '$agent' (codex, claude, openclaw or hermes)" >&2; exit 2 ;;
esac
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sessionkeeper-agents

if [ "$agent" = hermes ]; then
  # a virtualenv is not relocatable (its scripts name its path): built in place, marked when whole
  if [ "$version" = latest ]; then
    version=$(timeout 120 python3 -m pip index versions "$pkg" 2>/dev/null |
              sed -n "s/^$pkg (\(.*\))$/\1/p") && [ -n "$version" ] ||
      { echo "install.sh: pip index versions $pkg failed" >&2; exit 1; }
  fi
  dir=$cache/$agent-$version
  exe=$dir/venv/bin/$bin
  # `hermes --version` writes logs/ and an update-check cache into its home: give it a scratch one
  works() { [ -f "$dir/.installed" ] && [ -x "$exe" ] &&
            HOME="$dir/probe" HERMES_HOME="$dir/probe/.hermes" timeout 120 "$exe" --version >/dev/null 2>&1; }
  if ! works; then
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "install.sh: pip install $pkg==$version into $dir/venv" >&2
    if ! { timeout 120 python3 -m venv "$dir/venv" >&2 &&
           timeout 1200 "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
             --timeout 60 "$pkg==$version" >&2; }; then
      rm -rf "$dir"
      echo "install.sh: pip install $pkg==$version failed" >&2
      exit 1
    fi
    touch "$dir/.installed"
    works || { echo "install.sh: $exe does not run after install" >&2; exit 1; }
  fi
  echo "$exe"
  exit 0
fi

if [ "$version" = latest ]; then
  version=$(timeout 120 npm view "$pkg@latest" version 2>/dev/null) ||
    { echo "install.sh: npm view $pkg@latest failed" >&2; exit 1; }
fi
dir=$cache/$agent-$version
exe=$dir/node_modules/.bin/$bin

works() { [ -x "$exe" ] && timeout 60 "$exe" --version >/dev/null 2>&1; }

if [ "$agent" = openclaw ]; then  # its engines need a newer Node than the machine's: npm's `node`
  node_dir=$cache/node-$OPENCLAW_NODE
  node_exe=$node_dir/node_modules/node/bin/node
  if ! [ -x "$node_exe" ] || ! timeout 60 "$node_exe" --version >/dev/null 2>&1; then
    rm -rf "$node_dir.tmp" && mkdir -p "$node_dir.tmp"
    echo "install.sh: npm install node@$OPENCLAW_NODE into $node_dir" >&2
    (cd "$node_dir.tmp" && echo '{"private":true}' > package.json &&
     timeout 600 npm install --no-audit --no-fund --loglevel=error "node@$OPENCLAW_NODE" >&2) ||
      { rm -rf "$node_dir.tmp"; echo "install.sh: npm install node@$OPENCLAW_NODE failed" >&2; exit 1; }
    rm -rf "$node_dir" && mv "$node_dir.tmp" "$node_dir"
  fi
  export PATH="$node_dir/node_modules/node/bin:$PATH"  # npm runs OpenClaw's install scripts with it
  exe=$dir/bin/openclaw
fi

if ! works; then
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  echo "install.sh: npm install $pkg@$version into $dir" >&2
  # an explicit version: without it npm on node 20 picks the newest release whose engines fit
  if ! (cd "$dir.tmp" && echo '{"private":true}' > package.json &&
        timeout 900 npm install --no-audit --no-fund --loglevel=error "$pkg@$version" >&2); then
    rm -rf "$dir.tmp"
    echo "install.sh: npm install $pkg@$version failed" >&2
    exit 1
  fi
  if [ "$agent" = openclaw ]; then  # a wrapper: OpenClaw under the Node installed for it
    mkdir -p "$dir.tmp/bin"
    printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$node_exe" "$dir/node_modules/openclaw/openclaw.mjs" \
      > "$dir.tmp/bin/openclaw"
    chmod +x "$dir.tmp/bin/openclaw"
  fi
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
  works || { echo "install.sh: $exe does not run after install" >&2; exit 1; }
fi
echo "$exe"
