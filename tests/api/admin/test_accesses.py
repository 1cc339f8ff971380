"""rs-admin access requests, the user status machine and the access settings."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from featurehub.db.admin import (
    AccessRequestRecord,
    Notification,
    NotificationRecipient,
    NotificationSettings,
)
from featurehub.db.base import utcnow
from featurehub.db.platform import Account, EmailVerification, ProjectUser
from tests.api.admin.test_notifications import add_custom_role
from tests.api.test_authentication import password_grant
from tests.conftest import problem

BASE = "/rs-admin/api/v1"
ACCESSES = f"{BASE}/accesses"


def set_mode(client, project, mode):
    response = client.put(f"{ACCESSES}/settings/acceptance_mode",
                          json={"name": "acceptance_mode", "value": mode},
                          headers=project.headers("PROJECT_ADMIN"))
    assert response.status_code == 200, response.text


def request_access(client, project, email, **fields):
    body = {"email": email, "password": "secret-1", **fields}
    return client.post(ACCESSES, json=body, params={"scope": project.name})


def member(project, email):
    with project.runtime.sessions() as session:
        user = session.scalars(select(ProjectUser).where(
            ProjectUser.project_id == project.id, ProjectUser.email == email)).one()
        session.expunge(user)
        return user


def user_with_status(project, status, role="REGISTERED_USER"):
    email = project.user(role, status=status)
    return member(project, email).id


def notify_by_api(client, admin, title, **recipients):
    response = client.post(f"{BASE}/notifications/create", headers=admin, json={
        "level": "INFO", "title": title, "message": f"About {title}.", **recipients})
    assert response.status_code == 201, response.text
    return response.json()["content"]["id"]


def notification_titles(client, project, email):
    headers = {"Authorization": f"Bearer {project.token(email)}"}
    page = client.post(f"{BASE}/notifications", json={}, headers=headers).json()
    return sorted(item["content"]["title"] for item in page["content"])


def notification_rows(project, email):
    """The user's notification copies and delivery settings in the project."""
    with project.runtime.sessions() as session:
        copies = session.scalars(select(NotificationRecipient.id).where(
            NotificationRecipient.project_id == project.id,
            NotificationRecipient.email == email)).all()
        settings = session.scalars(select(NotificationSettings.id).where(
            NotificationSettings.project_id == project.id,
            NotificationSettings.email == email)).all()
        return len(copies), len(settings)


