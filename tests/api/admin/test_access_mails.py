"""The e-mails of access requests, sent by the notification scheduler through a real SMTP server
on loopback: the link that verifies a granted requester's address, and the new users announced
to the `user_creation_mail_recipients`."""

from __future__ import annotations

import logging
from datetime import timedelta
from urllib.parse import urlencode

from sqlalchemy import select

from featurehub.db.admin import AccessRequestRecord, OutgoingMail
from featurehub.db.base import utcnow
from featurehub.db.platform import EmailVerification, ProjectUser
from featurehub.services.admin.scheduler import (
    SENT_MAIL_RETENTION,
    purge_access_request_records,
    purge_sent_mails,
)
from tests.api.admin.test_accesses import member, request_access, set_mode
from tests.api.admin.test_notification_delivery import SENDER, run_together, scheduler
from tests.conftest import problem

BASE = "/rs-admin/api/v1"
ACCESSES = f"{BASE}/accesses"


def token_of(project, email):
    with project.runtime.sessions() as session:
        return session.scalars(select(EmailVerification.token).join(
            ProjectUser, ProjectUser.id == EmailVerification.project_user_id).where(
            ProjectUser.email == email, ProjectUser.project_id == project.id)).one()


def waiting_mails(project, email):
    with project.runtime.sessions() as session:
        return list(session.scalars(select(OutgoingMail.kind).where(
            OutgoingMail.project_id == project.id, OutgoingMail.email == email,
            OutgoingMail.sent.is_(None))))


def body(message):
    """The text of a received message (SMTP carries its lines with CRLF)."""
    return message.get_content().replace("\r\n", "\n")


def verification_body(project, email, link):
    return (f"Your access to the project {project.name} is granted. Please confirm your e-mail "
            f"address {email} by following this link:\n\n{link}\n")


def set_recipients(client, project, recipients, path=f"{ACCESSES}/settings"):
    response = client.put(f"{path}/user_creation_mail_recipients",
                          json={"name": "user_creation_mail_recipients", "value": recipients},
                          headers=project.headers("PROJECT_ADMIN"))
    assert response.status_code == 200, response.text


