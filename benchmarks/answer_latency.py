"""Answer latency with the embedded model on the bundled demo KB: time to the first answer token, time to
the full cited answer, LLM calls - for several configurations in the same run (ratios, since the machine is
shared and noisy):
  router   the LLM router for every question, the full answer prompt (5 sources x 900 characters);
  shape    routing by shape (a plainly simple question skips the router), the full answer prompt;
  windows  routing by shape, and a simple question's prompt holds 4 sources x 450 characters (the default);
  compact  routing by shape, and a simple question's prompt holds the extractive ranker's best lines, each
           with its neighbours, within 1,000 characters (`KB_AGENT_SIMPLE_PROMPT=ranked`);
  narrow   as windows, 4 sources x 250 characters;
  small    as compact, with the 0.5B model (`kb-agent models install --model qwen2.5-coder-0.5b-instruct-q4_k_m`);
  quote    the default: a question whose best evidence line says its key terms is answered by quoting it
           (`KB_AGENT_QUOTE_FIRST=auto`, since stop 32), the rest with the configured prompt
           (`windows` unless KB_AGENT_SIMPLE_PROMPT says otherwise). The others never quote first.
  native   as windows, on llama.cpp compiled for this CPU (`scripts/setup.sh --native-llm`); every other
           configuration runs the prebuilt `xllamacpp` wheel, so the two compare in one run;
  native-compact  as compact, on the native build.
  native-quote    the default (quote), on the native build.
  native-quote4   as native-quote, with the windows prompt of 4 sources whatever the settings say.
  native-quote-ranked  as native-quote, with the ranked lines prompt whatever the settings say.

    python benchmarks/answer_latency.py [--questions 6] [--threads N] [--configs windows,compact]
    python benchmarks/answer_latency.py --set benchmarks/answer_sets/fastapi_docs_dev10.jsonl \
        --docs ../shared/data/fastapi_docs/docs --questions 20 --configs quote,native-quote

With `--set`, the questions are a question set's answerable ones (not chitchat, not unanswerable, not file
searches) over `--docs` instead of the demo's: the default configuration quotes many of them and writes the
rest with the model, and the table adds the first token of the answers the model wrote.

Needs the local model (`kb-agent models install`). Each configuration runs in its own process (the
model's prompt cache would otherwise replay the other configuration's identical synthesis prompts) and
answers the same questions once, after one warm-up question that loads the model.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
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


def _answer(engine, question: str) -> tuple:
    started = time.perf_counter()
    first = None
    answer = None
    for event in engine.stream(question, kbs=["demo"]):
        if event["type"] == "token" and first is None:
            first = time.perf_counter() - started
        elif event["type"] == "final":
            answer = event["answer"]
    total = time.perf_counter() - started
    return (
        (first if first is not None else total), total, answer.llm_calls, answer.refused, answer.tokens["prompt"],
        question, answer.answer, answer.tokens["completion"],
    )  # fmt: skip


FULL_PROMPT = {"simple_prompt": "windows", "simple_max_sources": 5, "simple_source_chars": 900}
# the model answers every question (the configurations before stop 32), on the prebuilt wheel unless named
MODEL = {"quote_first": "never", "local_runtime": "xllamacpp"}
NATIVE = {"quote_first": "never", "local_runtime": "native"}
CONFIGS = {
    "router": {"route_by_shape": False, **FULL_PROMPT, **MODEL},
    "shape": {"route_by_shape": True, **FULL_PROMPT, **MODEL},
    "windows": {"route_by_shape": True, "simple_prompt": "windows", **MODEL},
    "compact": {"route_by_shape": True, "simple_prompt": "ranked", **MODEL},
    "narrow": {"route_by_shape": True, "simple_prompt": "windows", "simple_source_chars": 250, **MODEL},
    "small": {"route_by_shape": True, "local_model": "qwen2.5-coder-0.5b-instruct-q4_k_m", **MODEL},
    # the default (the prompt KB_AGENT_SIMPLE_PROMPT names, `windows` unless set), on the wheel the quick start installs
    "quote": {"route_by_shape": True, "quote_first": "auto", "local_runtime": "xllamacpp"},
    "native": {"route_by_shape": True, "simple_prompt": "windows", **NATIVE},
    "native-compact": {"route_by_shape": True, "simple_prompt": "ranked", **NATIVE},
    "native-quote": {"route_by_shape": True, "quote_first": "auto", "local_runtime": "native"},
    # the windows prompt of four sources whatever the settings say (`native-quote` takes them)
    "native-quote4": {
        "route_by_shape": True,
        "simple_prompt": "windows",
        "simple_max_sources": 4,
        "quote_first": "auto",
        "local_runtime": "native",
    },
    # as native-quote4, and the model reads the ranker's best lines instead of the windows
    "native-quote-ranked": {
        "route_by_shape": True,
        "simple_prompt": "ranked",
        "quote_first": "auto",
        "local_runtime": "native",
    },
}
ASKED = ("exact", "conceptual", "zh", "cross_lingual")  # the types of a set that ask for an answer


def _questions(question_set: Path | None, n: int) -> list[str]:
    if question_set is None:
        return QUESTIONS[:n]
    rows = [json.loads(line) for line in question_set.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["question"] for r in rows if r.get("type") in ASKED][:n]


def _run_config(name: str, questions: list[str], threads: int | None, docs: Path | None) -> dict:
    from kb_agent.config import Settings
    from kb_agent.engine import Engine
    from kb_agent.llm.model_install import is_installed, local_model_file, spec_named

    real = Settings()  # the user's data folder: the installed model and the shared embedding cache
    real = real.model_copy(update={"local_model": CONFIGS[name].get("local_model", real.local_model)})
    spec = spec_named(real.local_model)
    local_model = local_model_file(real)
    if not (real.local_model_path or is_installed(real.models_folder, spec)):
        raise SystemExit(f"the local model is not installed: kb-agent models install --model {spec.name}")
    home = Path(tempfile.mkdtemp(prefix="kb-latency-"))
    update = {"data_folder": home, "local_model_path": local_model, "llm_provider": "local", **CONFIGS[name]}
    if threads:
        update["llm_threads"] = threads
    try:
        engine = Engine(real.model_copy(update=update), cache_folder=real.cache_folder)
        engine.index([docs or ROOT / "demo" / "fastapi-docs"], kb="demo")
        engine.embed("demo")
        _answer(engine, "What is FastAPI?")  # warm-up: model load
        results = [_answer(engine, q) for q in questions]
        engine.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {"results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: free cores)")
    parser.add_argument("--configs", default="windows,quote", help=f"comma-separated, of: {', '.join(CONFIGS)}")
    parser.add_argument("--set", type=Path, help="take the questions from this question set (JSONL)")
    parser.add_argument("--docs", type=Path, help="with --set: the folder its questions are about")
    parser.add_argument("--out", type=Path, help="folder to write each configuration's answers to (CONFIG.jsonl)")
    parser.add_argument("--one", choices=list(CONFIGS), help=argparse.SUPPRESS)  # a child process
    args = parser.parse_args()
    if args.set and not args.docs:
        raise SystemExit("--set needs --docs, the folder its questions are about")
    if args.one:
        questions = _questions(args.set, args.questions)
        print(json.dumps(_run_config(args.one, questions, args.threads, args.docs)))
        return
    rows = []
    for one in args.configs.split(","):
        if one not in CONFIGS:
            raise SystemExit(f"unknown configuration {one!r}; choose from {', '.join(CONFIGS)}")
        command = [sys.executable, __file__, "--one", one, "--questions", str(args.questions)]
        if args.threads:
            command += ["--threads", str(args.threads)]
        if args.set:
            command += ["--set", str(args.set), "--docs", str(args.docs)]
        child = subprocess.run(command, capture_output=True, text=True, check=True)
        results = json.loads(child.stdout.strip().splitlines()[-1])["results"]
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            keys = ("first_s", "total_s", "llm_calls", "refused", "prompt_tokens", "question", "answer", "completion")
            with (args.out / f"{one}.jsonl").open("w", encoding="utf-8") as f:
                f.writelines(json.dumps(dict(zip(keys, r, strict=True)), ensure_ascii=False) + "\n" for r in results)
        firsts, totals = [r[0] for r in results], [r[1] for r in results]
        written = [r[0] for r in results if r[2] > 0 and not r[3]]  # answers the model wrote
        rows.append((one, len(results), statistics.median(firsts), statistics.median(totals),
                     max(totals), statistics.fmean(r[2] for r in results), sum(r[3] for r in results),
                     statistics.median(r[4] for r in results), len(written),
                     statistics.median(written) if written else None))  # fmt: skip
    print(
        "| configuration | questions | first token p50 (s) | full answer p50 (s) | max (s) | LLM calls / q | refused"
        " | prompt tokens p50 | model-written | their first token p50 (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, n, first, total, worst, calls, refused, prompt, n_written, first_written in rows:
        written_p50 = "-" if first_written is None else f"{first_written:.1f}"
        print(f"| {label} | {n} | {first:.1f} | {total:.1f} | {worst:.1f} | {calls:.2f} | {refused} | {prompt:.0f} "
              f"| {n_written} | {written_p50} |")  # fmt: skip
    for row in rows[1:]:
        print(f"full answer p50 {row[0]} / {rows[0][0]}: {row[3] / rows[0][3]:.2f}x")


if __name__ == "__main__":
    main()
