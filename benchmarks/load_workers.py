"""Load benchmark across store backends and server processes: `kb-agent serve [--workers N]` as real
subprocesses over the bundled demo knowledge base, answering /v1/query without a model (extractive
answers: the numbers measure server, agent graph, retrieval and store, not generation).

    python benchmarks/load_workers.py [--clients 8] [--seconds 20] [--workers 1,4] [--endpoint query|search]

Runs, in one go: the embedded store (one process, as it must) and PostgreSQL + pgvector with each
`--workers` count. The demo KB is indexed once into each store (vectors copied by `kb-agent migrate`).
Prints answers/s, p50/p95 latency and errors (must be 0) per configuration. Without
KB_AGENT_DATABASE_URL a throw-away embedded PostgreSQL is started in a temp folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from load import QUESTIONS  # the same questions as the in-process load benchmark
from tables import print_markdown_table

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "kb_agent.interfaces.cli"]


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _drive(url: str, clients: int, seconds: float, endpoint: str) -> dict:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def client(index: int) -> None:
        nonlocal errors
        async with httpx.AsyncClient(timeout=120) as http:
            i = index
            while time.perf_counter() < deadline:
                question = QUESTIONS[i % len(QUESTIONS)]
                i += 1
                started = time.perf_counter()
                try:
                    if endpoint == "search":
                        response = await http.post(f"{url}/v1/search", json={"query": question, "k": 10})
                        ok = response.status_code == 200 and bool(response.json().get("results"))
                    else:
                        response = await http.post(f"{url}/v1/query", json={"question": question})
                        ok = response.status_code == 200 and bool(response.json().get("citations"))
                except httpx.HTTPError:
                    ok = False
                if ok:
                    latencies.append(time.perf_counter() - started)
                else:
                    errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies) or [0.0]
    return {
        "replies": len(latencies),
        "per_s": round(len(latencies) / elapsed, 2),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 1),
        "errors": errors,
    }


def _serve(env: dict, workers: int, clients: int, seconds: float, endpoint: str) -> dict:
    port = _port()
    server = subprocess.Popen(
        [*CLI, "serve", "--no-auth", "--port", str(port), "--workers", str(workers)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        for question in QUESTIONS:  # warm every worker's models and caches a little
            httpx.post(f"{url}/v1/query", json={"question": question}, timeout=120)
        return asyncio.run(_drive(url, clients, seconds, endpoint))
    finally:
        server.terminate()
        server.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--workers", default="1,4")
    parser.add_argument(
        "--endpoint", choices=("query", "search"), default="query", help="answers, or hybrid search only"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kb-agent-load-"))
    os.chmod(work, 0o711)
    base = {
        **os.environ, "KB_AGENT_DATA_FOLDER": str(work / "data"), "KB_AGENT_LLM_PROVIDER": "none",
        "KB_AGENT_DEFAULT_KB": "demo", "KB_AGENT_SERVER_MAX_PER_CLIENT": "256", "KB_AGENT_SERVER_MAX_IN_FLIGHT": "256",
    }  # fmt: skip
    cache = Path(os.environ.get("KB_AGENT_DATA_FOLDER", "~/.kb-agent")).expanduser() / "cache"
    if cache.exists():  # vectors of the demo computed before are not computed again
        shutil.copytree(cache, work / "data" / "cache")
    started_pg = False
    rows = []
    try:
        subprocess.run([*CLI, "index", str(ROOT / "demo" / "fastapi-docs")], env=base, check=True, capture_output=True)
        if "KB_AGENT_DATABASE_URL" not in base:
            subprocess.run([*CLI, "db", "start"], env=base, check=True, capture_output=True)
            started_pg = True
        subprocess.run([*CLI, "migrate", "--to", "postgres", "--replace"], env=base, check=True, capture_output=True)
        rows.append({"store": "embedded", "workers": 1, **_serve(base, 1, args.clients, args.seconds, args.endpoint)})
        print(rows[-1], flush=True)
        for workers in (int(w) for w in args.workers.split(",")):
            env = {**base, "KB_AGENT_STORE": "postgres"}
            rows.append(
                {
                    "store": "postgres",
                    "workers": workers,
                    **_serve(env, workers, args.clients, args.seconds, args.endpoint),
                }
            )
            print(rows[-1], flush=True)
    finally:
        if started_pg:
            subprocess.run([*CLI, "db", "stop"], env=base, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print_markdown_table(rows)
    print(f"/v1/{args.endpoint}: {args.clients} clients, {args.seconds:.0f} s each; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