class TestVerificationMail:
    def test_a_granted_request_is_mailed_the_link_that_verifies_the_address(
            self, client, project, rt, smtp):
        email = f"ann@{project.name}.test"
        assert request_access(client, project, email).status_code == 201
        scheduler(rt, smtp.url).tick()
        [message] = smtp.inbox.to(email)
        link = (f"http://testserver/rs-admin/api/v1/accesses/verifyEmail/"
                f"{token_of(project, email)}?scope={project.name}")
        assert (message["From"], message["To"], message["Subject"]) == (
            SENDER, email, f"[{project.name}] Confirm your e-mail address")
        assert body(message) == verification_body(project, email, link)

        assert client.get(link).status_code == 200
        user = client.get(f"{BASE}/users/{member(project, email).id}",
                          headers=project.headers("EXPLOIT")).json()["content"]
        assert user["emailVerified"] is True
        scheduler(rt, smtp.url).tick()
        assert len(smtp.inbox.to(email)) == 1  # sent once

    def test_the_link_is_at_the_public_address_whatever_the_host_header(
            self, client, project, rt, smtp, monkeypatch):
        monkeypatch.setattr(rt, "settings", rt.settings.with_(
            public_url="https://featurehub.example.org/gateway"))
        email = f"host@{project.name}.test"
        response = client.post(ACCESSES, json={"email": email, "password": "secret-1"},
                               params={"scope": project.name},
                               headers={"Host": "attacker.example"})
        assert response.status_code == 201, response.text
        scheduler(rt, smtp.url).tick()
        [message] = smtp.inbox.to(email)
        link = (f"https://featurehub.example.org/gateway/rs-admin/api/v1/accesses/verifyEmail/"
                f"{token_of(project, email)}?scope={project.name}")
        assert body(message) == verification_body(project, email, link)

    def test_the_requesters_own_page_gets_the_token(self, client, project, rt, smtp):
        email = f"page@{project.name}.test"
        request_access(client, project, email, requestLink="https://portal.example/verify?l=en",
                       originUrl="https://portal.example/home")
        scheduler(rt, smtp.url).tick()
        [message] = smtp.inbox.to(email)
        query = urlencode({"origin_url": "https://portal.example/home",
                           "token": token_of(project, email), "account_email": email})
        assert body(message) == verification_body(
            project, email, f"https://portal.example/verify?l=en&{query}")

    def test_manual_mode_mails_the_link_when_the_request_is_accepted_only(
            self, client, project, rt, smtp):
        set_mode(client, project, "manual")
        waiting, denied = f"wait@{project.name}.test", f"deny@{project.name}.test"
        request_access(client, project, waiting)
        request_access(client, project, denied)
        exploit = project.headers("EXPLOIT")
        client.put(f"{ACCESSES}/{member(project, denied).id}/deny", headers=exploit)
        scheduler(rt, smtp.url).tick()
        assert (smtp.inbox.to(waiting), smtp.inbox.to(denied)) == ([], [])

        accepted = client.put(f"{ACCESSES}/{member(project, waiting).id}/accept", headers=exploit)
        assert accepted.status_code == 200
        scheduler(rt, smtp.url).tick()
        assert [m["Subject"] for m in smtp.inbox.to(waiting)] == [
            f"[{project.name}] Confirm your e-mail address"]
        assert smtp.inbox.to(denied) == []

    def test_granting_a_request_by_updating_the_user_mails_the_link_too(
            self, client, project, rt, smtp):
        set_mode(client, project, "manual")
        email = f"upd@{project.name}.test"
        request_access(client, project, email)
        admin = project.headers("PROJECT_ADMIN")
        user = client.get(f"{BASE}/users/{member(project, email).id}",
                          headers=admin).json()["content"]
        updated = client.put(f"{BASE}/users/{user['id']}",
                             json={**user, "status": "ACCESS_GRANTED", "firstName": "Upd"},
                             headers=admin)
        assert updated.status_code == 200, updated.text
        scheduler(rt, smtp.url).tick()
        assert [m["Subject"] for m in smtp.inbox.to(email)] == [
            f"[{project.name}] Confirm your e-mail address"]

        client.put(f"{BASE}/users/{user['id']}", json={**updated.json()["content"],
                                                       "firstName": "Again"}, headers=admin)
        scheduler(rt, smtp.url).tick()
        assert len(smtp.inbox.to(email)) == 1  # no status change, no new mail

    def test_an_address_already_verified_is_not_asked_again(self, client, project, rt, smtp):
        set_mode(client, project, "manual")
        email = f"early@{project.name}.test"
        request_access(client, project, email)
        client.get(f"{ACCESSES}/verifyEmail/{token_of(project, email)}",
                   params={"scope": project.name})
        client.put(f"{ACCESSES}/{member(project, email).id}/accept",
                   headers=project.headers("EXPLOIT"))
        scheduler(rt, smtp.url).tick()
        assert smtp.inbox.to(email) == []

    def test_users_given_access_by_an_administrator_are_not_asked(
            self, client, project, rt, smtp):
        created, external = f"made@{project.name}.test", f"ext@{project.name}.test"
        exploit = project.headers("EXPLOIT")
        assert client.post(f"{BASE}/users", json={"email": created},
                           headers=exploit).status_code == 201
        assert client.post(f"{ACCESSES}/external", json={"email": external, "origin": "partner"},
                           headers=exploit).status_code == 201
        scheduler(rt, smtp.url).tick()
        assert (smtp.inbox.to(created), smtp.inbox.to(external)) == ([], [])
        assert waiting_mails(project, created) == waiting_mails(project, external) == []

    def test_a_refused_request_mails_nothing(self, client, project, rt, smtp):
        email = f"eve@{project.name}.test"
        response = request_access(client, project, email, roleName="EXPLOIT")
        assert response.status_code == 403
        scheduler(rt, smtp.url).tick()
        assert smtp.inbox.to(email) == []

    def test_two_schedulers_at_once_send_it_once(self, client, project, rt, smtp):
        emails = [f"twice{number}@{project.name}.test" for number in range(5)]
        for email in emails:
            request_access(client, project, email)
        run_together([scheduler(rt, smtp.url), scheduler(rt, smtp.url)],
                     lambda instance: [instance.tick() for _ in range(3)])
        assert [len(smtp.inbox.to(email)) for email in emails] == [1] * 5

    def test_without_smtp_it_waits_the_log_says_so_once_and_it_goes_later(
            self, client, project, rt, smtp, caplog):
        email = f"later@{project.name}.test"
        request_access(client, project, email)
        unconfigured = scheduler(rt, None)
        with caplog.at_level(logging.WARNING, logger="featurehub.services.admin.scheduler"):
            unconfigured.tick()
            unconfigured.tick()
        assert len([record for record in caplog.records
                    if "FEATUREHUB_SMTP_URL is not set" in record.getMessage()]) == 1
        assert waiting_mails(project, email) == ["EMAIL_VERIFICATION"]

        scheduler(rt, smtp.url).tick()
        assert len(smtp.inbox.to(email)) == 1
        assert waiting_mails(project, email) == []

    def test_a_sent_mail_is_kept_30_days_then_deleted(self, client, project, rt, smtp):
        email = f"kept@{project.name}.test"
        request_access(client, project, email)
        scheduler(rt, smtp.url).tick()
        sent_mail = OutgoingMail.project_id == project.id, OutgoingMail.email == email
        with rt.sessions() as session:
            [sent] = session.scalars(select(OutgoingMail.sent).where(*sent_mail))
            assert sent is not None
            session.add(OutgoingMail(project_id=project.id, kind="EMAIL_VERIFICATION",
                                     email=email, subject="old", body="old",
                                     sent=utcnow() - SENT_MAIL_RETENTION - timedelta(minutes=1)))
            session.add(OutgoingMail(project_id=project.id, kind="EMAIL_VERIFICATION",
                                     email=email, subject="waiting", body="waiting",
                                     created=utcnow() - timedelta(days=365)))
            session.commit()

        scheduler(rt, None).tick()  # deleted even when nothing can be sent
        with rt.sessions() as session:
            kept = session.execute(select(OutgoingMail.subject, OutgoingMail.sent)
                                   .where(*sent_mail).order_by(OutgoingMail.id)).all()
        assert [(subject, at is None) for subject, at in kept] == [
            ("Confirm your e-mail address", False), ("waiting", True)]
        with rt.sessions() as session:
            assert purge_sent_mails(session, before=sent + timedelta(seconds=1)) >= 1
            assert session.scalars(select(OutgoingMail.subject).where(*sent_mail)).all() == [
                "waiting"]

    def test_a_user_removed_before_the_mail_went_is_not_mailed(self, client, project, rt, smtp):
        email = f"gone@{project.name}.test"
        request_access(client, project, email)
        removed = client.delete(f"{ACCESSES}/{member(project, email).id}",
                                headers=project.headers("EXPLOIT"))
        assert removed.status_code == 200
        scheduler(rt, smtp.url).tick()
        assert smtp.inbox.to(email) == []


