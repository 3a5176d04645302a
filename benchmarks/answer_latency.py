"""Answer latency with the embedded model on the bundled demo KB: time to the first answer token, time to
the full cited answer, LLM calls - with routing by shape on and off in the same run (ratios, since the
machine is shared and noisy).

    python benchmarks/answer_latency.py [--questions 6] [--threads N]

Needs the local model (`kb-agent models install`). Each configuration answers the same questions once,
after one warm-up question that loads the model and fills the prompt cache.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [  # plainly simple first questions whose answers are in the demo KB (en and zh)
    "How do I declare a request body?",
    "How do I return an HTTP error?",
    "How do I enable CORS?",
    "How do I run a background task?",
    "What is a path parameter?",
    "如何声明查询参数？",
    "How do I declare optional query parameters?",
    "What does HTTPException do?",
]


def _answer(engine, question: str) -> tuple[float, float, int, bool]:
    started = time.perf_counter()
    first = None
    answer = None
    for event in engine.stream(question, kbs=["demo"]):
        if event["type"] == "token" and first is None:
            first = time.perf_counter() - started
        elif event["type"] == "final":
            answer = event["answer"]
    total = time.perf_counter() - started
    return (first if first is not None else total), total, answer.llm_calls, answer.refused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: free cores)")
    args = parser.parse_args()
    from kb_agent.config import Settings
    from kb_agent.engine import Engine
    from kb_agent.llm.model_install import is_installed, model_path

    real = Settings()  # the user's data folder: the installed model and the shared embedding cache
    local_model = real.local_model_path or model_path(real.models_folder)
    if not (real.local_model_path or is_installed(real.models_folder)):
        raise SystemExit("the local model is not installed: kb-agent models install")
    home = Path(tempfile.mkdtemp(prefix="kb-latency-"))
    base = real.model_copy(update={"data_folder": home, "local_model_path": local_model, "llm_provider": "local"})
    update: dict = {"llm_threads": args.threads} if args.threads else {}
    rows = []
    try:
        for label, by_shape in (("router always (before)", False), ("route by shape (now)", True)):
            settings = base.model_copy(update={**update, "route_by_shape": by_shape})
            engine = Engine(settings, cache_folder=real.cache_folder)
            engine.index([ROOT / "demo" / "fastapi-docs"], kb="demo")
            engine.embed("demo")
            _answer(engine, "What is FastAPI?")  # warm-up: model load, prompt cache
            results = [_answer(engine, q) for q in QUESTIONS[: args.questions]]
            engine.close()
            firsts, totals = [r[0] for r in results], [r[1] for r in results]
            rows.append((label, len(results), statistics.median(firsts), statistics.median(totals),
                         max(totals), statistics.fmean(r[2] for r in results), sum(r[3] for r in results)))  # fmt: skip
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(
        "| configuration | questions | first token p50 (s) | full answer p50 (s) | max (s) | LLM calls / q | refused |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, n, first, total, worst, calls, refused in rows:
        print(f"| {label} | {n} | {first:.1f} | {total:.1f} | {worst:.1f} | {calls:.2f} | {refused} |")
    before, now = rows
    print(f"full answer p50 now / before: {now[3] / before[3]:.2f}x")


if __name__ == "__main__":
    main()
