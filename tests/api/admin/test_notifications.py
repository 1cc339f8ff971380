"""rs-admin notifications: one class per operation. Every caller sees only the notifications
addressed to them, with their own read state."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from featurehub.db.platform import Role
from tests.conftest import problem

BASE = "/rs-admin/api/v1/notifications"


def bearer(project, email: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {project.token(email)}"}


def create(client, headers, **fields) -> dict[str, Any]:
    body = {"level": "INFO", "title": "Maintenance", "message": "Down at noon.", **fields}
    response = client.post(f"{BASE}/create", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["content"]


def listed(client, headers, body=None, **params) -> dict[str, Any]:
    response = client.post(BASE, json=body or {}, headers=headers, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def titles(page: dict[str, Any]) -> list[str]:
    return [item["content"]["title"] for item in page["content"]]


def add_custom_role(project, name: str, parent: str) -> None:
    with project.runtime.sessions() as session:
        parent_id = session.scalars(select(Role.id).where(
            Role.project_id == project.id, Role.name == parent)).one()
        session.add(Role(project_id=project.id, name=name, parent_id=parent_id, native=False))
        session.commit()


@pytest.fixture
def admin(project) -> dict[str, str]:
    return bearer(project, project.user("PROJECT_ADMIN", email=f"boss@{project.name}.test"))


class TestCreateNotification:
    def test_answers_201_with_the_wrapped_notification(self, client, project, admin):
        user = project.user("REGISTERED_USER")
        response = client.post(f"{BASE}/create", json={
            "level": "WARNING", "title": "Disk", "message": "Almost full",
            "projectUserRecipients": [user], "sender": "ops"}, headers=admin)
        assert response.status_code == 201
        body = response.json()
        content = body["content"]
        assert body == {"links": [], "content": {
            "id": content["id"], "date": content["date"], "level": "WARNING", "title": "Disk",
            "message": "Almost full", "mimeType": "text/plain", "sender": "ops",
            "status": "UNREAD", "roleRecipients": [], "projectUserRecipients": [user]}}

    def test_sender_defaults_to_the_caller(self, client, project, admin):
        created = create(client, admin, roleRecipients=["ADMIN"], mimeType="text/html")
        assert created["sender"] == f"boss@{project.name}.test"
        assert created["mimeType"] == "text/html"

    def test_a_role_reaches_the_roles_above_it_and_project_admin(self, client, project, admin):
        add_custom_role(project, "OPERATOR", parent="EXPLOIT")
        add_custom_role(project, "INTERN", parent="REGISTERED_USER")
        people = {role: project.user(role) for role in
                  ("REGISTERED_USER", "EXPLOIT", "OPERATOR", "INTERN", "ADMIN")}
        create(client, admin, title="to exploit", roleRecipients=["EXPLOIT"])
        reached = {role for role, email in people.items()
                   if titles(listed(client, bearer(project, email)))}
        assert reached == {"EXPLOIT", "OPERATOR", "ADMIN"}
        assert titles(listed(client, admin)) == ["to exploit"]

    def test_a_user_that_is_not_granted_is_not_reached(self, client, project, admin):
        waiting = project.user("ADMIN", status="WAITING_ACCESS")
        created = create(client, admin, roleRecipients=["ADMIN"])
        with project.runtime.sessions() as session:
            from featurehub.db.admin import NotificationRecipient

            emails = set(session.scalars(select(NotificationRecipient.email).where(
                NotificationRecipient.notification_id == created["id"])))
        assert waiting not in emails

    def test_unknown_role_is_422(self, client, admin):
        response = client.post(f"{BASE}/create", json={
            "level": "INFO", "title": "t", "message": "m", "roleRecipients": ["GHOST"]},
            headers=admin)
        assert response.status_code == 422
        assert response.json() == problem(422, "Role 'GHOST' does not exist in this project.")

    def test_unknown_user_is_422(self, client, admin):
        response = client.post(f"{BASE}/create", json={
            "level": "INFO", "title": "t", "message": "m",
            "projectUserRecipients": ["nobody@x.test"]}, headers=admin)
        assert response.status_code == 422
        assert response.json() == problem(422, "Not users of this project: nobody@x.test.")

    def test_no_recipient_is_422(self, client, admin):
        response = client.post(f"{BASE}/create", json={
            "level": "INFO", "title": "t", "message": "m"}, headers=admin)
        assert response.status_code == 422
        assert response.json() == problem(
            422, "A notification needs at least one role or user recipient.")

    def test_unknown_level_is_400(self, client, admin):
        response = client.post(f"{BASE}/create", json={
            "level": "LOUD", "title": "t", "message": "m", "roleRecipients": ["ADMIN"]},
            headers=admin)
        assert response.status_code == 400

    def test_without_token_is_401(self, client, project):
        response = client.post(f"{BASE}/create", json={"level": "INFO", "title": "t",
                                                       "message": "m"})
        assert response.status_code == 401

    def test_admin_role_is_403(self, client, as_role):
        response = client.post(f"{BASE}/create", json={
            "level": "INFO", "title": "t", "message": "m", "roleRecipients": ["ADMIN"]},
            headers=as_role("ADMIN"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role ADMIN does not hold the access /notifications/create@POST.")


class TestRetrieveNotifications:
    def test_lists_the_callers_own_newest_first_paged_by_20(self, client, project, admin):
        user = project.user("REGISTERED_USER")
        other = project.user("REGISTERED_USER")
        for number in range(22):
            create(client, admin, title=f"n{number}", projectUserRecipients=[user])
        create(client, admin, title="not yours", projectUserRecipients=[other])
        page = listed(client, bearer(project, user))
        assert page["page"] == {"number": 0, "size": 20, "totalElements": 22, "totalPages": 2}
        assert titles(page) == [f"n{number}" for number in range(21, 1, -1)]
        assert titles(listed(client, bearer(project, user), page=1)) == ["n1", "n0"]

    def test_sorts_on_request(self, client, project, admin):
        user = project.user("REGISTERED_USER")
        for title in ("b", "a", "c"):
            create(client, admin, title=title, projectUserRecipients=[user])
        assert titles(listed(client, bearer(project, user), sort="title,asc")) == ["a", "b", "c"]

    def test_filters_include_exclude_and_match_modes(self, client, project, admin):
        user = project.user("REGISTERED_USER")
        reader = bearer(project, user)
        create(client, admin, title="one", sender="Alpha-Ops", projectUserRecipients=[user])
        second = create(client, admin, title="two", sender="beta-ops", level="ERROR",
                        projectUserRecipients=[user])
        create(client, admin, title="three", sender="gamma", projectUserRecipients=[user])

        def only(filter_: dict[str, Any]) -> list[str]:
            return sorted(titles(listed(client, reader, filter_)))

        assert only({"senders": {"values": ["alpha-ops"]}}) == []
        assert only({"senders": {"values": ["alpha-ops"], "ignoreCase": True}}) == ["one"]
        assert only({"senders": {"values": ["-OPS"], "matchMode": "ENDS_WITH"}}) == []
        assert only({"senders": {"values": ["-ops"], "matchMode": "ENDS_WITH"}}) == ["two"]
        assert only({"senders": {"values": ["-OPS"], "matchMode": "ENDS_WITH",
                                 "ignoreCase": True}}) == ["one", "two"]
        assert only({"senders": {"values": ["al"], "matchMode": "STARTS_WITH",
                                 "ignoreCase": True}}) == ["one"]
        assert only({"senders": {"values": ["amm"], "matchMode": "CONTAINS"}}) == ["three"]
        assert only({"senders": {"values": ["a%"], "matchMode": "CONTAINS"}}) == []
        assert only({"senders": {"values": ["gamma"], "mode": "EXCLUDE"}}) == ["one", "two"]
        assert only({"levels": {"values": ["ERROR"]}}) == ["two"]
        assert only({"ids": {"values": [second["id"]], "mode": "EXCLUDE"}}) == ["one", "three"]
        client.put(f"{BASE}/{second['id']}/read", headers=reader)
        assert only({"status": {"values": ["READ"]}}) == ["two"]
        assert only({"status": {"values": ["READ"], "mode": "EXCLUDE"}}) == ["one", "three"]
        assert only({"dates": {"after": "2000-01-01T00:00:00Z"}}) == ["one", "three", "two"]
        assert only({"dates": {"before": "2000-01-01T00:00:00Z"}}) == []

    def test_a_bad_date_is_400(self, client, project):
        response = client.post(BASE, json={"dates": {"after": "yesterday"}},
                               headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 400

    def test_without_token_is_401(self, client, project):
        assert client.post(BASE, json={}).status_code == 401

    def test_public_role_is_403(self, client, as_role):
        response = client.post(BASE, json={}, headers=as_role("PUBLIC"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role PUBLIC does not hold the access /notifications@POST.")


class TestRetrieveNotification:
    def test_answers_the_callers_copy(self, client, project, admin):
        user = project.user("REGISTERED_USER")
        created = create(client, admin, projectUserRecipients=[user])
        response = client.get(f"{BASE}/{created['id']}", headers=bearer(project, user))
        assert response.status_code == 200
        assert response.json() == {"content": created, "links": []}

    def test_a_notification_not_addressed_to_the_caller_is_404(self, client, project, admin):
        created = create(client, admin, projectUserRecipients=[project.user("EXPLOIT")])
        response = client.get(f"{BASE}/{created['id']}",
                              headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 404
        assert response.json() == problem(404, f"Notification {created['id']} does not exist.")

    def test_another_projects_user_does_not_see_it(self, client, project, other_project,
                                                   admin):
        created = create(client, admin, roleRecipients=["REGISTERED_USER"])
        response = client.get(f"{BASE}/{created['id']}",
                              headers=other_project.headers("PROJECT_ADMIN"))
        assert response.status_code == 404

    def test_without_token_is_401(self, client, project):
        assert client.get(f"{BASE}/1", params={"scope": project.name}).status_code == 401

    def test_public_role_is_403(self, client, as_role):
        assert client.get(f"{BASE}/1", headers=as_role("PUBLIC")).status_code == 403


class TestReadAndUnread:
    def test_read_by_one_recipient_stays_unread_for_another(self, client, project, admin):
        first, second = project.user("ADMIN"), project.user("ADMIN")
        created = create(client, admin, roleRecipients=["ADMIN"])
        response = client.put(f"{BASE}/{created['id']}/read", headers=bearer(project, first))
        assert response.status_code == 200
        assert response.json()["content"]["status"] == "READ"
        other = client.get(f"{BASE}/{created['id']}", headers=bearer(project, second))
        assert other.json()["content"]["status"] == "UNREAD"
        back = client.put(f"{BASE}/{created['id']}/unread", headers=bearer(project, first))
        assert back.status_code == 200
        assert back.json()["content"]["status"] == "UNREAD"

    @pytest.mark.parametrize("action", ["read", "unread"])
    def test_unknown_is_404(self, client, project, action):
        response = client.put(f"{BASE}/999999/{action}",
                              headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 404

    @pytest.mark.parametrize("action", ["read", "unread"])
    def test_refusals(self, client, project, as_role, action):
        assert client.put(f"{BASE}/1/{action}").status_code == 401
        assert client.put(f"{BASE}/1/{action}", headers=as_role("PUBLIC")).status_code == 403


class TestSummary:
    def test_counts_unreads_and_reads(self, client, project, admin):
        user = project.user("REGISTERED_USER")
        reader = bearer(project, user)
        ids = [create(client, admin, projectUserRecipients=[user])["id"] for _ in range(3)]
        client.put(f"{BASE}/{ids[0]}/read", headers=reader)
        response = client.get(f"{BASE}/summary", headers=reader)
        assert response.status_code == 200
        assert response.json() == {"unreads": 2, "reads": 1}

    def test_refusals(self, client, project, as_role):
        assert client.get(f"{BASE}/summary").status_code == 401
        assert client.get(f"{BASE}/summary", headers=as_role("PUBLIC")).status_code == 403


class TestDeleteNotification:
    def test_removes_it_from_the_callers_list_only(self, client, project, admin):
        first, second = project.user("ADMIN"), project.user("ADMIN")
        created = create(client, admin, roleRecipients=["ADMIN"])
        response = client.delete(f"{BASE}/{created['id']}", headers=bearer(project, first))
        assert response.status_code == 200
        assert response.json() == {"content": None, "links": []}
        assert client.get(f"{BASE}/{created['id']}",
                          headers=bearer(project, first)).status_code == 404
        assert client.get(f"{BASE}/{created['id']}",
                          headers=bearer(project, second)).status_code == 200

    def test_unknown_is_404(self, client, project):
        response = client.delete(f"{BASE}/999999", headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 404

    def test_refusals(self, client, as_role):
        assert client.delete(f"{BASE}/1").status_code == 401
        assert client.delete(f"{BASE}/1", headers=as_role("PUBLIC")).status_code == 403


class TestDeleteNotifications:
    def test_deletes_the_callers_matching_selection(self, client, project, admin):
        user, other = project.user("REGISTERED_USER"), project.user("REGISTERED_USER")
        create(client, admin, title="keep", projectUserRecipients=[user, other])
        create(client, admin, title="drop", level="ERROR", projectUserRecipients=[user, other])
        response = client.request("DELETE", f"{BASE}/delete",
                                  json={"levels": {"values": ["ERROR"]}},
                                  headers=bearer(project, user))
        assert response.status_code == 200
        assert titles(listed(client, bearer(project, user))) == ["keep"]
        assert sorted(titles(listed(client, bearer(project, other)))) == ["drop", "keep"]

    def test_without_filter_deletes_everything_of_the_caller(self, client, project, admin):
        user = project.user("REGISTERED_USER")
        create(client, admin, projectUserRecipients=[user])
        response = client.request("DELETE", f"{BASE}/delete", json={},
                                  headers=bearer(project, user))
        assert response.status_code == 200
        assert listed(client, bearer(project, user))["content"] == []

    def test_without_body_deletes_everything_of_the_caller(self, client, project, admin):
        user = project.user("REGISTERED_USER")
        create(client, admin, projectUserRecipients=[user])
        response = client.delete(f"{BASE}/delete", headers=bearer(project, user))
        assert response.status_code == 200
        assert client.post(BASE, headers=bearer(project, user)).json()["content"] == []

    def test_refusals(self, client, as_role):
        assert client.request("DELETE", f"{BASE}/delete", json={}).status_code == 401
        assert client.request("DELETE", f"{BASE}/delete", json={},
                              headers=as_role("PUBLIC")).status_code == 403


class TestNotificationSettings:
    def test_default_is_immediate(self, client, project):
        response = client.get(f"{BASE}/settings", headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 200
        assert response.json() == {"content": {"frequency": "IMMEDIATE_ONLY", "days": 1,
                                                "hours": 0}, "links": []}

    def test_update_is_the_callers_own(self, client, project):
        user, other = project.user("REGISTERED_USER"), project.user("REGISTERED_USER")
        response = client.put(f"{BASE}/settings", json={"frequency": "CUSTOM", "days": 2,
                                                        "hours": 3},
                              headers=bearer(project, user))
        assert response.status_code == 200
        assert response.json()["content"] == {"frequency": "CUSTOM", "days": 2, "hours": 3}
        assert client.get(f"{BASE}/settings", headers=bearer(project, user)).json()[
            "content"] == {"frequency": "CUSTOM", "days": 2, "hours": 3}
        assert client.get(f"{BASE}/settings", headers=bearer(project, other)).json()[
            "content"]["frequency"] == "IMMEDIATE_ONLY"
        partial = client.put(f"{BASE}/settings", json={"frequency": "DAILY"},
                             headers=bearer(project, user))
        assert partial.json()["content"] == {"frequency": "DAILY", "days": 2, "hours": 3}

    def test_custom_without_period_is_422(self, client, project):
        response = client.put(f"{BASE}/settings", json={"frequency": "CUSTOM", "days": 0,
                                                        "hours": 0},
                              headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 422
        assert response.json() == problem(
            422, "A CUSTOM frequency needs a period: days or hours above 0.")

    def test_unknown_frequency_is_400(self, client, project):
        response = client.put(f"{BASE}/settings", json={"frequency": "HOURLY"},
                              headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 400

    def test_refusals(self, client, as_role):
        assert client.get(f"{BASE}/settings").status_code == 401
        assert client.put(f"{BASE}/settings", json={}).status_code == 401
        public = as_role("PUBLIC")
        assert client.get(f"{BASE}/settings", headers=public).status_code == 403
        assert client.put(f"{BASE}/settings", json={}, headers=public).status_code == 403
