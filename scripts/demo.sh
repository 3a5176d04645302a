#!/usr/bin/env bash
# The quick start: install, index the bundled demo knowledge base (FastAPI docs sample, en + zh),
# then search it with citations. No API key and no network beyond the package registry.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
kb=".venv/bin/kb-agent"
$kb index demo/fastapi-docs --kb demo
$kb search "How do I declare a request body?" --kb demo --k 3
$kb search "如何处理错误并返回 404？" --kb demo --k 3
