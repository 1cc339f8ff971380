"""Notification delivery by e-mail, through a real SMTP server on loopback (aiosmtpd): at once,
in digests, never; once even with two schedulers; retried when the server is down; the feature
manager's override notices become notifications to the administrators."""

from __future__ import annotations

import email
import logging
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.policy import default as default_policy
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from featurehub.db.admin import Notification, NotificationRecipient
from featurehub.db.base import utcnow
from featurehub.services.admin.notifications import notify
from featurehub.services.admin.scheduler import (
    NotificationScheduler,
    SmtpServer,
    claim,
    consume_override_notices,
)
from featurehub.services.fem import outbox
from tests.api.admin.test_notifications import add_custom_role
from tests.api.fem.conftest import create, exploit, feature, process, sample_model  # noqa: F401

BASE = "/rs-admin/api/v1/notifications"
SENDER = "hub@featurehub.test"


class Inbox:
    """aiosmtpd handler keeping every message received."""

    def __init__(self) -> None:
        self.received: list[tuple[list[str], EmailMessage]] = []
        self._lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        message = email.message_from_bytes(envelope.content, policy=default_policy)
        with self._lock:
            self.received.append((list(envelope.rcpt_tos), message))
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        with self._lock:
            return [message for recipients, message in self.received if address in recipients]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SmtpFixture:
    def __init__(self, port: int, *, utf8: bool = True) -> None:
        self.port = port
        self.utf8 = utf8
        self.inbox = Inbox()
        self.controller: Controller | None = None

    def start(self) -> SmtpFixture:
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port,
                                     enable_SMTPUTF8=self.utf8)
        self.controller.start()
        return self

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"


@pytest.fixture
def smtp() -> Iterator[SmtpFixture]:
    server = SmtpFixture(free_port()).start()
    yield server
    server.stop()


def scheduler(rt: Any, url: str | None) -> NotificationScheduler:
    return NotificationScheduler(rt.sessions, smtp_url=url, sender=SENDER)


def raise_notification(project, *, title: str = "Maintenance", users=(), roles=(),
                       level: str = "INFO") -> int:
    with project.runtime.sessions() as session:
        notification_id = notify(session, project_id=project.id, level=level, title=title,
                                 message=f"About {title}.", sender="ops",
                                 user_recipients=users, role_recipients=roles)
        session.commit()
    return notification_id


def bearer(project, email_address: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {project.token(email_address)}"}


def set_frequency(client, project, user: str, **settings: Any) -> None:
    response = client.put(f"{BASE}/settings", json=settings, headers=bearer(project, user))
    assert response.status_code == 200, response.text


def run_together(schedulers: list[NotificationScheduler], work: Any) -> None:
    """Run `work(scheduler)` for each scheduler in its own thread, started together."""
    barrier = threading.Barrier(len(schedulers))
    failures: list[BaseException] = []

    def run(instance: NotificationScheduler) -> None:
        try:
            barrier.wait()
            work(instance)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=run, args=(instance,)) for instance in schedulers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []


class TestImmediate:
    def test_a_role_notification_reaches_a_custom_role_above_it_at_once(
            self, client, project, rt, smtp):
        add_custom_role(project, "OPERATOR", parent="EXPLOIT")
        person = project.user("OPERATOR")
        admin = bearer(project, project.user("PROJECT_ADMIN"))
        created = client.post(f"{BASE}/create", json={
            "level": "WARNING", "title": "Storage full", "message": "Free some space.",
            "roleRecipients": ["EXPLOIT"], "sender": "ops"}, headers=admin).json()["content"]
        report = scheduler(rt, smtp.url).tick()
        assert report.sent >= 1
        [message] = smtp.inbox.to(person)
        assert message["Subject"] == f"[{project.name}] WARNING: Storage full"
        assert message["From"] == SENDER
        assert message["To"] == person
        assert message["X-Featurehub-Notification"] == str(created["id"])
        assert message.get_content().strip() == "Free some space."

        page = client.post(BASE, json={}, headers=bearer(project, person)).json()
        assert [(n["content"]["title"], n["content"]["status"]) for n in page["content"]] == [
            ("Storage full", "UNREAD")]
        client.put(f"{BASE}/{created['id']}/read", headers=bearer(project, person))
        assert client.get(f"{BASE}/{created['id']}", headers=bearer(project, person)).json()[
            "content"]["status"] == "READ"

        scheduler(rt, smtp.url).tick()
        assert len(smtp.inbox.to(person)) == 1  # sent once

    def test_html_notifications_are_sent_as_html(self, project, rt, smtp):
        user = project.user("REGISTERED_USER")
        with project.runtime.sessions() as session:
            notify(session, project_id=project.id, level="INFO", title="Rich",
                   message="<p>Hello</p>", sender="ops", user_recipients=[user],
                   mime_type="text/html")
            session.commit()
        scheduler(rt, smtp.url).tick()
        [message] = smtp.inbox.to(user)
        assert message.get_content_type() == "text/html"


