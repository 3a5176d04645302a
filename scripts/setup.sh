#!/usr/bin/env bash
# Creates .venv with kb-agent installed and makes sure ripgrep exists.
#   --dev         also the test tools
#   --native-llm  also llama.cpp compiled for this CPU (llama-cpp-python from its PyPI source, about 8 minutes
#                 on 2 cores): the embedded model reads prompts about twice as fast as with the prebuilt AVX2 wheel
#                 on a CPU with AVX-512 (docs/benchmarks.md, stop 34); KB_AGENT_LOCAL_RUNTIME=auto then uses it
set -euo pipefail
cd "$(dirname "$0")/.."
extras="[all]"   # server, tui, mcp, local-llm: everything the README's commands use
native=0
for arg in "$@"; do
  case "$arg" in
    --dev) extras="[all,dev]" ;;
    --native-llm) native=1 ;;
    *) echo "unknown option: $arg (known: --dev, --native-llm)" >&2; exit 2 ;;
  esac
done
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
if [ "$native" = 1 ]; then
  echo "building llama.cpp for this CPU (llama-cpp-python from source, about 8 minutes on 2 cores)..."
  flags=""
  # this release's AMX weight repacking crashes on the bundled Q4_K_M model: AVX-512 yes, AMX no
  [ "$(uname -m)" = "x86_64" ] && flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF" \
    CFLAGS="$flags" CXXFLAGS="$flags" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    .venv/bin/python -m pip install -q --no-binary llama-cpp-python "llama-cpp-python==0.3.36"
  .venv/bin/python -c "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
fi
echo "kb-agent installed in .venv (activate with: source .venv/bin/activate)"
