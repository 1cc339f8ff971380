"""The notification scheduler as an operator runs it: inside a real `featurehub serve`, and as
`featurehub scheduler --once`, e-mailing through a real SMTP server on loopback (notifications,
and the e-mails of access requests)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.parse
import urllib.request
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


def _admin_headers(base: str) -> dict[str, str]:
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
    return {"Authorization": f"Bearer {token['access_token']}",
            "Content-Type": "application/json"}


def _wait_for_mail(smtp: SmtpFixture, address: str) -> list:
    for _ in range(300):  # the request wakes the scheduler; bounded wait, no timing asserted
        if smtp.inbox.to(address):
            break
        time.sleep(0.1)
    return smtp.inbox.to(address)


def _notify_admins(base: str, title: str) -> None:
    headers = _admin_headers(base)
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


def test_serve_mails_a_requester_the_link_that_verifies_and_tells_the_listed_recipients(
        tmp_path):
    smtp = SmtpFixture(free_port()).start()
    server, base, _ = _serve(tmp_path, smtp.url, embedded=True)
    accesses = f"{base}/rs-admin/api/v1/accesses"
    try:
        status, _ = _call(f"{accesses}/settings/user_creation_mail_recipients", json.dumps({
            "name": "user_creation_mail_recipients", "value": ["desk@featurehub.test"],
        }).encode(), _admin_headers(base), method="PUT")
        assert status == 200
        request = urllib.request.Request(
            f"{accesses}?scope=demo", method="POST",
            data=json.dumps({"email": "joiner@featurehub.test", "password": "pw-1"}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201

        [confirm] = _wait_for_mail(smtp, "joiner@featurehub.test")
        assert confirm["Subject"] == "[demo] Confirm your e-mail address"
        [link] = [line.strip() for line in confirm.get_content().splitlines()
                  if "/verifyEmail/" in line]
        assert link.startswith(f"{accesses}/verifyEmail/") and link.endswith("?scope=demo")
        assert _call(link) == (200, {"content": None, "links": []})

        [told] = _wait_for_mail(smtp, "desk@featurehub.test")
        assert told["Subject"] == "[demo] New project user"
        assert told.get_content().startswith(
            "joiner@featurehub.test asked for access to the project demo and was granted it")
    finally:
        server.terminate()
        server.wait(timeout=30)
        smtp.stop()