class TestRequestAccess:
    def test_auto_accept_by_default_grants_at_once_and_the_person_logs_in(self, client, project):
        response = request_access(client, project, "ann@example.org", firstName="Ann",
                                  accessGroups=["g1"], metadata=[{"key": "team", "value": "a"}])
        assert response.status_code == 201
        assert response.content == b""
        user = member(project, "ann@example.org")
        assert (user.status, user.first_name, user.access_groups) == (
            "ACCESS_GRANTED", "Ann", ["g1"])
        token = password_grant(client, "ann@example.org", "secret-1", project.name)
        assert token.status_code == 200
        assert token.json()["role"] == "REGISTERED_USER"

    def test_a_scope_with_a_nul_names_no_project(self, client, project):
        response = client.post(ACCESSES, json={"email": "nul@example.org", "password": "secret-1"},
                               params={"scope": f"{project.name}\x00"})
        assert response.status_code == 404, response.text
        assert response.headers["content-type"] == "application/problem+json"
        with project.runtime.sessions() as session:
            assert session.scalar(select(ProjectUser.id).where(
                ProjectUser.email == "nul@example.org")) is None

    def test_manual_mode_waits_and_no_token_is_issued(self, client, project):
        set_mode(client, project, "manual")
        assert request_access(client, project, "bob@example.org").status_code == 201
        assert member(project, "bob@example.org").status == "WAITING_ACCESS"
        token = password_grant(client, "bob@example.org", "secret-1", project.name)
        assert token.status_code == 400
        assert token.json()["error"] == "invalid_grant"

    def test_default_groups_are_added(self, client, project):
        response = client.put(f"{ACCESSES}/settings/default_groups",
                              json={"name": "default_groups", "value": ["all"]},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 200
        request_access(client, project, "gus@example.org", accessGroups=["mine"])
        assert member(project, "gus@example.org").access_groups == ["mine", "all"]

    def test_existing_account_keeps_its_password(self, client, project, other_project):
        assert request_access(client, other_project, "cat@example.org").status_code == 201
        response = request_access(client, project, "cat@example.org", password="other-pass")
        assert response.status_code == 201
        assert password_grant(client, "cat@example.org", "other-pass",
                              project.name).status_code == 400
        assert password_grant(client, "cat@example.org", "secret-1",
                              project.name).status_code == 200

    def test_already_a_member_is_409(self, client, project):
        request_access(client, project, "dan@example.org")
        response = request_access(client, project, "dan@example.org")
        assert response.status_code == 409
        assert response.json() == problem(
            409, "'dan@example.org' is already a user of this project (ACCESS_GRANTED).")

    def test_a_role_above_the_default_role_is_403(self, client, project):
        response = request_access(client, project, "eve@example.org", roleName="EXPLOIT")
        assert response.status_code == 403
        assert response.json() == problem(
            403, "An access request may ask for the role REGISTERED_USER or a role below it, "
                 "not EXPLOIT.")

    def test_without_scope_is_400(self, client):
        response = client.post(ACCESSES, json={"email": "x@example.org"})
        assert response.status_code == 400
        assert response.json() == problem(
            400, "Name the project with the 'scope' query parameter or header, or send a token.")

    def test_unknown_project_is_404(self, client):
        response = client.post(ACCESSES, json={"email": "x@example.org"}, params={"scope": "nope"})
        assert response.status_code == 404

    def test_missing_email_is_400(self, client, project):
        response = client.post(ACCESSES, json={"firstName": "x"}, params={"scope": project.name})
        assert response.status_code == 400


class TestRequestExternalAccess:
    def test_grants_at_once_with_the_named_role(self, client, project):
        response = client.post(f"{ACCESSES}/external",
                               json={"email": "ext@example.org", "roleName": "EXPLOIT",
                                     "origin": "partner"},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 201
        content = response.json()["content"]
        assert (content["status"], content["role"]["name"], content["origin"]) == (
            "ACCESS_GRANTED", "EXPLOIT", "partner")

    def test_a_role_above_the_callers_is_403(self, client, project):
        response = client.post(f"{ACCESSES}/external",
                               json={"email": "ext@example.org", "roleName": "ADMIN"},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role EXPLOIT cannot give the role ADMIN, which is above it.")

    def test_unknown_role_is_422(self, client, project):
        response = client.post(f"{ACCESSES}/external",
                               json={"email": "ext@example.org", "roleName": "NOPE"},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 422
        assert response.json() == problem(422, "Role 'NOPE' does not exist.")

    def test_registered_user_is_403(self, client, project):
        response = client.post(f"{ACCESSES}/external", json={"email": "ext@example.org"},
                               headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 403

    def test_without_token_is_401(self, client, project):
        response = client.post(f"{ACCESSES}/external", json={"email": "ext@example.org"})
        assert response.status_code == 401


TRANSITIONS = [
    ("accept", "WAITING_ACCESS", "ACCESS_GRANTED"),
    ("accept", "ACCESS_DENIED", "ACCESS_GRANTED"),
    ("deny", "WAITING_ACCESS", "ACCESS_DENIED"),
    ("inactive", "ACCESS_GRANTED", "ACCESS_INACTIVE"),
    ("active", "ACCESS_INACTIVE", "ACCESS_GRANTED"),
]
NEEDS = {"accept": "WAITING_ACCESS or ACCESS_DENIED", "deny": "WAITING_ACCESS",
         "inactive": "ACCESS_GRANTED", "active": "ACCESS_INACTIVE"}
STATUSES = ["WAITING_ACCESS", "ACCESS_DENIED", "ACCESS_GRANTED", "ACCESS_INACTIVE",
            "WAITING_ACCOUNT_ACTIVE"]


class TestStatusMachine:
    @pytest.mark.parametrize(("action", "before", "after"), TRANSITIONS)
    def test_allowed_transition(self, client, project, action, before, after):
        user_id = user_with_status(project, before)
        response = client.put(f"{ACCESSES}/{user_id}/{action}", headers=project.headers("EXPLOIT"))
        assert response.status_code == 200
        assert response.json()["content"]["status"] == after
        assert member(project, response.json()["content"]["email"]).status == after

    @pytest.mark.parametrize(("action", "before"), [
        (action, status) for action in NEEDS for status in STATUSES
        if (action, status) not in {(a, b) for a, b, _ in TRANSITIONS}])
    def test_any_other_transition_is_409_naming_the_status(self, client, project, action, before):
        user_id = user_with_status(project, before)
        response = client.put(f"{ACCESSES}/{user_id}/{action}", headers=project.headers("EXPLOIT"))
        assert response.status_code == 409
        assert response.json() == problem(
            409, f"User {user_id} is {before}; {action} needs {NEEDS[action]}.")

    def test_unknown_user_is_404(self, client, project):
        response = client.put(f"{ACCESSES}/999999/accept", headers=project.headers("EXPLOIT"))
        assert response.status_code == 404
        assert response.json() == problem(404, "User 999999 does not exist.")

    def test_user_of_another_project_is_404(self, client, project, other_project):
        user_id = user_with_status(other_project, "WAITING_ACCESS")
        response = client.put(f"{ACCESSES}/{user_id}/accept", headers=project.headers("EXPLOIT"))
        assert response.status_code == 404

    def test_a_user_above_the_caller_is_403(self, client, project):
        user_id = user_with_status(project, "ACCESS_GRANTED", role="ADMIN")
        response = client.put(f"{ACCESSES}/{user_id}/inactive", headers=project.headers("EXPLOIT"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, f"Role EXPLOIT cannot manage user {user_id}, whose role ADMIN is above it.")

    def test_registered_user_is_403(self, client, project):
        user_id = user_with_status(project, "WAITING_ACCESS")
        response = client.put(f"{ACCESSES}/{user_id}/accept",
                              headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 403

    def test_without_token_is_401(self, client, project):
        response = client.put(f"{ACCESSES}/1/accept")
        assert response.status_code == 401

    def test_inactive_user_loses_its_token_at_once(self, client, project):
        email = project.user("EXPLOIT")
        headers = {"Authorization": f"Bearer {project.token(email, 'EXPLOIT')}"}
        assert client.get(f"{ACCESSES}/settings", headers=headers).status_code == 200
        user_id = member(project, email).id
        client.put(f"{ACCESSES}/{user_id}/inactive", headers=project.headers("PROJECT_ADMIN"))
        assert client.get(f"{ACCESSES}/settings", headers=headers).status_code == 401


class TestRemoveAccess:
    @pytest.mark.parametrize("status", STATUSES)
    def test_deletes_from_any_status_and_keeps_the_account(self, client, project, status):
        user_id = user_with_status(project, status)
        response = client.delete(f"{ACCESSES}/{user_id}", headers=project.headers("EXPLOIT"))
        assert response.status_code == 200
        assert response.json() == {"content": None, "links": []}
        with project.runtime.sessions() as session:
            assert session.get(ProjectUser, user_id) is None

    def test_account_stays(self, client, project):
        request_access(client, project, "stay@example.org")
        user_id = member(project, "stay@example.org").id
        client.delete(f"{ACCESSES}/{user_id}", headers=project.headers("EXPLOIT"))
        with project.runtime.sessions() as session:
            assert session.scalars(select(Account).where(
                Account.email == "stay@example.org")).first() is not None

    def test_unknown_is_404(self, client, project):
        response = client.delete(f"{ACCESSES}/999999", headers=project.headers("EXPLOIT"))
        assert response.status_code == 404

    def test_a_user_above_the_caller_is_403(self, client, project):
        user_id = user_with_status(project, "ACCESS_GRANTED", role="PROJECT_ADMIN")
        response = client.delete(f"{ACCESSES}/{user_id}", headers=project.headers("ADMIN"))
        assert response.status_code == 403

    def test_registered_user_is_403(self, client, project):
        response = client.delete(f"{ACCESSES}/1", headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 403

    def test_the_users_notifications_and_their_settings_go_others_keep_theirs(
            self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        leaving, staying = project.user("EXPLOIT"), project.user("EXPLOIT")
        notify_by_api(client, admin, "team", roleRecipients=["EXPLOIT"])
        only_theirs = notify_by_api(client, admin, "yours", projectUserRecipients=[leaving])
        notify_by_api(client, admin, "both", projectUserRecipients=[leaving, staying])
        settings = client.put(f"{BASE}/notifications/settings", json={"frequency": "NEVER"},
                              headers={"Authorization": f"Bearer {project.token(leaving)}"})
        assert settings.status_code == 200
        assert notification_rows(project, leaving) == (3, 1)

        response = client.delete(f"{ACCESSES}/{member(project, leaving).id}",
                                 headers=project.headers("EXPLOIT"))
        assert response.status_code == 200
        assert notification_rows(project, leaving) == (0, 0)
        assert notification_titles(client, project, staying) == ["both", "team"]
        with project.runtime.sessions() as session:
            assert session.get(Notification, only_theirs) is None  # nobody holds it anymore

        # Back in the project, the person starts afresh.
        client.post(f"{BASE}/users", json={"email": leaving}, headers=admin)
        headers = {"Authorization": f"Bearer {project.token(leaving)}"}
        assert notification_titles(client, project, leaving) == []
        assert client.get(f"{BASE}/notifications/settings", headers=headers).json()[
            "content"] == {"frequency": "IMMEDIATE_ONLY", "days": 1, "hours": 0}

    def test_a_refused_removal_keeps_the_notifications(self, client, project):
        boss = project.user("PROJECT_ADMIN")
        notify_by_api(client, project.headers("PROJECT_ADMIN"), "mine",
                      projectUserRecipients=[boss])
        response = client.delete(f"{ACCESSES}/{member(project, boss).id}",
                                 headers=project.headers("ADMIN"))
        assert response.status_code == 403
        assert notification_titles(client, project, boss) == ["mine"]


class TestVerifyEmail:
    def token_of(self, project, email):
        with project.runtime.sessions() as session:
            return session.scalars(select(EmailVerification.token).join(
                ProjectUser, ProjectUser.id == EmailVerification.project_user_id).where(
                ProjectUser.email == email, ProjectUser.project_id == project.id)).one()

    def test_marks_the_email_verified_once(self, client, project):
        request_access(client, project, "ver@example.org")
        token = self.token_of(project, "ver@example.org")
        admin = project.headers("PROJECT_ADMIN")
        user_id = member(project, "ver@example.org").id
        before = client.get(f"{BASE}/users/{user_id}", headers=admin)
        for _ in range(2):
            response = client.get(f"{ACCESSES}/verifyEmail/{token}",
                                  params={"scope": project.name})
            assert response.status_code == 200
            assert response.json() == {"content": None, "links": []}
        if before.status_code == 200:  # the users endpoints exist
            assert before.json()["content"]["emailVerified"] is False
            after = client.get(f"{BASE}/users/{user_id}", headers=admin)
            assert after.json()["content"]["emailVerified"] is True

    def test_unknown_token_is_404(self, client, project):
        response = client.get(f"{ACCESSES}/verifyEmail/nope", params={"scope": project.name})
        assert response.status_code == 404
        assert response.json() == problem(404, "This email verification link is unknown.")

    def test_token_of_another_project_is_404(self, client, project, other_project):
        request_access(client, other_project, "ver2@example.org")
        token = self.token_of(other_project, "ver2@example.org")
        response = client.get(f"{ACCESSES}/verifyEmail/{token}", params={"scope": project.name})
        assert response.status_code == 404


class TestAccessSettings:
    def test_lists_the_five_settings_with_defaults(self, client, project):
        response = client.get(f"{ACCESSES}/settings", headers=project.headers("EXPLOIT"))
        assert response.status_code == 200
        assert {s["content"]["name"]: (s["content"]["defaultValue"], s["content"]["value"])
                for s in response.json()} == {
            "acceptance_mode": ("auto-accept", "auto-accept"),
            "default_groups": ([], []),
            "default_role": ("REGISTERED_USER", "REGISTERED_USER"),
            "user_creation_mail_recipients": ([], []),
            "access_requests_per_hour": (20, 20),
        }

    def test_update_answers_the_setting(self, client, project):
        response = client.put(f"{ACCESSES}/settings/acceptance_mode",
                              json={"name": "acceptance_mode", "value": "manual"},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 200
        assert response.json()["content"]["value"] == "manual"
        listed = client.get(f"{ACCESSES}/settings", headers=project.headers("EXPLOIT")).json()
        assert {"manual"} == {s["content"]["value"] for s in listed
                              if s["content"]["name"] == "acceptance_mode"}

    def test_default_role_gives_requesters_that_role(self, client, project):
        response = client.put(f"{ACCESSES}/settings/default_role",
                              json={"name": "default_role", "value": "EXPLOIT"},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 200
        request_access(client, project, "exp@example.org")
        token = password_grant(client, "exp@example.org", "secret-1", project.name)
        assert token.json()["role"] == "EXPLOIT"

    def test_default_role_must_exist(self, client, project):
        response = client.put(f"{ACCESSES}/settings/default_role",
                              json={"name": "default_role", "value": "NOPE"},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422
        assert response.json() == problem(422, "Role 'NOPE' does not exist.")

    def test_wrong_value_is_422(self, client, project):
        response = client.put(f"{ACCESSES}/settings/acceptance_mode",
                              json={"name": "acceptance_mode", "value": "sometimes"},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422

    def test_name_mismatch_is_422(self, client, project):
        response = client.put(f"{ACCESSES}/settings/acceptance_mode",
                              json={"name": "default_role", "value": "manual"},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422

    def test_other_setting_is_404(self, client, project):
        response = client.put(f"{ACCESSES}/settings/other",
                              json={"name": "other", "value": 1},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 404

    def test_update_by_admin_is_403(self, client, project):
        response = client.put(f"{ACCESSES}/settings/acceptance_mode",
                              json={"name": "acceptance_mode", "value": "manual"},
                              headers=project.headers("ADMIN"))
        assert response.status_code == 403

    def test_list_by_registered_user_is_403(self, client, project):
        response = client.get(f"{ACCESSES}/settings", headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 403

    def test_list_without_token_is_401(self, client, project):
        assert client.get(f"{ACCESSES}/settings").status_code == 401


class TestUpdateSetting:
    """The generic `PUT /settings/{name}` checks the access settings as `/accesses/settings`
    does: first of all the default role."""

    def put(self, client, project, value, role="ADMIN"):
        return client.put(f"{BASE}/settings/default_role",
                          json={"name": "default_role", "value": value},
                          headers=project.headers(role))

    def stored(self, client, project):
        listed = client.get(f"{BASE}/settings", params={"names": "default_role"},
                            headers=project.headers("ADMIN")).json()
        return listed[0]["content"]["value"]

    def test_an_existing_role_is_stored_and_given_to_requesters(self, client, project):
        response = self.put(client, project, "EXPLOIT")
        assert response.status_code == 200
        assert response.json()["content"]["value"] == "EXPLOIT"
        request_access(client, project, "gen@example.org")
        token = password_grant(client, "gen@example.org", "secret-1", project.name)
        assert token.json()["role"] == "EXPLOIT"

    def test_a_custom_role_the_caller_manages_is_stored(self, client, project):
        add_custom_role(project, "OPERATOR", parent="EXPLOIT")
        assert self.put(client, project, "OPERATOR").status_code == 200
        assert self.stored(client, project) == "OPERATOR"

    def test_an_unknown_role_is_422_and_not_stored(self, client, project):
        response = self.put(client, project, "NOPE")
        assert response.status_code == 422
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json() == problem(422, "Role 'NOPE' does not exist.")
        assert self.stored(client, project) == "REGISTERED_USER"
        request_access(client, project, "still@example.org")
        token = password_grant(client, "still@example.org", "secret-1", project.name)
        assert token.json()["role"] == "REGISTERED_USER"

    def test_a_role_of_another_project_is_422(self, client, project, other_project):
        add_custom_role(other_project, "ELSEWHERE", parent="EXPLOIT")
        response = self.put(client, project, "ELSEWHERE")
        assert response.status_code == 422
        assert response.json() == problem(422, "Role 'ELSEWHERE' does not exist.")

    @pytest.mark.parametrize("role", ["PUBLIC", "INSTANCE_ADMIN"])
    def test_public_and_instance_admin_are_422(self, client, project, role):
        response = self.put(client, project, role, role="PROJECT_ADMIN")
        assert response.status_code == 422
        assert response.json() == problem(422, f"The default role cannot be {role}.")
        assert self.stored(client, project) == "REGISTERED_USER"

    def test_a_role_above_the_caller_is_403_and_not_stored(self, client, project):
        response = self.put(client, project, "PROJECT_ADMIN")
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role ADMIN cannot give the role PROJECT_ADMIN, which is above it.")
        assert self.stored(client, project) == "REGISTERED_USER"

    def test_not_a_string_is_422(self, client, project):
        response = self.put(client, project, ["EXPLOIT"])
        assert response.status_code == 422
        assert response.json() == problem(
            422, "Invalid value for setting 'default_role': [\"EXPLOIT\"] is not of type "
                 "\"string\".")

    def test_exploit_is_403(self, client, project):
        assert self.put(client, project, "EXPLOIT", role="EXPLOIT").status_code == 403

    @pytest.mark.parametrize("path", [f"{BASE}/settings", f"{ACCESSES}/settings"])
    def test_a_nul_character_is_422_and_not_stored(self, client, project, path):
        response = client.put(f"{path}/default_groups",
                              json={"name": "default_groups", "value": ["a\u0000b"]},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422
        assert response.json() == problem(422, "The value contains a NUL character.")
        listed = client.get(f"{BASE}/settings", params={"names": "default_groups"},
                            headers=project.headers("ADMIN")).json()
        assert listed[0]["content"]["value"] == []


class TestAccessRequestRateLimit:
    """At most `access_requests_per_hour` public access requests per client address."""

    @staticmethod
    def set_limit(client, project, value):
        response = client.put(f"{ACCESSES}/settings/access_requests_per_hour",
                              json={"name": "access_requests_per_hour", "value": value},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 200, response.text

    @staticmethod
    def records(project):
        with project.runtime.sessions() as session:
            return session.scalar(select(func.count()).select_from(AccessRequestRecord).where(
                AccessRequestRecord.project_id == project.id))

    def test_the_request_past_the_limit_is_429_and_creates_nobody(self, client, project):
        self.set_limit(client, project, 2)
        assert request_access(client, project, "one@example.org").status_code == 201
        assert request_access(client, project, "two@example.org").status_code == 201
        refused = request_access(client, project, "three@example.org")
        assert refused.status_code == 429
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json() == problem(429, (
            "This project takes at most 2 access request(s) per hour from one address "
            "(setting access_requests_per_hour); try again later."))
        assert 3590 <= int(refused.headers["retry-after"]) <= 3600  # when the first one expires
        with project.runtime.sessions() as session:
            assert session.scalars(select(ProjectUser.email).where(
                ProjectUser.project_id == project.id,
                ProjectUser.email == "three@example.org")).all() == []
        assert self.records(project) == 2

    def test_requests_older_than_an_hour_no_longer_count(self, client, project):
        self.set_limit(client, project, 1)
        assert request_access(client, project, "early@example.org").status_code == 201
        assert request_access(client, project, "late@example.org").status_code == 429
        with project.runtime.sessions() as session:
            session.execute(update(AccessRequestRecord).where(
                AccessRequestRecord.project_id == project.id).values(
                created=utcnow() - timedelta(hours=1, seconds=1)))
            session.commit()
        assert request_access(client, project, "late@example.org").status_code == 201

    def test_retry_after_waits_until_the_requests_over_a_lowered_limit_left_the_hour(
            self, client, project):
        for email in ("r1@example.org", "r2@example.org", "r3@example.org"):
            assert request_access(client, project, email).status_code == 201
        with project.runtime.sessions() as session:
            ids = session.scalars(select(AccessRequestRecord.id).where(
                AccessRequestRecord.project_id == project.id).order_by(
                AccessRequestRecord.id)).all()
            for record, minutes in zip(ids, (50, 40, 10), strict=True):
                session.execute(update(AccessRequestRecord).where(
                    AccessRequestRecord.id == record).values(
                    created=utcnow() - timedelta(minutes=minutes)))
            session.commit()
        self.set_limit(client, project, 1)
        refused = request_access(client, project, "r4@example.org")
        assert refused.status_code == 429
        # Under the limit again once the one made 10 minutes ago is an hour old.
        assert 49 * 60 <= int(refused.headers["retry-after"]) <= 50 * 60

    def test_each_project_counts_its_own_and_zero_lifts_the_limit(self, client, project,
                                                                    other_project):
        self.set_limit(client, project, 1)
        assert request_access(client, project, "a@example.org").status_code == 201
        assert request_access(client, project, "b@example.org").status_code == 429
        assert request_access(client, other_project, "b@example.org").status_code == 201
        self.set_limit(client, project, 0)
        assert request_access(client, project, "b@example.org").status_code == 201

    def test_refused_bodies_are_not_counted(self, client, project):
        self.set_limit(client, project, 1)
        bad = client.post(ACCESSES, json={"email": "x@example.org", "roleName": "PROJECT_ADMIN"},
                          params={"scope": project.name})
        assert bad.status_code == 403
        assert request_access(client, project, "ok@example.org").status_code == 201

    def test_the_limit_is_a_count_of_zero_or_more(self, client, project):
        response = client.put(f"{ACCESSES}/settings/access_requests_per_hour",
                              json={"name": "access_requests_per_hour", "value": -1},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422
