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


def test_killed_server_loses_no_granted_request(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "FEATUREHUB_DATABASE_URL": f"sqlite:///{tmp_path / 'kill.db'}",
           "FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD": "pw", "FEATUREHUB_LOAD_TOPONYMS": "false",
           # No worker: what the 201 promised must be in the database, not in memory.
           "FEATUREHUB_EMBEDDED_WORKER": "false"}
    server = subprocess.Popen([str(BIN), "serve", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
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
