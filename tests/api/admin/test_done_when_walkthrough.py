"""The rs-admin "Done when" story, end to end through the HTTP API: a manual access request is
accepted, the person confirms their address with the link mailed to them, logs in, is promoted
to a custom role under EXPLOIT, shows up in the CSV export, and receives (by e-mail, through a
real SMTP server on loopback) and reads a notification sent to EXPLOIT."""

from __future__ import annotations

import csv
import io
from typing import Any

from tests.api.admin.test_notification_delivery import (  # noqa: F401 - smtp is a fixture
    SENDER,
    scheduler,
    smtp,
)
from tests.api.test_authentication import password_grant
from tests.conftest import problem

ADMIN_API = "/rs-admin/api/v1"
ACCESSES = f"{ADMIN_API}/accesses"
USERS = f"{ADMIN_API}/users"
ROLES = f"{ADMIN_API}/roles"
NOTIFICATIONS = f"{ADMIN_API}/notifications"

PASSWORD = "walk-the-walk-1"
ADMIN_PASSWORD = "admin-pass-1"
CUSTOM_ROLE = "OPERATOR"


def bearer(token_response: Any) -> dict[str, str]:
    assert token_response.status_code == 200, token_response.text
    return {"Authorization": f"Bearer {token_response.json()['access_token']}"}


def ok(response: Any, status: int = 200) -> Any:
    """The JSON body of a response that must have this status."""
    assert response.status_code == status, response.text
    return response.json()


def emails(page: dict[str, Any]) -> list[str]:
    return [item["content"]["email"] for item in page["content"]]


def project_admin(client, project, settings, email: str) -> dict[str, str]:
    """Headers of a project administrator made through the API: the bootstrap instance admin
    logs in to the project, creates the administrator with a password, who then logs in."""
    instance_admin = bearer(password_grant(client, settings.bootstrap_admin_email,
                                           "bootstrap-password", project.name))
    created = ok(client.post(USERS, json={"email": email, "password": ADMIN_PASSWORD,
                                          "roleName": "PROJECT_ADMIN"},
                             headers=instance_admin), 201)["content"]
    assert (created["role"]["name"], created["status"]) == ("PROJECT_ADMIN", "ACCESS_GRANTED")
    token = password_grant(client, email, ADMIN_PASSWORD, project.name)
    assert token.json()["role"] == "PROJECT_ADMIN"
    return bearer(token)


