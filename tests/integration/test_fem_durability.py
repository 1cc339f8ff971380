"""Acceptance is durable: a real `featurehub serve` killed (SIGKILL) loses no granted request.

- right after answering 201: a worker started afterwards processes every one (SQLite);
- in the middle of an ingest, while clients' POSTs are being answered, the server alone or the
  server with its embedded workers (one holding a claimed batch): once restarted on the same
  database, every request whose 201 reached its client reaches SUCCESS, and a POST cut off by
  the kill left all of its features or none (SQLite and PostgreSQL)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from featurehub.db.fem import FeatureRequest
from featurehub.services.fem.lifecycle import RUNNING_STEPS
from tests.api.fem.conftest import SAMPLE_MODEL, creation, feature
from tests.backends import database_for

BIN = Path(sys.executable).parent / "featurehub"
FEM = "/rs-fem/api/v1"
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def _call(url, data=None, headers=None, method=None):
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read())


def _start(database_url: str, embedded_worker: bool) -> tuple[subprocess.Popen, str, dict]:
    """`featurehub serve` on a free port, answering: (process, base URL, its environment)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "FEATUREHUB_DATABASE_URL": database_url,
           "FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD": "pw", "FEATUREHUB_LOAD_TOPONYMS": "false",
           "FEATUREHUB_EMBEDDED_WORKER": "true" if embedded_worker else "false"}
    server = subprocess.Popen([str(BIN), "serve", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            _call(f"{base}{FEM}/openapi.json")
            break
        except OSError:
            assert server.poll() is None, f"featurehub serve exited with {server.returncode}"
            time.sleep(0.2)
    return server, base, env


def _login(base: str) -> dict:
    """Headers of the instance administrator (the README's password grant)."""
    _, token = _call(f"{base}/rs-authentication/api/v1/oauth/token", urllib.parse.urlencode({
        "grant_type": "password", "username": "admin@featurehub.local", "password": "pw",
        "scope": "demo"}).encode())
    return {"Authorization": f"Bearer {token['access_token']}",
            "Content-Type": "application/json"}


def _serve(database_url: str, embedded_worker: bool) -> tuple[subprocess.Popen, str, dict, dict]:
    """A fresh server with the example model: (process, base URL, environment, headers)."""
    server, base, env = _start(database_url, embedded_worker)
    headers = _login(base)
    _call(f"{base}{FEM}/models/sample_product", json.dumps(SAMPLE_MODEL).encode(), headers,
          "PUT")
    return server, base, env, headers


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the embedded workers `serve` forks)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(params=BACKENDS)
def server_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_for(request.param, tmp_path, "featurehub_durability") as url:
        yield url


def test_embedded_worker_of_serve_processes_requests(tmp_path):
    server, base, _, headers = _serve(f"sqlite:///{tmp_path / 'fem.db'}", embedded_worker=True)
    try:
        _, answer = _call(f"{base}{FEM}/features",
                          json.dumps(creation(feature("served"))).encode(), headers)
        request_id = answer["granted"]["served"]
        state = None
        for _ in range(300):  # the worker polls; bounded wait, no timing asserted
            _, request = _call(f"{base}{FEM}/requests/{request_id}", headers=headers)
            state = request["content"]["state"]
            if state != "GRANTED":
                break
            time.sleep(0.1)
        assert state == "SUCCESS"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_killed_server_loses_no_granted_request(tmp_path):
    # No worker: what the 201 promised must be in the database, not in memory.
    server, base, env, headers = _serve(f"sqlite:///{tmp_path / 'fem.db'}",
                                        embedded_worker=False)
    try:
        body = creation(*(feature(f"kill-{n}") for n in range(500)))
        status, answer = _call(f"{base}{FEM}/features", json.dumps(body).encode(), headers)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    assert status == 201
    assert len(answer["granted"]) == 500

    worker = subprocess.run([str(BIN), "worker", "--once"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert "500 request(s) processed" in worker.stdout, worker.stderr


# ---- killed in the middle of an ingest ----

CLIENTS = 4
FEATURES_PER_POST = 50
ANSWERS_BEFORE_KILL = 12  # 201s received before the kill: the ingest is well under way
DISCONNECTED = (OSError, http.client.HTTPException)  # URLError, resets, cut-off answers


class Ingest:
    """Clients POSTing creations back to back until the server goes away. Only a 201 that
    reached its client grants anything; a POST cut off by the kill is `interrupted`."""

    def __init__(self, base: str, headers: dict) -> None:
        self.base, self.headers = base, headers
        self.lock = threading.Lock()
        self.granted: dict[str, str] = {}  # provider id -> request id, from 201s received
        self.answers = 0
        self.in_flight = 0
        self.killed_at: float | None = None
        self.interrupted: list[list[str]] = []  # provider ids of POSTs sent before the kill
        self.unexpected: list[str] = []
        self.threads = [threading.Thread(target=self._post_until_gone, args=(n,), daemon=True)
                        for n in range(CLIENTS)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=120)

    def _post_until_gone(self, client: int) -> None:
        for number in range(10_000):
            ids = [f"c{client}-p{number}-f{n}" for n in range(FEATURES_PER_POST)]
            body = json.dumps(creation(*(feature(i) for i in ids))).encode()
            with self.lock:
                if self.killed_at is not None:
                    return
                self.in_flight += 1
                sent = time.monotonic()
            try:
                status, answer = _call(f"{self.base}{FEM}/features", body, self.headers)
            except DISCONNECTED:
                with self.lock:
                    self.in_flight -= 1
                    if self.killed_at is not None and sent < self.killed_at:
                        self.interrupted.append(ids)
                    elif self.killed_at is None:
                        self.unexpected.append(f"client {client}: POST failed before the kill")
                return
            with self.lock:
                self.in_flight -= 1
                if status != 201 or answer["denied"] or len(answer["granted"]) != len(ids):
                    self.unexpected.append(f"client {client}: {status} {answer}")
                    return
                self.granted.update(answer["granted"])
                self.answers += 1

    def kill_when_busy(self, victims: list[int], ready=lambda: True) -> int:
        """SIGKILL the victims at once when enough answers came back, every client's POST is
        in flight and `ready()` holds; the number of POSTs in flight at that moment. (The
        server answers one POST after the other: with one in flight only, it may have been
        answered whole already, and then no POST is cut off.)"""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if ready():
                with self.lock:
                    if self.answers >= ANSWERS_BEFORE_KILL and self.in_flight == CLIENTS:
                        for pid in victims:
                            os.kill(pid, signal.SIGKILL)
                        self.killed_at = time.monotonic()
                        return self.in_flight
            if self.unexpected:
                break
            time.sleep(0.002)
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"the ingest never got going: {self.unexpected}")


def _claimed(engine) -> set[str]:
    """Request ids a worker has claimed and not finished."""
    with engine.connect() as connection:
        return set(connection.scalars(select(FeatureRequest.request_id).where(
            FeatureRequest.step.in_(RUNNING_STEPS))))


def _batch_in_hand(engine) -> bool:
    """A worker holds a batch: claimed under a lease, or (PostgreSQL, a batch without files to
    fetch) locked by the transaction that finishes it."""
    if _claimed(engine):
        return True
    if engine.dialect.name != "postgresql":
        return False
    with engine.connect() as connection:
        return bool(connection.scalar(text(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE c.relname = 'fem_requests' AND l.mode = 'RowShareLock' "
            "AND l.pid <> pg_backend_pid()")))


def _requests(base: str, headers: dict, provider_ids: list[str]) -> dict[str, dict]:
    """The creation requests of these provider ids, by request id."""
    found: dict[str, dict] = {}
    for start in range(0, len(provider_ids), 1000):
        chunk = provider_ids[start:start + 1000]
        _, page = _call(f"{base}{FEM}/requests/search/CREATION?size=1000",
                        json.dumps({"providerIds": chunk}).encode(), headers)
        assert page["page"]["totalElements"] <= 1000
        found.update({item["content"]["requestId"]: item["content"]
                      for item in page["content"]})
    return found


def _wait_for_success(base: str, headers: dict, granted: dict[str, str],
                      stranded: set[str]) -> dict[str, str]:
    """Poll the restarted server until every granted request is SUCCESS (a bounded wait, no
    timing asserted); the granted requests still not SUCCESS. A granted request that is
    missing, or in another state than GRANTED or SUCCESS, fails the test at once. Once all
    but the `stranded` ones succeeded, those get a few more seconds, then the wait ends."""
    pending = dict(granted)
    deadline = time.monotonic() + 300
    while pending and time.monotonic() < deadline:
        found = _requests(base, headers, sorted(pending))
        for provider_id, request_id in list(pending.items()):
            request = found.get(request_id)
            assert request is not None, f"granted request {request_id} is lost"
            assert request["state"] in ("GRANTED", "SUCCESS"), request
            if request["state"] == "SUCCESS":
                assert request["providerId"] == provider_id
                del pending[provider_id]
        if pending and set(pending.values()) <= stranded:
            deadline = min(deadline, time.monotonic() + 10)
        time.sleep(0.5)
    return pending


@pytest.mark.parametrize("victims", ["serve", "serve and its workers"])
def test_server_killed_mid_ingest_loses_no_granted_request(server_database, victims):
    """`serve`: the process `featurehub serve` (its embedded workers, orphaned, finish their
    batch and leave). `serve and its workers`: the whole server at once, as a machine crash,
    the OOM killer of its cgroup or `docker kill` do, while a worker holds a claimed batch."""
    server, base, _, headers = _serve(server_database, embedded_worker=True)
    workers = _children(server.pid)
    assert workers, "featurehub serve runs its embedded workers as child processes"
    engine = create_engine(server_database)
    try:
        ingest = Ingest(base, headers)
        ingest.start()
        if victims == "serve":
            in_flight = ingest.kill_when_busy([server.pid])
        else:
            in_flight = ingest.kill_when_busy([server.pid, *workers],
                                              ready=lambda: _batch_in_hand(engine))
        server.wait(timeout=30)
        ingest.join()
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=30)
    assert ingest.unexpected == []
    # The kill cut POSTs off: this is an ingest under way, not one between two requests.
    assert in_flight > 0
    assert ingest.interrupted, "no POST was cut off by the kill"
    granted = ingest.granted
    assert len(granted) >= ANSWERS_BEFORE_KILL * FEATURES_PER_POST
    # Orphaned embedded workers notice their parent is gone and leave after their batch.
    deadline = time.monotonic() + 120
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers), "an orphaned embedded worker stayed"
    stranded = _claimed(engine)  # claimed by a worker that is gone
    leased = engine.dialect.name == "sqlite"  # PostgreSQL: batches are locked, not leased
    engine.dispose()
    if victims != "serve" and leased:
        assert stranded, "the kill did not land while a worker held a claimed batch"

    restarted, base, env = _start(server_database, embedded_worker=True)
    try:
        headers = _login(base)
        # Claims of the killed workers go back to the queue as the restarted workers start
        # (their processes are gone), not ten minutes later when their leases expire.
        assert _wait_for_success(base, headers, granted, stranded) == {}

        # Every granted feature is a product now, in its first version.
        for start in range(0, len(granted), 1000):
            chunk = sorted(granted)[start:start + 1000]
            _, page = _call(f"{base}{FEM}/admin/features?size=1000",
                            json.dumps({"providerIds": chunk}).encode(), headers)
            assert sorted((item["content"]["id"], item["content"]["version"])
                          for item in page["content"]) == [(i, 1) for i in chunk]

        # A POST cut off by the kill was accepted whole or not at all.
        for ids in ingest.interrupted:
            assert len(_requests(base, headers, ids)) in (0, len(ids)), ids
    finally:
        restarted.terminate()
        restarted.wait(timeout=30)