class TestUserCreationMailRecipients:
    def test_recipients_are_told_of_a_request_waiting_for_them(self, client, project, rt, smtp):
        told = [f"desk@{project.name}.test", f"boss@{project.name}.test"]
        set_recipients(client, project, told)
        set_mode(client, project, "manual")
        email = f"new@{project.name}.test"
        request_access(client, project, email)
        scheduler(rt, smtp.url).tick()
        for recipient in told:
            [message] = smtp.inbox.to(recipient)
            assert (message["From"], message["To"], message["Subject"]) == (
                SENDER, recipient, f"[{project.name}] New project user")
            assert body(message) == (
                f"{email} asked for access to the project {project.name}; the request waits "
                f"for an administrator.\n\nStatus WAITING_ACCESS, role REGISTERED_USER, origin "
                f"featurehub.\n")
        assert smtp.inbox.to(email) == []  # not granted yet: no verification

    def test_an_auto_accepted_request_is_announced_granted(self, client, project, rt, smtp):
        told = f"desk@{project.name}.test"
        set_recipients(client, project, [told])
        email = f"auto@{project.name}.test"
        request_access(client, project, email)
        scheduler(rt, smtp.url).tick()
        [message] = smtp.inbox.to(told)
        assert body(message).startswith(
            f"{email} asked for access to the project {project.name} and was granted it at "
            f"once.\n\nStatus ACCESS_GRANTED, role REGISTERED_USER")
        assert len(smtp.inbox.to(email)) == 1  # the requester's verification

    def test_users_created_by_an_administrator_are_announced(self, client, project, rt, smtp):
        told = f"desk@{project.name}.test"
        set_recipients(client, project, [told], path=f"{BASE}/settings")  # the generic path
        email = f"made@{project.name}.test"
        response = client.post(f"{BASE}/users", json={"email": email, "roleName": "EXPLOIT",
                                                      "origin": "ldap"},
                               headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 201
        scheduler(rt, smtp.url).tick()
        [message] = smtp.inbox.to(told)
        assert body(message) == (
            f"{email} was given access to the project {project.name}.\n\nStatus ACCESS_GRANTED, "
            f"role EXPLOIT, origin ldap.\n")

    def test_nobody_listed_nobody_told(self, client, project, rt):
        request_access(client, project, f"quiet@{project.name}.test")
        with rt.sessions() as session:
            kinds = list(session.scalars(select(OutgoingMail.kind).where(
                OutgoingMail.project_id == project.id)))
        assert kinds == ["EMAIL_VERIFICATION"]

    def test_a_recipient_that_is_no_address_is_422_and_not_stored(self, client, project):
        response = client.put(f"{ACCESSES}/settings/user_creation_mail_recipients",
                              json={"name": "user_creation_mail_recipients",
                                    "value": ["desk@example.org", "nobody"]},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json() == problem(
            422, "Invalid value for setting 'user_creation_mail_recipients': \"nobody\" does not "
                 "match \"^[^@\\s]+@[^@\\s]+$\".")
        listed = client.get(f"{ACCESSES}/settings", headers=project.headers("EXPLOIT")).json()
        assert [s["content"]["value"] for s in listed
                if s["content"]["name"] == "user_creation_mail_recipients"] == [[]]


def test_the_scheduler_forgets_access_requests_older_than_an_hour(client, project, rt):
    request_access(client, project, f"counted@{project.name}.test")
    mine = AccessRequestRecord.project_id == project.id
    with rt.sessions() as session:
        recorded = session.scalars(select(AccessRequestRecord.created).where(mine)).one()
        assert purge_access_request_records(session, now=recorded + timedelta(minutes=59)) == 0
        assert purge_access_request_records(session, now=recorded + timedelta(hours=1)) >= 1
        assert session.scalars(select(AccessRequestRecord.id).where(mine)).all() == []