def test_done_when_walkthrough(client, project, settings, rt, smtp):  # noqa: F811
    # Accounts are instance-wide: name them after the test's own project.
    person_email, admin_email = f"walker@{project.name}.test", f"walk.admin@{project.name}.test"
    admin = project_admin(client, project, settings, admin_email)

    # 1. acceptance_mode is manual; the person requests access with a password and cannot log
    #    in yet.
    updated = ok(client.put(f"{ACCESSES}/settings/acceptance_mode",
                            json={"name": "acceptance_mode", "value": "manual"}, headers=admin))
    assert updated["content"]["value"] == "manual"
    access_settings = ok(client.get(f"{ACCESSES}/settings", headers=admin))
    assert {s["content"]["name"]: s["content"]["value"] for s in access_settings}[
        "acceptance_mode"] == "manual"

    requested = client.post(ACCESSES, params={"scope": project.name}, json={
        "email": person_email, "password": PASSWORD, "firstName": "Wanda", "lastName": "Walker"})
    assert requested.status_code == 201, requested.text
    assert requested.content == b""  # the contract answers an empty body
    refused = password_grant(client, person_email, PASSWORD, project.name)
    assert refused.status_code == 400
    assert refused.json() == {"error": "invalid_grant", "error_description":
                              f"No granted access to project '{project.name}' (WAITING_ACCESS)."}

    # 2. The admin finds the request among the pending accesses and accepts it.
    pending = ok(client.get(f"{USERS}/pendingaccesses", headers=admin))
    assert emails(pending) == [person_email]
    waiting = pending["content"][0]["content"]
    assert (waiting["firstName"], waiting["status"], waiting["role"]["name"]) == (
        "Wanda", "WAITING_ACCESS", "REGISTERED_USER")
    person_id = waiting["id"]
    accepted = ok(client.put(f"{ACCESSES}/{person_id}/accept", headers=admin))
    assert (accepted["content"]["id"], accepted["content"]["status"]) == (
        person_id, "ACCESS_GRANTED")
    assert emails(ok(client.get(f"{USERS}/pendingaccesses", headers=admin))) == []

    #    Accepted, the person is mailed a link that confirms their address.
    scheduler(rt, smtp.url).tick()
    [confirm] = smtp.inbox.to(person_email)
    assert confirm["Subject"] == f"[{project.name}] Confirm your e-mail address"
    [link] = [line for line in confirm.get_content().splitlines() if "/verifyEmail/" in line]
    assert ok(client.get(link)) == {"content": None, "links": []}
    assert ok(client.get(f"{USERS}/{person_id}", headers=admin))["content"]["emailVerified"]

    # 3. The person logs in as REGISTERED_USER, reads their own user, and may not search users.
    token = password_grant(client, person_email, PASSWORD, project.name)
    assert (token.json()["role"], token.json()["scope"]) == ("REGISTERED_USER", project.name)
    person = bearer(token)
    mine = ok(client.get(f"{USERS}/myuser", headers=person))["content"]
    assert (mine["id"], mine["email"], mine["firstName"], mine["lastName"], mine["status"],
            mine["role"]["name"]) == (person_id, person_email, "Wanda", "Walker", "ACCESS_GRANTED",
                                      "REGISTERED_USER")
    assert mine["lastConnection"] is not None
    searched = client.post(f"{USERS}/search", json={}, headers=person)
    assert searched.status_code == 403
    assert searched.headers["content-type"] == "application/problem+json"
    assert searched.json() == problem(
        403, "Role REGISTERED_USER does not hold the access /users/search@POST.")

    # 4. The admin creates a custom role under EXPLOIT and gives it to the person; the person's
    #    next request to an endpoint of EXPLOIT (and not of REGISTERED_USER) passes.
    accesses = ok(client.get(f"{ADMIN_API}/resources", params={"size": 1000},
                             headers=admin))["content"]
    [search_access] = [a["content"] for a in accesses
                       if (a["content"]["microservice"], a["content"]["resource"],
                           a["content"]["verb"]) == ("rs-admin", "/users/search", "POST")]
    assert search_access["defaultRole"] == "EXPLOIT"

    role = ok(client.post(ROLES, json={"name": CUSTOM_ROLE, "parentRole": {"name": "EXPLOIT"}},
                          headers=admin), 201)["content"]
    assert (role["name"], role["isNative"], role["parentRole"]["name"]) == (
        CUSTOM_ROLE, False, "EXPLOIT")
    held = ok(client.get(f"{ROLES}/{CUSTOM_ROLE}/resources", headers=admin))
    assert search_access["id"] in {a["content"]["id"] for a in held}

    user = ok(client.get(f"{USERS}/{person_id}", headers=admin))["content"]
    promoted = ok(client.put(f"{USERS}/{person_id}", json={**user, "role": {"name": CUSTOM_ROLE}},
                             headers=admin))["content"]
    assert (promoted["role"]["name"], promoted["role"]["parentRole"]["name"]) == (
        CUSTOM_ROLE, "EXPLOIT")

    # The role is read from the database on every request, so even the token issued before the
    # promotion (whose claim still says REGISTERED_USER) now passes; a new login names the role.
    found = ok(client.post(f"{USERS}/search", json={"email": {"values": [person_email]}},
                           headers=person))
    assert emails(found) == [person_email]
    fresh = password_grant(client, person_email, PASSWORD, project.name)
    assert fresh.json()["role"] == CUSTOM_ROLE
    person = bearer(fresh)
    found = ok(client.post(f"{USERS}/search", json={}, headers=person))
    assert person_email in emails(found)
    assert ok(client.get(f"{USERS}/myuser", headers=person))["content"]["role"]["name"] == (
        CUSTOM_ROLE)

    # 5. The admin exports the users as CSV; the person is in it, with the new role.
    exported = client.post(f"{USERS}/export", json={}, headers=admin)
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    [row] = [row for row in rows if row["email"] == person_email]
    assert (row["id"], row["firstName"], row["lastName"], row["status"], row["role"]) == (
        str(person_id), "Wanda", "Walker", "ACCESS_GRANTED", CUSTOM_ROLE)
    assert {r["email"] for r in rows} == {person_email, admin_email}

    # 6. The person is notified at once (the default); the admin notifies EXPLOIT; one scheduler
    #    run sends the person exactly one e-mail; the person sees it UNREAD, reads it, sees READ.
    frequency = ok(client.get(f"{NOTIFICATIONS}/settings", headers=person))
    assert frequency["content"]["frequency"] == "IMMEDIATE_ONLY"
    assert ok(client.get(f"{NOTIFICATIONS}/summary", headers=person)) == {
        "unreads": 0, "reads": 0}

    notification = ok(client.post(f"{NOTIFICATIONS}/create", json={
        "level": "WARNING", "title": "Planned outage", "message": "Down on Sunday at noon.",
        "roleRecipients": ["EXPLOIT"], "sender": "ops"}, headers=admin), 201)["content"]
    assert (notification["roleRecipients"], notification["status"]) == (["EXPLOIT"], "UNREAD")

    report = scheduler(rt, smtp.url).tick()
    assert report.sent >= 1
    [_, message] = smtp.inbox.to(person_email)
    assert message["To"] == person_email
    assert message["From"] == SENDER
    assert message["Subject"] == f"[{project.name}] WARNING: Planned outage"
    assert message["X-Featurehub-Notification"] == str(notification["id"])
    assert message.get_content().strip() == "Down on Sunday at noon."

    page = ok(client.post(NOTIFICATIONS, json={}, headers=person))
    assert [(n["content"]["id"], n["content"]["title"], n["content"]["status"])
            for n in page["content"]] == [(notification["id"], "Planned outage", "UNREAD")]
    assert ok(client.get(f"{NOTIFICATIONS}/summary", headers=person)) == {
        "unreads": 1, "reads": 0}

    read = ok(client.put(f"{NOTIFICATIONS}/{notification['id']}/read", headers=person))
    assert read["content"]["status"] == "READ"
    page = ok(client.post(NOTIFICATIONS, json={}, headers=person))
    assert [(n["content"]["id"], n["content"]["status"]) for n in page["content"]] == [
        (notification["id"], "READ")]
    assert ok(client.get(f"{NOTIFICATIONS}/{notification['id']}", headers=person))[
        "content"]["status"] == "READ"
    assert ok(client.get(f"{NOTIFICATIONS}/summary", headers=person)) == {
        "unreads": 0, "reads": 1}

    # Sent once: a second run sends the person nothing more.
    scheduler(rt, smtp.url).tick()
    assert len(smtp.inbox.to(person_email)) == 2
