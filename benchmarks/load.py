"""Load benchmark: N concurrent streaming clients against `kb-agent serve` for a bounded time.

    python benchmarks/load.py [--clients 50] [--seconds 30] [--max-in-flight N]

A real uvicorn server over the bundled demo knowledge base, with a scripted model (fixed replies, a
fixed 50 ms "generation" delay per call) so the numbers measure the server, graph, retrieval and
streaming - not a model. Each client posts to /v1/query/stream in a loop and records the time to the
first answer token and to the final event. Prints p50/p95 and errors (must be 0), plus a single-client
baseline from the same run. Each client has its own API key. With `--max-in-flight N` (below the number
of clients) the server sheds the overload: those replies are 503/429 with Retry-After, counted as "shed"
(the client waits Retry-After and tries again), not as errors."""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from kb_agent.config import Settings
from kb_agent.engine import Engine
from kb_agent.interfaces.auth import Authenticator
from kb_agent.interfaces.server import create_app
from kb_agent.llm.scripted import ScriptedLLM

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "How do I declare a request body?",
    "How do I return an HTTP error?",
    "What are path parameters?",
    "How do background tasks work?",
    "How do I declare query parameters?",
]


def _reply(messages):
    system = messages[0]["content"]
    if "You route questions" in system:
        return json.dumps(
            {
                "query_type": "conceptual",
                "complexity": "simple",
                "sub_questions": [],
                "suggested_tools": [],
                "grep_keywords": [],
            }
        )
    return "Declare a Pydantic model and use it as a parameter [1]. FastAPI reads the JSON body into it [1]."


def _start(engine: Engine, keys: Path, max_in_flight: int | None) -> tuple[uvicorn.Server, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(engine, Authenticator(keys, None), max_in_flight=max_in_flight),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            limit_concurrency=1000,
        )
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


async def _client(url: str, deadline: float, n: int, results: list, errors: list, shed: list) -> None:
    async with httpx.AsyncClient(timeout=120, headers={"Authorization": f"Bearer bench-key-{n}"}) as http:
        i = n
        while time.perf_counter() < deadline:
            question = QUESTIONS[i % len(QUESTIONS)]
            i += 1
            started, first = time.perf_counter(), None
            try:
                async with http.stream("POST", f"{url}/v1/query/stream", json={"question": question}) as response:
                    if response.status_code in (429, 503) and "retry-after" in response.headers:
                        shed.append(response.status_code)
                        await asyncio.sleep(float(response.headers["retry-after"]))
                        continue
                    if response.status_code != 200:
                        errors.append(f"HTTP {response.status_code}")
                        continue
                    event = None
                    async for line in response.aiter_lines():
                        if line.startswith("event: "):
                            event = line[7:]
                            if event == "token" and first is None:
                                first = time.perf_counter() - started
                            elif event == "error":
                                errors.append("error event")
                    if event != "final":
                        errors.append(f"stream ended with {event!r}")
                        continue
                results.append(
                    (first if first is not None else time.perf_counter() - started, time.perf_counter() - started)
                )
            except httpx.HTTPError as exc:
                errors.append(type(exc).__name__)


async def _run(url: str, clients: int, seconds: float) -> tuple[list, list, list, float]:
    results: list = []
    errors: list = []
    shed: list = []
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(*(_client(url, deadline, n, results, errors, shed) for n in range(clients)))
    return results, errors, shed, time.perf_counter() - started


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--max-in-flight", type=int, default=None, help="load-shedding limit (default: settings)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="kb-agent-load-"))
    keys = "".join(f"  - {{key: bench-key-{n}, user: bench{n}}}\n" for n in range(args.clients))
    (folder / "keys.yaml").write_text("keys:\n" + keys)
    settings = Settings(data_folder=folder / "data", _env_file=None, llm_provider="none")
    engine = Engine(settings, llm=ScriptedLLM(_reply, delay_s=0.05))
    engine.index([ROOT / "demo" / "fastapi-docs"])  # BM25 at once; dense is off (no vectors) for a pure server test
    server, url = _start(engine, folder / "keys.yaml", args.max_in_flight)
    rows = []
    for clients, seconds in ((1, min(10.0, args.seconds)), (args.clients, args.seconds)):
        results, errors, shed, wall = asyncio.run(_run(url, clients, seconds))
        firsts, totals = [r[0] for r in results], [r[1] for r in results]
        rows.append(
            (
                clients,
                len(results),
                len(errors),
                len(shed),
                len(results) / wall,
                _pct(firsts, 0.5),
                _pct(firsts, 0.95),
                _pct(totals, 0.5),
                _pct(totals, 0.95),
                statistics.fmean(totals) * 1000,
            )
        )
        if errors:
            print(f"errors with {clients} clients: {sorted(set(errors))[:5]}")
    server.should_exit = True
    engine.close()
    print(
        f"{'clients':>7} {'answers':>7} {'errors':>6} {'shed':>6} {'ans/s':>6} {'first p50':>9} {'first p95':>9} "
        f"{'total p50':>9} {'total p95':>9}  (ms)"
    )
    for row in rows:
        print(
            f"{row[0]:>7} {row[1]:>7} {row[2]:>6} {row[3]:>6} {row[4]:>6.1f} {row[5]:>9.0f} {row[6]:>9.0f} "
            f"{row[7]:>9.0f} {row[8]:>9.0f}"
        )
    base, loaded = rows
    print(f"p50 total latency under load / single client: {loaded[7] / base[7]:.1f}x")


if __name__ == "__main__":
    main()