class TestDigests:
    def test_daily_recipients_get_one_digest_per_day(self, client, project, rt, smtp):
        user = project.user("REGISTERED_USER")
        set_frequency(client, project, user, frequency="DAILY")
        raise_notification(project, title="first", users=[user])
        raise_notification(project, title="second", users=[user])
        start = utcnow()
        mailer = scheduler(rt, smtp.url)
        mailer.tick(now=start)
        assert smtp.inbox.to(user) == []

        mailer.tick(now=start + timedelta(days=1, seconds=1))
        [digest] = smtp.inbox.to(user)
        assert digest["Subject"] == f"[{project.name}] 2 notification(s)"
        body = digest.get_content()
        assert "INFO: first (from ops)" in body and "About second." in body

        raise_notification(project, title="third", users=[user])
        mailer.tick(now=start + timedelta(days=1, seconds=2))
        assert len(smtp.inbox.to(user)) == 1  # the next digest is a day after the last
        mailer.tick(now=start + timedelta(days=2, seconds=2))
        assert len(smtp.inbox.to(user)) == 2
        assert "third" in smtp.inbox.to(user)[1].get_content()

    def test_custom_period_is_days_and_hours(self, client, project, rt, smtp):
        user = project.user("REGISTERED_USER")
        set_frequency(client, project, user, frequency="CUSTOM", days=0, hours=2)
        raise_notification(project, users=[user])
        start = utcnow()
        scheduler(rt, smtp.url).tick(now=start + timedelta(hours=1))
        assert smtp.inbox.to(user) == []
        scheduler(rt, smtp.url).tick(now=start + timedelta(hours=2, seconds=1))
        assert len(smtp.inbox.to(user)) == 1

    def test_never_is_never_sent(self, client, project, rt, smtp):
        user = project.user("REGISTERED_USER")
        set_frequency(client, project, user, frequency="NEVER")
        raise_notification(project, users=[user])
        scheduler(rt, smtp.url).tick(now=utcnow() + timedelta(days=400))
        assert smtp.inbox.to(user) == []
        assert client.get(f"{BASE}/summary", headers=bearer(project, user)).json() == {
            "unreads": 1, "reads": 0}


class TestOnce:
    def test_two_schedulers_at_once_send_each_notification_once(self, project, rt, smtp):
        users = [project.user("ADMIN") for _ in range(3)]
        for number in range(20):
            raise_notification(project, title=f"n{number}", roles=["ADMIN"])
        run_together([scheduler(rt, smtp.url), scheduler(rt, smtp.url)],
                     lambda instance: [instance.tick() for _ in range(3)])
        for user in users:
            subjects = sorted(message["Subject"] for message in smtp.inbox.to(user))
            assert subjects == sorted(f"[{project.name}] INFO: n{number}" for number in range(20))

    def test_two_schedulers_at_once_send_one_digest(self, client, project, rt, smtp):
        users = [project.user("REGISTERED_USER") for _ in range(3)]
        for user in users:
            set_frequency(client, project, user, frequency="WEEKLY")
        for number in range(5):
            raise_notification(project, title=f"d{number}", users=users)
        due = utcnow() + timedelta(days=7, seconds=1)
        run_together([scheduler(rt, smtp.url), scheduler(rt, smtp.url)],
                     lambda instance: [instance.tick(now=due) for _ in range(3)])
        for user in users:
            [digest] = smtp.inbox.to(user)
            assert digest["Subject"] == f"[{project.name}] 5 notification(s)"

    def test_a_row_claimed_by_one_scheduler_cannot_be_claimed_by_another(self, project, rt):
        user = project.user("REGISTERED_USER")
        notification_id = raise_notification(project, users=[user])
        mine = (NotificationRecipient.notification_id == notification_id)
        with rt.sessions() as first, rt.sessions() as second:
            assert claim(first, token="first", now=utcnow(), condition=mine) == 1
            assert claim(second, token="second", now=utcnow(), condition=mine) == 0

    def test_smtp_down_is_retried_later_and_sent_once(self, project, rt, caplog):
        user = project.user("REGISTERED_USER")
        raise_notification(project, title="patience", users=[user])
        server = SmtpFixture(free_port())
        mailer = scheduler(rt, server.url)
        with caplog.at_level(logging.WARNING, logger="featurehub.services.admin.scheduler"):
            mailer.tick()
        assert any("notification e-mail failed" in record.getMessage()
                   for record in caplog.records)
        with rt.sessions() as session:
            row = session.scalars(select(NotificationRecipient).where(
                NotificationRecipient.email == user)).one()
            assert (row.sent, row.claimed_by) == (None, None)
        server.start()
        try:
            mailer.tick()
            mailer.tick()
            assert [m["Subject"] for m in server.inbox.to(user)] == [
                f"[{project.name}] INFO: patience"]
        finally:
            server.stop()

    def test_an_address_the_server_cannot_take_does_not_hold_up_the_others(self, project, rt):
        ascii_only = SmtpFixture(free_port(), utf8=False).start()
        try:
            first = project.user("REGISTERED_USER", email=f"jöe@{project.name}.test")
            second = project.user("REGISTERED_USER")
            raise_notification(project, title="first", users=[first])
            raise_notification(project, title="second", users=[second])
            scheduler(rt, ascii_only.url).tick()
            assert [m["Subject"] for m in ascii_only.inbox.to(second)] == [
                f"[{project.name}] INFO: second"]
            with rt.sessions() as session:
                waiting = session.scalars(select(NotificationRecipient).where(
                    NotificationRecipient.email == first)).one()
                assert (waiting.sent, waiting.claimed_by) == (None, None)  # retried later
        finally:
            ascii_only.stop()

    def test_without_smtp_notifications_stay_readable_and_it_is_logged_once(
            self, client, project, rt, caplog):
        user = project.user("REGISTERED_USER")
        raise_notification(project, title="kept", users=[user])
        mailer = scheduler(rt, None)
        with caplog.at_level(logging.WARNING, logger="featurehub.services.admin.scheduler"):
            mailer.tick()
            mailer.tick()
        told = [record for record in caplog.records
                if "FEATUREHUB_SMTP_URL is not set" in record.getMessage()]
        assert len(told) == 1
        page = client.post(BASE, json={}, headers=bearer(project, user)).json()
        assert [n["content"]["title"] for n in page["content"]] == ["kept"]


