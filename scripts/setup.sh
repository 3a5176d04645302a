#!/usr/bin/env bash
# Creates .venv with kb-agent installed (add --dev for the test tools) and makes sure ripgrep exists.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="[all]"   # server, tui, mcp, local-llm: everything the README's commands use
[ "${1:-}" = "--dev" ] && extras="[all,dev]"
if ! command -v rg >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ripgrep (Debian package) for grep_search..."
    apt-get update -qq >/dev/null && apt-get install -y -qq ripgrep >/dev/null
  else
    echo "warning: ripgrep (rg) not found; grep search will be unavailable. Install it with your package manager." >&2
  fi
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".${extras}"
echo "kb-agent installed in .venv (activate with: source .venv/bin/activate)"
