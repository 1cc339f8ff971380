"""Ingest benchmark of rs-fem: a real `featurehub serve` (uvicorn) on 127.0.0.1, on a temporary
SQLite database and, when reachable, on a fresh PostgreSQL database.

For each backend, as a data producer (a user with the EXPLOIT role): 200 one-feature POSTs one
after the other (latency p50/p99), then 10,000 features shaped like the README's sample
(polygon, a dozen properties, one referenced file) in POSTs of 1,000, waiting until every
request is SUCCESS. Prints one JSON document per backend, with `machine_reference_ms`: how fast
this machine ran plain Python just before (the figures of two machines, or of two runs on a
shared one, compare only beside it).

    python benchmarks/ingest.py [--features 10000] [--per-request 1000] [--backend sqlite]
                                [--workers N]   # extra `featurehub worker` processes (PostgreSQL)
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.backends import postgres_database, postgres_unavailable_reason  # noqa: E402

BIN = Path(sys.executable).parent / "featurehub"
PASSWORD = "bench-password"
PRODUCER = "producer@featurehub.local"
MODEL = json.loads((ROOT / "examples" / "models" / "sample_product.json").read_text())
SAMPLE = json.loads((ROOT / "examples" / "sample-collection.json").read_text())["features"][0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Client:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers: dict[str, str] = {}

    def call(self, method: str, path: str, body: bytes | None = None,
             content_type: str = "application/json") -> tuple[int, bytes]:
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = content_type
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        return response.status, response.read()


@contextmanager
def served(database_url: str, workers: int, workdir: Path):
    port = free_port()
    env = {**os.environ, "FEATUREHUB_DATABASE_URL": database_url,
           "FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD": PASSWORD, "FEATUREHUB_LOAD_TOPONYMS": "false",
           "FEATUREHUB_EMBEDDED_WORKER": "true" if workers == 0 else "false"}
    log = (workdir / f"serve-{port}.log").open("w")
    processes = [subprocess.Popen([str(BIN), "serve", "--port", str(port), "--log-level",
                                   "warning"], env=env, stdout=log, stderr=subprocess.STDOUT)]
    try:
        client = Client(port)
        deadline = time.monotonic() + 60
        while True:
            try:
                if client.call("GET", "/rs-fem/api/v1/openapi.json")[0] == 200:
                    break
            except OSError:
                client = Client(port)
            if time.monotonic() > deadline or processes[0].poll() is not None:
                raise RuntimeError(f"the server did not start; see {log.name}")
            time.sleep(0.2)
        for _ in range(workers):
            processes.append(subprocess.Popen([str(BIN), "worker"], env=env, stdout=log,
                                              stderr=subprocess.STDOUT))
        yield port, processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def feature(number: int) -> dict:
    item = copy.deepcopy(SAMPLE)
    item["id"] = f"bench-{number:06d}"
    x, y = (number % 3600) / 10 - 180, (number // 3600) % 170 - 85
    item["geometry"]["coordinates"] = [[[x, y], [x + 0.1, y], [x + 0.1, y + 0.1], [x, y + 0.1],
                                        [x, y]]]
    item["properties"]["orbit"] = number
    item["files"][0]["attributes"]["checksum"] = f"{number:032x}"
    return item


def collection(features: list[dict], session: str) -> bytes:
    return json.dumps({"type": "FeatureCollection", "requestOwner": "bench", "metadata": {
        "priority": "NORMAL", "session": session, "sessionOwner": "bench", "storages": []},
        "features": features}).encode()


def successes(client: Client, session: str) -> int:
    status, body = client.call("POST", "/rs-fem/api/v1/requests/search/CREATION?size=1",
                               json.dumps({"session": session, "states": ["SUCCESS"]}).encode())
    assert status == 200, body
    return json.loads(body)["page"]["totalElements"]


def machine_reference_ms() -> dict:
    """How fast this machine runs Python right now, to compare figures across machines (and
    across runs on a shared one): a fixed pure-Python loop and the parse of one 1,000-feature
    body, best of 5 each."""
    body = collection([feature(n) for n in range(1000)], "reference")

    def best(work) -> float:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
        return round(min(times) * 1000, 1)

    def python_loop() -> None:
        total = 0
        for number in range(1_000_000):
            total += number

    return {"python_loop_1m": best(python_loop),
            "json_parse_1000_features": best(lambda: json.loads(body))}


def login(client: Client, email: str) -> str:
    status, body = client.call("POST", "/rs-authentication/api/v1/oauth/token", (
        urllib.parse.urlencode({"grant_type": "password", "username": email,
                                "password": PASSWORD, "scope": "demo"}).encode()),
        "application/x-www-form-urlencoded")
    assert status == 200, body
    return f"Bearer {json.loads(body)['access_token']}"


def run(backend: str, database_url: str, args: argparse.Namespace, workdir: Path) -> dict:
    reference = machine_reference_ms()
    with served(database_url, args.workers, workdir) as (port, processes):
        client = Client(port)
        client.headers["Authorization"] = login(client, "admin@featurehub.local")
        status, body = client.call("PUT", "/rs-fem/api/v1/models/sample_product",
                                   json.dumps(MODEL).encode())
        assert status == 200, body
        # Features are posted as a data producer does: a user of the project with the EXPLOIT
        # role (its rights are checked at every request, as the instance administrator's are
        # not).
        status, body = client.call("POST", "/rs-admin/api/v1/users", json.dumps({
            "email": PRODUCER, "password": PASSWORD, "roleName": "EXPLOIT"}).encode())
        assert status == 201, body
        client.headers["Authorization"] = login(client, PRODUCER)

        # Latency of one-feature POSTs (after a short warm-up).
        latencies = []
        for number in range(220):
            payload = collection([feature(900_000 + number)], "latency")
            started = time.perf_counter()
            status, body = client.call("POST", "/rs-fem/api/v1/features", payload)
            elapsed = time.perf_counter() - started
            assert status == 201 and b'"denied":{}' in body.replace(b" ", b""), body
            if number >= 20:
                latencies.append(elapsed * 1000)
        deadline = time.monotonic() + 120
        while successes(client, "latency") < 220 and time.monotonic() < deadline:
            time.sleep(0.1)

        # Bulk ingest.
        payloads = [collection([feature(n) for n in range(start, min(start + args.per_request,
                                                                       args.features))], "bulk")
                    for start in range(0, args.features, args.per_request)]
        accepting = 0.0
        started = time.perf_counter()
        for payload in payloads:
            before = time.perf_counter()
            status, body = client.call("POST", "/rs-fem/api/v1/features", payload)
            accepting += time.perf_counter() - before
            assert status == 201, body
            assert json.loads(body)["denied"] == {}, body[:500]
        accepted_at = time.perf_counter() - started
        deadline = time.monotonic() + 600
        while (done := successes(client, "bulk")) < args.features:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {done} of {args.features} features processed")
            time.sleep(0.05)
        total = time.perf_counter() - started
        latencies.sort()
        return {
            "backend": backend,
            "features": args.features,
            "features_per_request": args.per_request,
            "worker_processes": args.workers or "embedded",
            "accepted_features_per_s": round(args.features / accepting),
            "all_accepted_after_s": round(accepted_at, 2),
            "end_to_end_features_per_s": round(args.features / total),
            "end_to_end_s": round(total, 2),
            "post_1_feature_ms": {"p50": round(statistics.median(latencies), 2),
                                  "p99": round(latencies[int(len(latencies) * 0.99) - 1], 2)},
            "peak_rss_mb": {"server": peak_rss_mb(processes[0].pid),
                            "embedded_workers": [peak_rss_mb(child)
                                                 for child in children(processes[0].pid)],
                            **({"workers": [peak_rss_mb(p.pid) for p in processes[1:]]}
                               if processes[1:] else {})},
            "machine_reference_ms": reference,
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, default=10_000)
    parser.add_argument("--per-request", type=int, default=1000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "all"], default="all")
    parser.add_argument("--workers", type=int, default=0,
                        help="separate worker processes (default: the embedded worker)")
    args = parser.parse_args()
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fem-bench-")))
        if args.backend in ("sqlite", "all"):
            print(json.dumps(run("sqlite", f"sqlite:///{workdir / 'bench.db'}", args, workdir)),
                  flush=True)
        if args.backend in ("postgresql", "all"):
            reason = postgres_unavailable_reason()
            if reason:
                print(json.dumps({"backend": "postgresql", "skipped": reason}), flush=True)
            else:
                url = stack.enter_context(postgres_database("featurehub_bench"))
                print(json.dumps(run("postgresql", url, args, workdir)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
