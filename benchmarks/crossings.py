"""How many calls cross between kb_agent's packages for one `ask` and one `index` of the demo KB.

A crossing is a Python call whose caller and callee live in different top-level parts of `kb_agent`
(`agent`, `governance`, `store`, ..., with `engine.py` a part of its own). Calls into the leaf utilities
(`text`: tokenizers, `config`: settings) are left out: every layer may use them and they hand nothing off.
"edges" counts distinct caller→callee function pairs: the hand-offs a reader has to follow.
Run it before and after a refactor:

    python benchmarks/crossings.py [--top 8]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = str(ROOT / "src" / "kb_agent") + os.sep
UTILITIES = {"text", "config"}
DEMO = ROOT / "demo" / "fastapi-docs"


def _part(filename: str) -> str | None:
    if not filename.startswith(PKG):
        return None
    rel = filename[len(PKG) :]
    head = rel.split(os.sep, 1)[0]
    return head[:-3] if head.endswith(".py") else head


def _where(code) -> str:
    return f"{code.co_filename[len(PKG) :]}:{code.co_qualname}"


class CrossingCounter:
    """A `sys.setprofile` hook: counts python calls from one part of the package into another."""

    def __init__(self) -> None:
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.files: set[str] = set()
        self.edges: set[tuple[str, str]] = set()

    def __call__(self, frame, event, arg):
        if event != "call" or frame.f_back is None:
            return
        callee = _part(frame.f_code.co_filename)
        if callee is None:
            return
        caller = _part(frame.f_back.f_code.co_filename)
        if caller is None or caller == callee or callee in UTILITIES:
            return
        self.pairs[tuple(sorted((caller, callee)))] += 1
        self.edges.add((_where(frame.f_back.f_code), _where(frame.f_code)))
        self.files.add(frame.f_code.co_filename)
        self.files.add(frame.f_back.f_code.co_filename)

    def measure(self, fn) -> None:
        sys.setprofile(self)
        try:
            fn()
        finally:
            sys.setprofile(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=6, help="how many package pairs to list")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="kb-crossings-"))
    os.environ.update({"KB_AGENT_DATA_FOLDER": str(home), "KB_AGENT_LLM_PROVIDER": "none", "HF_HUB_OFFLINE": "1"})
    try:
        from kb_agent.config import Settings
        from kb_agent.engine import Engine

        engine = Engine(Settings())
        docs = home / "fastapi-docs"
        shutil.copytree(DEMO, docs)
        # one warm-up run of each so import-time and first-call caches are not counted
        engine.index([docs], kb="warm")
        engine.answer_query("How do I declare a request body?", kbs=["warm"])
        rows = []
        for name, job in (
            ("index (demo, no embedding)", lambda: engine.index([docs], kb="demo")),
            (
                "ask (simple question, no model)",
                lambda: engine.answer_query("How do I declare a request body?", kbs=["demo"]),
            ),
        ):
            counter = CrossingCounter()
            counter.measure(job)
            rows.append((name, counter))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("| run | crossings | edges | files | top pairs |")
    print("|---|---:|---:|---:|---|")
    for name, counter in rows:
        top = ", ".join(f"{a}↔{b} {n}" for (a, b), n in counter.pairs.most_common(args.top))
        print(f"| {name} | {sum(counter.pairs.values())} | {len(counter.edges)} | {len(counter.files)} | {top} |")


if __name__ == "__main__":
    main()