class TestOverrideNotices:
    def test_an_override_tells_the_admins_once(self, client, project, rt, smtp, create):  # noqa: F811
        admin, boss, exploiter = (project.user("ADMIN"), project.user("PROJECT_ADMIN"),
                                  project.user("EXPLOIT"))
        first = create(feature("over"))["over"]
        second = create(feature("over"), override=True)["over"]
        mailer = scheduler(rt, smtp.url)
        assert mailer.tick().notified >= 1
        mailer.tick()
        expected = (f"Version {first['urn']} of product 'over' was overridden by "
                    f"{second['urn']} and deleted.")
        for person in (admin, boss):
            page = client.post(BASE, json={}, headers=bearer(project, person)).json()
            assert [(n["content"]["sender"], n["content"]["level"], n["content"]["message"])
                    for n in page["content"]] == [("rs-fem", "INFO", expected)]
            [message] = smtp.inbox.to(person)
            assert message.get_content().strip() == expected
        assert client.post(BASE, json={}, headers=bearer(project, exploiter)).json()[
            "content"] == []


    def test_each_notice_is_consumed_once_batch_after_batch(self, project, rt):
        with rt.sessions() as session:
            outbox.record(session, [
                outbox.override_notice(project_id=project.id, created=utcnow(),
                                       replaced=f"URN:V{number}", replaced_by="URN:NEXT",
                                       provider_id=f"p{number}") for number in range(3)]
                + [outbox.request_event(project_id=project.id, created=utcnow(),
                                        type_="CREATION", request_id="r", request_owner="o",
                                        provider_id="p", urn=None, state="SUCCESS",
                                        errors=None)])
            session.commit()

        def raised() -> list[str]:
            with rt.sessions() as session:
                return sorted(session.scalars(select(Notification.message).where(
                    Notification.project_id == project.id)))

        with rt.sessions() as session:
            while consume_override_notices(session, batch_size=2):
                pass
        assert raised() == [f"Version URN:V{number} of product 'p{number}' was overridden by "
                            f"URN:NEXT and deleted." for number in range(3)]
        with rt.sessions() as session:
            consume_override_notices(session)
        assert len(raised()) == 3


class TestSmtpUrl:
    def test_plain_with_credentials(self):
        assert SmtpServer.from_url("smtp://me%40x:s%3Acret@mail.example:2525") == SmtpServer(
            host="mail.example", port=2525, user="me@x", password="s:cret")

    def test_tls_defaults_to_port_465(self):
        server = SmtpServer.from_url("smtps://mail.example")
        assert (server.port, server.tls) == (465, True)

    def test_starttls_and_default_port(self):
        server = SmtpServer.from_url("smtp://mail.example?starttls=true")
        assert (server.port, server.starttls, server.tls) == (25, True, False)

    def test_another_scheme_is_refused(self):
        with pytest.raises(ValueError, match="FEATUREHUB_SMTP_URL"):
            SmtpServer.from_url("http://mail.example")
