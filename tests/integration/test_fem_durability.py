"""Acceptance is durable: a server killed (SIGKILL) right after answering 201 loses no granted
request; a worker started afterwards processes every one. A real `featurehub serve` on SQLite."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from tests.api.fem.conftest import SAMPLE_MODEL, creation, feature

BIN = Path(sys.executable).parent / "featurehub"


def _call(url, data=None, headers=None, method=None):
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read())


def _serve(tmp_path: Path, embedded_worker: bool) -> tuple[subprocess.Popen, str, dict, dict]:
    """A server on a SQLite file, ready, with the example model: (process, base URL, its
    environment, headers of the instance administrator)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "FEATUREHUB_DATABASE_URL": f"sqlite:///{tmp_path / 'fem.db'}",
           "FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD": "pw", "FEATUREHUB_LOAD_TOPONYMS": "false",
           "FEATUREHUB_EMBEDDED_WORKER": "true" if embedded_worker else "false"}
    server = subprocess.Popen([str(BIN), "serve", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            _call(f"{base}/rs-fem/api/v1/openapi.json")
            break
        except OSError:
            time.sleep(0.2)
    _, token = _call(f"{base}/rs-authentication/api/v1/oauth/token", urllib.parse.urlencode({
        "grant_type": "password", "username": "admin@featurehub.local", "password": "pw",
        "scope": "demo"}).encode())
    headers = {"Authorization": f"Bearer {token['access_token']}",
               "Content-Type": "application/json"}
    _call(f"{base}/rs-fem/api/v1/models/sample_product", json.dumps(SAMPLE_MODEL).encode(),
          headers, "PUT")
    return server, base, env, headers


def test_embedded_worker_of_serve_processes_requests(tmp_path):
    server, base, _, headers = _serve(tmp_path, embedded_worker=True)
    try:
        _, answer = _call(f"{base}/rs-fem/api/v1/features",
                          json.dumps(creation(feature("served"))).encode(), headers)
        request_id = answer["granted"]["served"]
        state = None
        for _ in range(300):  # the worker polls; bounded wait, no timing asserted
            _, request = _call(f"{base}/rs-fem/api/v1/requests/{request_id}", headers=headers)
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
    server, base, env, headers = _serve(tmp_path, embedded_worker=False)
    try:
        body = creation(*(feature(f"kill-{n}") for n in range(500)))
        status, answer = _call(f"{base}/rs-fem/api/v1/features", json.dumps(body).encode(),
                               headers)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    assert status == 201
    assert len(answer["granted"]) == 500

    worker = subprocess.run([str(BIN), "worker", "--once"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert "500 request(s) processed" in worker.stdout, worker.stderr
