"""How fast this machine's CPU runs the embedded model: prompt tokens read per second and tokens written per
second, for each installed model on each runtime, in the same run (ratios, since machines are noisy).

On a CPU the answer prompt's reading is most of what a user waits for before a model-written answer's first
sentence, and it depends on the CPU far more than on the code: the same 700-token prompt took 5-6 s on the
AVX-512 Xeon of the earlier stops and 17-18 s on an AVX2-only EPYC (docs/benchmarks.md, stop 65). Run this first
when `benchmarks/answer_latency.py` reports slow model-written answers.

    python benchmarks/llm_throughput.py [--threads N] [--runs 3] [--models NAME,…] [--runtimes native,xllamacpp]

Each (model, runtime) runs in its own process: it loads the model, answers one short warm-up request (which also
leaves the system prompt in the KV cache, as in the product), then `--runs` requests whose user message is a
different ~2,800-character window of the bundled demo knowledge base each time (no prefix beyond the system
prompt is reused). Reported: the new prompt tokens of a request (its prompt less the warm-up's), seconds to the
first streamed token, prompt tokens read per second, and tokens written per second after the first — medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tables import print_markdown_table

ROOT = Path(__file__).resolve().parents[1]
WINDOW = 2800  # characters of documentation in a request: about the default answer prompt's size
WRITE = 32  # tokens asked for after the first
RUNTIMES = ("native", "xllamacpp")  # KB_AGENT_LOCAL_RUNTIME's values other than auto


def _windows(runs: int) -> list[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "demo" / "fastapi-docs").rglob("*.md")))
    step = max(WINDOW, (len(text) - WINDOW) // max(1, runs))
    return [text[i * step : i * step + WINDOW] for i in range(runs)]


def _measure(model: str, runtime: str, threads: int | None, runs: int) -> dict:
    from kb_agent.agent.synthesize import SYSTEM
    from kb_agent.config import Settings, free_cores
    from kb_agent.llm.factory import build_llms

    cores = threads or free_cores()
    update = {"llm_provider": "local", "local_model": model, "local_model_path": None, "local_runtime": runtime}
    llm = build_llms(Settings().model_copy(update={**update, "llm_threads": cores})).main  # as the product loads it
    if llm is None:
        return {"error": f"not loaded: kb-agent models install --model {model}"}
    warm = llm.complete([{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Hi"}], max_tokens=1)
    rows = []
    for window in _windows(runs):
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{window}\n\nSummarise."}]
        started, first, pieces = time.perf_counter(), None, 0
        for _ in llm.stream(messages, max_tokens=WRITE + 1, temperature=0.0):
            first = first if first is not None else time.perf_counter() - started
            pieces += 1
        total = time.perf_counter() - started
        usage = llm.complete(messages, max_tokens=1).prompt_tokens  # the same prompt again: its size, from cache
        new = max(1, usage - warm.prompt_tokens)
        first = first if first is not None else total
        rows.append((new, first, new / first, (pieces - 1) / (total - first) if pieces > 1 and total > first else 0.0))
    return {"threads": cores, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: free cores)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--models", default="qwen2.5-coder-1.5b-instruct-q4_k_m,qwen2.5-coder-0.5b-instruct-q4_k_m")
    parser.add_argument("--runtimes", default="native,xllamacpp")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # "model:runtime", run in a child process
    args = parser.parse_args()
    runtimes = args.runtimes.split(",")
    if unknown := set(runtimes) - set(RUNTIMES):
        raise SystemExit(f"unknown runtime {sorted(unknown)[0]!r}; choose from {', '.join(RUNTIMES)}")
    if args.one:
        model, runtime = args.one.split(":")
        print(json.dumps(_measure(model, runtime, args.threads, args.runs)))
        return
    rows = []
    for model in args.models.split(","):
        for runtime in runtimes:
            command = [sys.executable, __file__, "--one", f"{model}:{runtime}", "--runs", str(args.runs)]
            if args.threads:
                command += ["--threads", str(args.threads)]
            proc = subprocess.run(command, capture_output=True, text=True, check=False)
            try:
                result = json.loads(proc.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                result = {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:120]}
            row = {"model": model, "runtime": runtime, "threads": result.get("threads", "")}
            if "error" in result:
                rows.append({**row, "new prompt tokens": result["error"], "first token (s)": "", "read (tokens/s)": "",
                             "write (tokens/s)": ""})  # fmt: skip
                continue
            new, first, read, write = (statistics.median(c) for c in zip(*result["rows"], strict=True))
            rows.append({**row, "new prompt tokens": f"{new:.0f}", "first token (s)": f"{first:.1f}",
                         "read (tokens/s)": f"{read:.0f}", "write (tokens/s)": f"{write:.1f}"})  # fmt: skip
    print_markdown_table(rows)


if __name__ == "__main__":
    main()
