"""The notification scheduler as an operator runs it: inside a real `featurehub serve`, and as
`featurehub scheduler --once`, e-mailing through a real SMTP server on loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

from tests.api.admin.test_notification_delivery import SmtpFixture, free_port
from tests.integration.test_fem_durability import BIN, _call

ADMIN = "admin@featurehub.local"


def _serve(tmp_path: Path, smtp_url: str, embedded: bool) -> tuple[subprocess.Popen, str, dict]:
    port = free_port()
    env = {**os.environ, "FEATUREHUB_DATABASE_URL": f"sqlite:///{tmp_path / 'admin.db'}",
           "FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD": "pw", "FEATUREHUB_LOAD_TOPONYMS": "false",
           "FEATUREHUB_SMTP_URL": smtp_url, "FEATUREHUB_SMTP_FROM": "hub@featurehub.test",
           "FEATUREHUB_EMBEDDED_WORKER": "true" if embedded else "false"}
    server = subprocess.Popen([str(BIN), "serve", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.2)
    return server, base, env


def _notify_admins(base: str, title: str) -> None:
    token: dict = {}
    for _ in range(50):  # the port opens a moment before the application answers
        try:
            _, token = _call(f"{base}/rs-authentication/api/v1/oauth/token",
                             urllib.parse.urlencode({"grant_type": "password", "username": ADMIN,
                                                     "password": "pw", "scope": "demo"}).encode())
            break
        except OSError:
            time.sleep(0.2)
    assert token, "the server did not answer"
    headers = {"Authorization": f"Bearer {token['access_token']}",
               "Content-Type": "application/json"}
    status, _ = _call(f"{base}/rs-admin/api/v1/notifications/create", json.dumps({
        "level": "INFO", "title": title, "message": "Hello.", "roleRecipients": ["EXPLOIT"],
    }).encode(), headers)
    assert status == 201


def test_serve_mails_a_new_notification_at_once(tmp_path):
    smtp = SmtpFixture(free_port()).start()
    server, base, _ = _serve(tmp_path, smtp.url, embedded=True)
    try:
        _notify_admins(base, "served")
        for _ in range(300):  # creation wakes the scheduler; bounded wait, no timing asserted
            if smtp.inbox.to(ADMIN):
                break
            time.sleep(0.1)
        [message] = smtp.inbox.to(ADMIN)
        assert (message["Subject"], message["From"]) == ("[demo] INFO: served",
                                                         "hub@featurehub.test")
    finally:
        server.terminate()
        server.wait(timeout=30)
        smtp.stop()


def test_scheduler_command_sends_what_is_waiting(tmp_path):
    smtp = SmtpFixture(free_port()).start()
    server, base, env = _serve(tmp_path, smtp.url, embedded=False)
    try:
        _notify_admins(base, "waiting")
        assert smtp.inbox.to(ADMIN) == []
        once = subprocess.run([str(BIN), "scheduler", "--once"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert "1 e-mail(s) sent" in once.stdout, once.stderr
        assert [m["Subject"] for m in smtp.inbox.to(ADMIN)] == ["[demo] INFO: waiting"]
    finally:
        server.terminate()
        server.wait(timeout=30)
        smtp.stop()
