"""LLM calls per question path: kb-agent's graph vs the original kb-agent's documented counts.

    python benchmarks/agent_calls.py

Runs the real graph over the bundled demo knowledge base with a scripted model that answers every
role sensibly (route, plan, grade, synthesize), so the count is a property of the graph, not of a
model's mood. The original's counts are from its architecture document (seed 002: fixed 4 calls in
the best case, 7 with one REFINE, 8 with a RE_RETRIEVE, 12 at the iteration cap).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from kb_agent.config import Settings
from kb_agent.engine import Engine
from kb_agent.llm.scripted import ScriptedLLM

ROOT = Path(__file__).resolve().parents[1]
ORIGINAL = {
    "chitchat": 4,
    "exact (rule)": 4,
    "simple": 4,
    "complex, first-pass GENERATE": 4,
    "complex, one REFINE": 7,
    "complex, one RE_RETRIEVE": 8,
    "iteration cap": 12,
}


def scripted(complexity: str, grades: list[float]):
    grades = list(grades)

    def reply(messages):
        system = messages[0]["content"]
        if "You route questions" in system:
            return json.dumps(
                {
                    "query_type": "conceptual",
                    "complexity": complexity,
                    "sub_questions": [],
                    "suggested_tools": [],
                    "grep_keywords": [],
                }
            )
        if "You plan searches" in system:
            return json.dumps({"queries": [f"query {len(messages)}"], "calls": []})
        if "You grade evidence" in system:
            n = max(1, messages[-1]["content"].count("] ("))
            score = grades.pop(0) if len(grades) > 1 else grades[0]
            return json.dumps({"scores": [score] * n})
        if "friendly assistant" in system:
            return "Hello!"
        return "Declare a Pydantic model [1]."

    return reply


def main() -> None:
    cases = [
        ("chitchat", "hello!", "simple", [0.9]),
        ("exact (rule)", "What does `HTTPException` do?", "simple", [0.9]),
        ("simple", "How do I declare a request body?", "simple", [0.9]),
        ("complex, first-pass GENERATE", "Compare request bodies and query parameters", "complex", [0.9]),
        ("complex, one REFINE", "Compare request bodies and query parameters", "complex", [0.5, 0.9]),
        ("complex, one RE_RETRIEVE", "Compare request bodies and query parameters", "complex", [0.1, 0.9]),
        ("iteration cap", "Compare request bodies and query parameters", "complex", [0.5]),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_folder=Path(tmp), _env_file=None, auto_approve_max_items=0)
        Engine(settings, llm=ScriptedLLM(["x"])).index([ROOT / "demo" / "fastapi-docs"], kb="demo")
        print(f"{'path':<32}{'kb-agent':>10}{'original':>10}")
        for name, question, complexity, grades in cases:
            engine = Engine(settings, llm=ScriptedLLM(scripted(complexity, grades)))
            answer = engine.answer_query(question, kbs=["demo"])
            print(f"{name:<32}{answer.llm_calls:>10}{ORIGINAL[name]:>10}")
            engine.close()


if __name__ == "__main__":
    sys.exit(main())
