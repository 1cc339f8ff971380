"""rs-admin users: search, export, one user, myuser, pending accesses, count."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from featurehub.db.platform import ProjectUser, Role
from featurehub.services.admin import users
from tests.api.test_authentication import password_grant
from tests.conftest import problem

BASE = "/rs-admin/api/v1"
USERS = f"{BASE}/users"


def create(client, headers, email, **fields):
    response = client.post(USERS, json={"email": email, "password": "pw-123", **fields},
                           headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["content"]


def emails(body):
    return [item["content"]["email"] for item in body["content"]]


def search(client, headers, body=None, **params):
    response = client.post(f"{USERS}/search", json=body or {}, headers=headers, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def user_id_of(project, email):
    with project.runtime.sessions() as session:
        return session.scalars(select(ProjectUser.id).where(
            ProjectUser.project_id == project.id, ProjectUser.email == email)).one()


class TestCreateUser:
    def test_answers_the_whole_user_and_the_person_logs_in(self, client, project):
        response = client.post(USERS, json={
            "email": "new@example.org", "password": "pw-123", "firstName": "New",
            "lastName": "User", "accessGroups": ["g"], "maxQuota": 100, "origin": "ldap",
            "metadata": [{"key": "team", "value": "blue", "visibility": "HIDDEN"}]},
            headers=project.headers("EXPLOIT"))
        assert response.status_code == 201
        content = response.json()["content"]
        with project.runtime.sessions() as session:
            role = session.scalars(select(Role).where(
                Role.project_id == project.id, Role.name == "REGISTERED_USER")).one()
            public_id = role.parent_id
        assert content == {
            "id": content["id"], "email": "new@example.org", "firstName": "New",
            "lastName": "User", "status": "ACCESS_GRANTED", "origin": "ldap",
            "role": {"id": role.id, "name": "REGISTERED_USER", "isNative": True,
                     "isDefault": True, "authorizedAddresses": [],
                     "parentRole": {"id": public_id, "name": "PUBLIC", "isNative": True,
                                    "isDefault": False, "authorizedAddresses": []}},
            "accessGroups": ["g"], "created": content["created"],
            "lastUpdate": content["lastUpdate"], "lastConnection": None, "maxQuota": 100,
            "currentQuota": 0, "licenseAccepted": False, "emailVerified": False,
            "metadata": [{"id": content["metadata"][0]["id"], "key": "team", "value": "blue",
                          "visibility": "HIDDEN"}],
            "permissions": [],
        }
        assert response.json()["links"] == []
        token = password_grant(client, "new@example.org", "pw-123", project.name)
        assert token.json()["role"] == "REGISTERED_USER"

    def test_with_a_role_at_the_callers_level(self, client, project):
        content = create(client, project.headers("EXPLOIT"), "x@example.org", roleName="EXPLOIT")
        assert content["role"]["name"] == "EXPLOIT"

    def test_project_admin_gives_any_role_below_instance_admin(self, client, project):
        content = create(client, project.headers("PROJECT_ADMIN"), "x@example.org",
                         roleName="PROJECT_ADMIN")
        assert content["role"]["name"] == "PROJECT_ADMIN"

    def test_role_above_the_callers_is_403(self, client, project):
        response = client.post(USERS, json={"email": "x@example.org", "roleName": "ADMIN"},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role EXPLOIT cannot give the role ADMIN, which is above it.")

    def test_instance_admin_role_by_project_admin_is_403(self, client, project):
        response = client.post(USERS, json={"email": "x@example.org",
                                            "roleName": "INSTANCE_ADMIN"},
                               headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 403

    def test_unknown_role_is_422(self, client, project):
        response = client.post(USERS, json={"email": "x@example.org", "roleName": "NOPE"},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 422

    def test_duplicate_metadata_keys_are_422(self, client, project):
        response = client.post(USERS, json={"email": "x@example.org", "metadata": [
            {"key": "a"}, {"key": "a"}]}, headers=project.headers("EXPLOIT"))
        assert response.status_code == 422
        assert response.json() == problem(422, "Metadata keys must be unique; given twice: a.")

    def test_existing_member_is_409(self, client, project):
        headers = project.headers("EXPLOIT")
        create(client, headers, "x@example.org")
        response = client.post(USERS, json={"email": "x@example.org"}, headers=headers)
        assert response.status_code == 409

    def test_bad_email_is_400(self, client, project):
        response = client.post(USERS, json={"email": "not an email"},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 400

    def test_registered_user_is_403(self, client, project):
        response = client.post(USERS, json={"email": "x@example.org"},
                               headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role REGISTERED_USER does not hold the access /users@POST.")

    def test_without_token_is_401(self, client, project):
        assert client.post(USERS, json={"email": "x@example.org"}).status_code == 401


@pytest.fixture
def population(client, project):
    """Five users with distinct fields; answers the admin headers."""
    admin = project.headers("PROJECT_ADMIN")
    create(client, admin, "alice@example.org", firstName="Alice", lastName="Smith",
           accessGroups=["red", "blue"], origin="ldap", maxQuota=10)
    create(client, admin, "bob@example.com", firstName="Bob", lastName="Jones",
           accessGroups=["blue"], roleName="EXPLOIT", maxQuota=100)
    create(client, admin, "carol@example.org", firstName="carol", lastName="SMITHERS",
           origin="ldap")
    create(client, admin, "dave@other.net", firstName="Dave")
    create(client, admin, "erin_x@example.org", firstName="Erin", accessGroups=["green"])
    with project.runtime.sessions() as session:
        session.execute(update(ProjectUser).where(
            ProjectUser.email == "alice@example.org", ProjectUser.project_id == project.id
        ).values(current_quota=5, last_connection=datetime(2026, 1, 1, tzinfo=UTC)))
        session.execute(update(ProjectUser).where(
            ProjectUser.email == "dave@other.net", ProjectUser.project_id == project.id
        ).values(status="ACCESS_INACTIVE"))
        session.commit()
    return {"Authorization": admin["Authorization"],
            "admin": next(e for e in _all_emails(project) if e.startswith("project_admin"))}


def _all_emails(project):
    with project.runtime.sessions() as session:
        return list(session.scalars(select(ProjectUser.email).where(
            ProjectUser.project_id == project.id)))


CREATED = ["alice@example.org", "bob@example.com", "carol@example.org", "dave@other.net",
           "erin_x@example.org"]


class TestSearchUsers:
    def test_default_sort_is_created_ascending_and_size_10(self, client, population):
        body = search(client, {"Authorization": population["Authorization"]})
        assert emails(body) == [population["admin"], *CREATED]
        assert body["page"] == {"number": 0, "size": 10, "totalElements": 6, "totalPages": 1}

    def test_paging_and_sorting(self, client, population):
        headers = {"Authorization": population["Authorization"]}
        body = search(client, headers, {"origins": {"values": ["ldap"]}}, size=1, page=1,
                      sort="email,desc")
        assert emails(body) == ["alice@example.org"]
        assert body["page"] == {"number": 1, "size": 1, "totalElements": 2, "totalPages": 2}

    @pytest.mark.parametrize(("user_filter", "expected"), [
        ({"email": {"values": ["bob@example.com"]}}, ["bob@example.com"]),
        ({"email": {"values": ["BOB@example.com"]}}, []),
        ({"email": {"values": ["BOB@example.com"], "ignoreCase": True}}, ["bob@example.com"]),
        ({"email": {"values": ["@example.org"], "matchMode": "ENDS_WITH"}},
         ["alice@example.org", "carol@example.org", "erin_x@example.org"]),
        ({"email": {"values": ["a"], "matchMode": "STARTS_WITH"}}, ["alice@example.org"]),
        ({"email": {"values": ["_x"], "matchMode": "CONTAINS"}}, ["erin_x@example.org"]),
        ({"email": {"values": ["%"], "matchMode": "CONTAINS"}}, []),
        ({"email": "EXAMPLE.COM"}, ["bob@example.com"]),
        ({"email": {"values": ["example"], "matchMode": "CONTAINS", "mode": "EXCLUDE"}},
         ["dave@other.net"]),
        ({"firstName": {"values": ["carol", "dave"], "ignoreCase": True}},
         ["carol@example.org", "dave@other.net"]),
        ({"lastName": {"values": ["smith"], "matchMode": "STARTS_WITH", "ignoreCase": True}},
         ["alice@example.org", "carol@example.org"]),
        ({"lastName": {"values": ["Smith"], "mode": "EXCLUDE"}},
         ["bob@example.com", "carol@example.org", "dave@other.net", "erin_x@example.org"]),
        ({"accessGroups": {"values": ["blue"]}}, ["alice@example.org", "bob@example.com"]),
        ({"accessGroups": {"values": ["RE", "GR"], "matchMode": "STARTS_WITH", "ignoreCase": True}},
         ["alice@example.org", "erin_x@example.org"]),
        ({"accessGroups": {"values": ["blue"], "mode": "EXCLUDE"}},
         ["carol@example.org", "dave@other.net", "erin_x@example.org"]),
        ({"origins": {"values": ["ldap"]}}, ["alice@example.org", "carol@example.org"]),
        ({"roles": {"values": ["EXPLOIT"]}}, ["bob@example.com"]),
        ({"status": {"values": ["ACCESS_INACTIVE"]}}, ["dave@other.net"]),
        ({"status": {"values": ["ACCESS_GRANTED"], "mode": "EXCLUDE"}}, ["dave@other.net"]),
        ({"quotaWarningCount": 5}, ["alice@example.org"]),
        ({"lastConnection": {"after": "2025-12-31T00:00:00Z", "before": "2026-01-02T00:00:00Z"}},
         ["alice@example.org"]),
        ({"creationDate": {"before": "2000-01-01T00:00:00Z"}}, []),
        ({"origins": {"values": ["ldap"]}, "firstName": {"values": ["Alice"]}},
         ["alice@example.org"]),
        ({"email": {"values": []}, "roles": {"values": ["PROJECT_ADMIN"], "mode": "EXCLUDE"}},
         CREATED),
    ])
    def test_filter(self, client, population, user_filter, expected):
        body = search(client, {"Authorization": population["Authorization"]}, user_filter)
        assert [e for e in emails(body) if e != population["admin"]] == expected

    def test_creation_date_range_keeps_recent_users(self, client, population):
        after = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
        body = search(client, {"Authorization": population["Authorization"]},
                      {"creationDate": {"after": after}})
        assert body["page"]["totalElements"] == 6

    def test_unknown_sort_is_400(self, client, project):
        response = client.post(f"{USERS}/search", json={}, params={"sort": "password,asc"},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 400

    def test_only_the_projects_users(self, client, project, other_project):
        other_project.user("EXPLOIT", email="elsewhere@example.org")
        body = search(client, project.headers("EXPLOIT"))
        assert "elsewhere@example.org" not in emails(body)

    def test_registered_user_is_403(self, client, project):
        response = client.post(f"{USERS}/search", json={},
                               headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 403

    def test_without_token_is_401(self, client, project):
        assert client.post(f"{USERS}/search", json={}).status_code == 401


def read_csv(response):
    return list(csv.reader(io.StringIO(response.text)))


class TestExportAsCsv:
    def test_header_and_one_row_per_matching_user(self, client, population):
        response = client.post(f"{USERS}/export", json={"origins": {"values": ["ldap"]}},
                               headers={"Authorization": population["Authorization"]})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/csv")
        rows = read_csv(response)
        assert rows[0] == ["id", "email", "firstName", "lastName", "status", "role", "origin",
                           "accessGroups", "created", "lastUpdate", "lastConnection", "maxQuota",
                           "currentQuota", "licenseAccepted"]
        assert [row[1:8] + row[10:] for row in rows[1:]] == [
            ["alice@example.org", "Alice", "Smith", "ACCESS_GRANTED", "REGISTERED_USER", "ldap",
             "red;blue", "2026-01-01T00:00:00+00:00", "10", "5", "false"],
            ["carol@example.org", "carol", "SMITHERS", "ACCESS_GRANTED", "REGISTERED_USER",
             "ldap", "", "", "", "0", "false"],
        ]

    def test_commas_quotes_and_newlines_are_quoted(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        tricky = 'O"Brien, Jr.\nthe second'
        create(client, admin, "tricky@example.org", lastName=tricky, firstName="a,b")
        response = client.post(f"{USERS}/export",
                               json={"email": {"values": ["tricky@example.org"]}}, headers=admin)
        assert '"O""Brien, Jr.\nthe second"' in response.text
        assert read_csv(response)[1][2:4] == ["a,b", tricky]

    def test_thousands_of_users_stream_in_chunks(self, client, project):
        with project.runtime.sessions() as session:
            role_id = session.scalars(select(Role.id).where(
                Role.project_id == project.id, Role.name == "REGISTERED_USER")).one()
            session.execute(ProjectUser.__table__.insert(), [
                {"project_id": project.id, "email": f"u{n:05d}@bulk.test", "role_id": role_id,
                 "status": "ACCESS_GRANTED", "origin": "bulk", "access_groups": [],
                 "current_quota": 0, "quota_warning_count": 0, "license_accepted": False,
                 "created": datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=n),
                 "last_update": datetime(2026, 1, 1, tzinfo=UTC)}
                for n in range(3000)])
            session.commit()
        response = client.post(f"{USERS}/export", json={"origins": {"values": ["bulk"]}},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 200
        rows = read_csv(response)
        assert len(rows) == 3001
        assert [row[1] for row in rows[1:]] == [f"u{n:05d}@bulk.test" for n in range(3000)]
        # The answer is produced in bounded chunks while the rows are read, not as one text.
        with project.runtime.sessions() as session:
            query = users.export_query(session, project_id=project.id,
                                       user_filter={"origins": {"values": ["bulk"]}})
        chunks = users.export_csv(project.runtime.sessions, query)
        assert next(chunks).startswith("id,email,")
        sizes = [len(chunk) for chunk in chunks]
        assert len(sizes) > 3
        assert max(sizes) < users.CSV_CHUNK + 1024

    def test_registered_user_is_403(self, client, project):
        response = client.post(f"{USERS}/export", json={},
                               headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 403
        assert response.headers["content-type"] == "application/problem+json"

    def test_without_token_is_401(self, client, project):
        assert client.post(f"{USERS}/export", json={}).status_code == 401


class TestCountUsers:
    def test_counts_all_or_one_status(self, client, population):
        headers = {"Authorization": population["Authorization"]}
        assert client.get(f"{USERS}/count", headers=headers).json() == 6
        response = client.get(f"{USERS}/count", params={"status": "ACCESS_INACTIVE"},
                              headers=headers)
        assert response.json() == 1

    def test_unknown_status_is_400(self, client, project):
        response = client.get(f"{USERS}/count", params={"status": "NOPE"},
                              headers=project.headers("EXPLOIT"))
        assert response.status_code == 400

    def test_registered_user_is_403(self, client, project):
        assert client.get(f"{USERS}/count",
                          headers=project.headers("REGISTERED_USER")).status_code == 403


class TestPendingAccesses:
    def test_lists_waiting_users_oldest_first(self, client, project):
        first = project.user("REGISTERED_USER", status="WAITING_ACCESS")
        project.user("REGISTERED_USER", status="ACCESS_DENIED")
        second = project.user("REGISTERED_USER", status="WAITING_ACCESS")
        response = client.get(f"{USERS}/pendingaccesses", headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 200
        assert emails(response.json()) == [first, second]
        assert response.json()["page"]["size"] == 10

    def test_admin_is_403(self, client, project):
        response = client.get(f"{USERS}/pendingaccesses", headers=project.headers("ADMIN"))
        assert response.status_code == 403

    def test_without_token_is_401(self, client, project):
        assert client.get(f"{USERS}/pendingaccesses").status_code == 401


class TestRetrieveUser:
    def test_by_id_and_by_email(self, client, project):
        email = project.user("EXPLOIT")
        user_id = user_id_of(project, email)
        headers = project.headers("EXPLOIT")
        by_id = client.get(f"{USERS}/{user_id}", headers=headers)
        by_email = client.get(f"{USERS}/email/{email}", headers=headers)
        assert by_id.status_code == by_email.status_code == 200
        assert by_id.json() == by_email.json()
        assert by_id.json()["content"]["email"] == email

    def test_unknown_id_is_404(self, client, project):
        response = client.get(f"{USERS}/999999", headers=project.headers("EXPLOIT"))
        assert response.status_code == 404
        assert response.json() == problem(404, "User 999999 does not exist.")

    def test_unknown_email_is_404(self, client, project):
        response = client.get(f"{USERS}/email/nobody@example.org",
                              headers=project.headers("EXPLOIT"))
        assert response.status_code == 404
        assert response.json() == problem(404, "User 'nobody@example.org' does not exist.")

    def test_user_of_another_project_is_404(self, client, project, other_project):
        user_id = user_id_of(other_project, other_project.user("EXPLOIT"))
        assert client.get(f"{USERS}/{user_id}",
                          headers=project.headers("EXPLOIT")).status_code == 404

    def test_not_a_number_is_404(self, client, project):
        assert client.get(f"{USERS}/abc", headers=project.headers("EXPLOIT")).status_code == 404

    def test_registered_user_is_403(self, client, project):
        assert client.get(f"{USERS}/1",
                          headers=project.headers("REGISTERED_USER")).status_code == 403


def body_of(client, headers, user_id):
    return client.get(f"{USERS}/{user_id}", headers=headers).json()["content"]


class TestUpdateProjectUser:
    def test_updates_fields_and_role(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "up@example.org")
        body = {**user, "firstName": "Up", "lastName": None, "accessGroups": ["x"],
                "maxQuota": 50, "licenseAccepted": True, "role": {"name": "ADMIN"}}
        response = client.put(f"{USERS}/{user['id']}", json=body, headers=admin)
        assert response.status_code == 200
        content = response.json()["content"]
        assert (content["firstName"], content["lastName"], content["accessGroups"],
                content["maxQuota"], content["licenseAccepted"], content["role"]["name"]) == (
            "Up", None, ["x"], 50, True, "ADMIN")
        assert body_of(client, admin, user["id"]) == content

    def test_status_change_follows_the_machine(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "st@example.org")
        response = client.put(f"{USERS}/{user['id']}", json={**user, "status": "ACCESS_INACTIVE"},
                              headers=admin)
        assert response.json()["content"]["status"] == "ACCESS_INACTIVE"
        response = client.put(f"{USERS}/{user['id']}", json={**user, "status": "ACCESS_DENIED"},
                              headers=admin)
        assert response.status_code == 409
        assert response.json() == problem(
            409, f"User {user['id']} is ACCESS_INACTIVE; it cannot become ACCESS_DENIED.")

    def test_id_mismatch_is_422(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "mm@example.org")
        response = client.put(f"{USERS}/{user['id']}", json={**user, "id": user["id"] + 1},
                              headers=admin)
        assert response.status_code == 422
        assert response.json() == problem(
            422, f"The user id in the body ({user['id'] + 1}) is not the one in the path "
                 f"({user['id']}).")

    def test_email_change_is_422(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "em@example.org")
        response = client.put(f"{USERS}/{user['id']}", json={**user, "email": "o@example.org"},
                              headers=admin)
        assert response.status_code == 422

    def test_giving_a_role_above_the_callers_is_403(self, client, project):
        user = create(client, project.headers("PROJECT_ADMIN"), "ra@example.org")
        response = client.put(f"{USERS}/{user['id']}",
                              json={**user, "role": {"name": "PROJECT_ADMIN"}},
                              headers=project.headers("EXPLOIT"))
        assert response.status_code == 403

    def test_a_user_above_the_caller_is_403(self, client, project):
        user = create(client, project.headers("PROJECT_ADMIN"), "ab@example.org",
                      roleName="ADMIN")
        response = client.put(f"{USERS}/{user['id']}", json={**user, "firstName": "x"},
                              headers=project.headers("EXPLOIT"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, f"Role EXPLOIT cannot manage user {user['id']}, whose role ADMIN is above it.")

    def test_unknown_is_404(self, client, project):
        response = client.put(f"{USERS}/999999", json={"status": "ACCESS_GRANTED",
                                                        "origin": "x"},
                              headers=project.headers("EXPLOIT"))
        assert response.status_code == 404

    def test_missing_status_is_400(self, client, project):
        response = client.put(f"{USERS}/1", json={"origin": "x"},
                              headers=project.headers("EXPLOIT"))
        assert response.status_code == 400

    def test_registered_user_is_403(self, client, project):
        response = client.put(f"{USERS}/1", json={"status": "ACCESS_GRANTED", "origin": "x"},
                              headers=project.headers("REGISTERED_USER"))
        assert response.status_code == 403


class TestRemoveProjectUser:
    def test_deletes(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "del@example.org")
        response = client.delete(f"{USERS}/{user['id']}", headers=admin)
        assert response.status_code == 200
        assert response.json() == {"content": None, "links": []}
        assert client.get(f"{USERS}/{user['id']}", headers=admin).status_code == 404

    def test_a_user_above_the_caller_is_403(self, client, project):
        user = create(client, project.headers("PROJECT_ADMIN"), "del@example.org",
                      roleName="PROJECT_ADMIN")
        response = client.delete(f"{USERS}/{user['id']}", headers=project.headers("EXPLOIT"))
        assert response.status_code == 403

    def test_unknown_is_404(self, client, project):
        assert client.delete(f"{USERS}/999999",
                             headers=project.headers("EXPLOIT")).status_code == 404

    def test_registered_user_is_403(self, client, project):
        assert client.delete(f"{USERS}/1",
                             headers=project.headers("REGISTERED_USER")).status_code == 403


def own_headers(project, role="REGISTERED_USER"):
    email = project.user(role)
    return email, {"Authorization": f"Bearer {project.token(email, role)}"}


class TestMyUser:
    def test_reads_the_callers_user(self, client, project):
        email, headers = own_headers(project)
        response = client.get(f"{USERS}/myuser", headers=headers)
        assert response.status_code == 200
        assert response.json()["content"]["email"] == email

    def test_updates_names_and_license(self, client, project):
        _, headers = own_headers(project)
        mine = client.get(f"{USERS}/myuser", headers=headers).json()["content"]
        response = client.put(f"{USERS}/myuser", json={**mine, "firstName": "Me",
                                                        "licenseAccepted": True},
                              headers=headers)
        assert response.status_code == 200
        content = response.json()["content"]
        assert (content["firstName"], content["licenseAccepted"]) == ("Me", True)

    def test_another_users_id_is_403(self, client, project):
        _, headers = own_headers(project)
        mine = client.get(f"{USERS}/myuser", headers=headers).json()["content"]
        response = client.put(f"{USERS}/myuser", json={**mine, "id": mine["id"] + 1000},
                              headers=headers)
        assert response.status_code == 403
        assert response.json() == problem(
            403, f"User {mine['id']} may only update their own user, not {mine['id'] + 1000}.")

    @pytest.mark.parametrize("change", [{"role": {"name": "EXPLOIT"}},
                                        {"status": "ACCESS_INACTIVE"}])
    def test_own_role_or_status_is_403(self, client, project, change):
        _, headers = own_headers(project)
        mine = client.get(f"{USERS}/myuser", headers=headers).json()["content"]
        response = client.put(f"{USERS}/myuser", json={**mine, **change}, headers=headers)
        assert response.status_code == 403
        assert response.json() == problem(403, "A user cannot change their own role or status.")

    def test_caller_without_a_user_is_404(self, client, project, rt, settings):
        token, _ = rt.keys.issue(subject=settings.bootstrap_admin_email, tenant=project.name,
                                 role="INSTANCE_ADMIN")
        response = client.get(f"{USERS}/myuser", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 404

    def test_without_token_is_401(self, client, project):
        assert client.get(f"{USERS}/myuser").status_code == 401


class TestRouting:
    """Literal segments win over the user id parameter."""

    @pytest.mark.parametrize(("path", "status"), [
        ("/myuser", 200), ("/count", 200), ("/pendingaccesses", 200)])
    def test_literal_paths(self, client, project, path, status):
        response = client.get(f"{USERS}{path}", headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == status, response.text

    def test_email_named_like_a_segment_is_looked_up_by_email(self, client, project):
        response = client.get(f"{USERS}/email/metadatas", headers=project.headers("EXPLOIT"))
        assert response.json() == problem(404, "User 'metadatas' does not exist.")

    def test_resources_of_an_email_and_metadata_of_an_id(self, client, project):
        email = project.user("REGISTERED_USER")
        admin = project.headers("PROJECT_ADMIN")
        assert client.get(f"{USERS}/{email}/resources", headers=admin).json() == []
        user_id = user_id_of(project, email)
        assert client.get(f"{USERS}/{user_id}/metadatas", headers=admin).json() == []


class TestWalkthrough:
    def test_manual_request_accept_login_myuser_and_refusal(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        response = client.put(f"{BASE}/accesses/settings/acceptance_mode",
                              json={"name": "acceptance_mode", "value": "manual"}, headers=admin)
        assert response.status_code == 200

        response = client.post(f"{BASE}/accesses", params={"scope": project.name}, json={
            "email": "newcomer@example.org", "password": "let-me-in", "firstName": "New"})
        assert response.status_code == 201
        refused = password_grant(client, "newcomer@example.org", "let-me-in", project.name)
        assert refused.status_code == 400
        assert refused.json() == {"error": "invalid_grant", "error_description":
                                  f"No granted access to project '{project.name}' "
                                  "(WAITING_ACCESS)."}

        pending = client.get(f"{USERS}/pendingaccesses", headers=admin).json()
        assert emails(pending) == ["newcomer@example.org"]
        user_id = pending["content"][0]["content"]["id"]
        accepted = client.put(f"{BASE}/accesses/{user_id}/accept", headers=admin)
        assert accepted.json()["content"]["status"] == "ACCESS_GRANTED"
        assert emails(client.get(f"{USERS}/pendingaccesses", headers=admin).json()) == []

        token = password_grant(client, "newcomer@example.org", "let-me-in", project.name)
        assert token.status_code == 200
        assert token.json()["role"] == "REGISTERED_USER"
        person = {"Authorization": f"Bearer {token.json()['access_token']}"}
        mine = client.get(f"{USERS}/myuser", headers=person)
        assert mine.status_code == 200
        assert (mine.json()["content"]["email"], mine.json()["content"]["firstName"]) == (
            "newcomer@example.org", "New")
        assert mine.json()["content"]["lastConnection"] is not None
        refused = client.post(f"{USERS}/search", json={}, headers=person)
        assert refused.status_code == 403
        assert refused.json() == problem(
            403, "Role REGISTERED_USER does not hold the access /users/search@POST.")


class TestMetadata:
    def test_created_metadata_is_read_and_replaced(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "meta@example.org", metadata=[
            {"key": "b", "value": "2"}, {"key": "a", "value": "1", "visibility": "HIDDEN"}])
        response = client.get(f"{USERS}/{user['id']}/metadatas", headers=project.headers("EXPLOIT"))
        assert response.status_code == 200
        assert [(m["content"]["key"], m["content"]["value"], m["content"]["visibility"])
                for m in response.json()] == [("a", "1", "HIDDEN"), ("b", "2", "READABLE")]
        assert all(m["links"] == [] for m in response.json())
        response = client.put(f"{USERS}/{user['id']}/metadatas", headers=admin,
                              json=[{"key": "c", "value": "3", "visibility": "WRITEABLE"}])
        assert response.status_code == 200
        assert [(m["content"]["key"], m["content"]["value"], m["content"]["visibility"])
                for m in response.json()] == [("c", "3", "WRITEABLE")]
        assert client.get(f"{USERS}/{user['id']}/metadatas",
                          headers=admin).json() == response.json()

    def test_delete_removes_all(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "meta@example.org", metadata=[{"key": "a"}])
        response = client.delete(f"{USERS}/{user['id']}/metadatas", headers=admin)
        assert response.status_code == 200
        assert response.json() == {"content": None, "links": []}
        assert client.get(f"{USERS}/{user['id']}/metadatas", headers=admin).json() == []

    def test_key_longer_than_64_is_400(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "meta@example.org")
        response = client.put(f"{USERS}/{user['id']}/metadatas", json=[{"key": "k" * 65}],
                              headers=admin)
        assert response.status_code == 400

    def test_value_longer_than_255_is_400(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "meta@example.org")
        response = client.put(f"{USERS}/{user['id']}/metadatas",
                              json=[{"key": "k", "value": "v" * 256}], headers=admin)
        assert response.status_code == 400

    def test_missing_key_is_400(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "meta@example.org")
        response = client.put(f"{USERS}/{user['id']}/metadatas", json=[{"value": "v"}],
                              headers=admin)
        assert response.status_code == 400

    def test_duplicate_keys_are_422(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "meta@example.org")
        response = client.put(f"{USERS}/{user['id']}/metadatas",
                              json=[{"key": "k"}, {"key": "k"}], headers=admin)
        assert response.status_code == 422

    def test_unknown_user_is_404(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        assert client.get(f"{USERS}/999999/metadatas", headers=admin).status_code == 404
        assert client.put(f"{USERS}/999999/metadatas", json=[], headers=admin).status_code == 404
        assert client.delete(f"{USERS}/999999/metadatas", headers=admin).status_code == 404

    def test_instance_admins_metadata_by_project_admin_is_403(self, client, project):
        email = project.user("INSTANCE_ADMIN")
        user_id = user_id_of(project, email)
        response = client.put(f"{USERS}/{user_id}/metadatas", json=[],
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 403

    def test_roles_too_low(self, client, project):
        assert client.get(f"{USERS}/1/metadatas",
                          headers=project.headers("REGISTERED_USER")).status_code == 403
        assert client.put(f"{USERS}/1/metadatas", json=[],
                          headers=project.headers("ADMIN")).status_code == 403
        assert client.delete(f"{USERS}/1/metadatas",
                             headers=project.headers("ADMIN")).status_code == 403
        assert client.get(f"{USERS}/1/metadatas").status_code == 401


def access_id(project, resource, verb, microservice="rs-admin"):
    from featurehub.db.platform import ResourceAccess

    with project.runtime.sessions() as session:
        return session.scalars(select(ResourceAccess.id).where(
            ResourceAccess.project_id == project.id, ResourceAccess.microservice == microservice,
            ResourceAccess.resource == resource, ResourceAccess.verb == verb)).one()


def access_body(access_id):
    return {"id": access_id, "controllerSimpleName": "users", "defaultRole": "EXPLOIT",
            "microservice": "rs-admin", "resource": "/users/search", "verb": "POST"}


class TestUserResources:
    def test_an_extra_access_lets_the_user_call_the_endpoint(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        email, person = own_headers(project)
        assert client.post(f"{USERS}/search", json={}, headers=person).status_code == 403
        search_id = access_id(project, "/users/search", "POST")
        response = client.put(f"{USERS}/{email}/resources", json=[access_body(search_id)],
                              headers=admin)
        assert response.status_code == 200
        assert response.json() == [{"content": {
            "id": search_id, "controllerSimpleName": "users", "defaultRole": "EXPLOIT",
            "description": response.json()[0]["content"]["description"],
            "microservice": "rs-admin", "resource": "/users/search", "verb": "POST"},
            "links": []}]
        assert client.post(f"{USERS}/search", json={}, headers=person).status_code == 200
        assert client.get(f"{USERS}/{email}/resources", headers=admin).json() == response.json()
        mine = client.get(f"{USERS}/myuser", headers=person).json()["content"]
        assert [p["id"] for p in mine["permissions"]] == [search_id]

        response = client.delete(f"{USERS}/{email}/resources", headers=admin)
        assert response.status_code == 200
        assert response.json() == {"content": None, "links": []}
        assert client.post(f"{USERS}/search", json={}, headers=person).status_code == 403
        assert client.get(f"{USERS}/{email}/resources", headers=admin).json() == []

    def test_granting_again_merges(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        email = project.user("REGISTERED_USER")
        first, second = (access_id(project, "/users/search", "POST"),
                         access_id(project, "/users/count", "GET"))
        client.put(f"{USERS}/{email}/resources", json=[access_body(first)], headers=admin)
        response = client.put(f"{USERS}/{email}/resources",
                              json=[access_body(second), access_body(first)], headers=admin)
        assert sorted(item["content"]["id"] for item in response.json()) == sorted(
            [first, second])

    def test_the_caller_grants_only_accesses_it_holds(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        granter_email, granter = own_headers(project, "EXPLOIT")
        grant_id = access_id(project, "/users/{user_email}/resources", "PUT")
        client.put(f"{USERS}/{granter_email}/resources", json=[access_body(grant_id)],
                   headers=admin)
        target = project.user("REGISTERED_USER")
        allowed = client.put(f"{USERS}/{target}/resources",
                             json=[access_body(access_id(project, "/users/search", "POST"))],
                             headers=granter)
        assert allowed.status_code == 200
        settings_id = access_id(project, "/settings/{name}", "PUT")
        refused = client.put(f"{USERS}/{target}/resources", json=[access_body(settings_id)],
                             headers=granter)
        assert refused.status_code == 403
        assert refused.json() == problem(
            403, "Role EXPLOIT does not hold the access /settings/{name}@PUT; it cannot grant it.")

    def test_unknown_access_is_422(self, client, project):
        email = project.user("REGISTERED_USER")
        response = client.put(f"{USERS}/{email}/resources", json=[access_body(999999)],
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422
        assert response.json() == problem(422, "Resource access 999999 does not exist.")

    def test_access_of_another_project_is_422(self, client, project, other_project):
        email = project.user("REGISTERED_USER")
        foreign = access_id(other_project, "/users/search", "POST")
        response = client.put(f"{USERS}/{email}/resources", json=[access_body(foreign)],
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422

    def test_access_without_id_is_422(self, client, project):
        email = project.user("REGISTERED_USER")
        body = access_body(1)
        del body["id"]
        response = client.put(f"{USERS}/{email}/resources", json=[body],
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422

    def test_unknown_user_is_404(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        assert client.get(f"{USERS}/no@example.org/resources", headers=admin).status_code == 404
        assert client.put(f"{USERS}/no@example.org/resources", json=[],
                          headers=admin).status_code == 404
        assert client.delete(f"{USERS}/no@example.org/resources",
                             headers=admin).status_code == 404

    def test_roles_too_low(self, client, project):
        email = project.user("REGISTERED_USER")
        admin_role = project.headers("ADMIN")
        assert client.get(f"{USERS}/{email}/resources", headers=admin_role).status_code == 403
        assert client.put(f"{USERS}/{email}/resources", json=[],
                          headers=admin_role).status_code == 403
        assert client.delete(f"{USERS}/{email}/resources", headers=admin_role).status_code == 403
        assert client.get(f"{USERS}/{email}/resources").status_code == 401


class TestCustomRoles:
    """A custom role with parent EXPLOIT may hold more than EXPLOIT: EXPLOIT cannot give it; the
    native roles above EXPLOIT and the role itself can (the rule roles are managed by)."""

    @pytest.fixture
    def custom(self, project):
        with project.runtime.sessions() as session:
            exploit = session.scalars(select(Role).where(
                Role.project_id == project.id, Role.name == "EXPLOIT")).one()
            session.add(Role(project_id=project.id, name="OPERATOR", parent_id=exploit.id,
                             native=False, is_default=False, authorized_addresses=[]))
            session.commit()
        return "OPERATOR"

    def test_project_admin_gives_it_and_the_user_logs_in_with_it(self, client, project, custom):
        user = create(client, project.headers("PROJECT_ADMIN"), "op@example.org",
                      roleName=custom)
        assert (user["role"]["name"], user["role"]["parentRole"]["name"]) == (custom, "EXPLOIT")
        token = password_grant(client, "op@example.org", "pw-123", project.name)
        person = {"Authorization": f"Bearer {token.json()['access_token']}"}
        assert client.post(f"{USERS}/search", json={}, headers=person).status_code == 200

    def test_its_parent_role_cannot_give_it(self, client, project, custom):
        response = client.post(USERS, json={"email": "op@example.org", "roleName": custom},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, f"Role EXPLOIT cannot give the role {custom}, which is above it.")

    def test_a_native_role_above_its_parent_gives_it(self, client, project, custom):
        user = create(client, project.headers("ADMIN"), "op@example.org", roleName=custom)
        assert user["role"]["name"] == custom

    def test_the_custom_role_gives_itself_and_the_roles_below(self, client, project, custom):
        email = project.user(custom)
        headers = {"Authorization": f"Bearer {project.token(email, custom)}"}
        assert create(client, headers, "a@example.org", roleName=custom)["role"]["name"] == custom
        assert create(client, headers, "b@example.org",
                      roleName="EXPLOIT")["role"]["name"] == "EXPLOIT"


class TestMoreRefusals:
    def test_external_access_for_a_member_is_409(self, client, project):
        email = project.user("REGISTERED_USER")
        response = client.post(f"{BASE}/accesses/external", json={"email": email},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 409
        assert response.json() == problem(
            409, f"'{email}' is already a user of this project (ACCESS_GRANTED).")

    def test_search_body_not_json_is_415(self, client, project):
        response = client.post(f"{USERS}/search", content="x", headers={
            **project.headers("EXPLOIT"), "Content-Type": "text/plain"})
        assert response.status_code == 415

    def test_verify_email_without_scope_is_400(self, client):
        response = client.get(f"{BASE}/accesses/verifyEmail/abc")
        assert response.status_code == 400


class TestNulCharacters:
    """PostgreSQL cannot store NUL in text: such strings are refused with 422 on every backend."""

    def test_access_request(self, client, project):
        response = client.post(f"{BASE}/accesses", json={"email": "a\u0000@b.c"},
                               params={"scope": project.name})
        assert response.status_code == 422
        assert response.json() == problem(422, "The request contains a NUL character.")

    def test_create_user(self, client, project):
        response = client.post(USERS, json={"email": "a@b.c", "firstName": "\u0000"},
                               headers=project.headers("EXPLOIT"))
        assert response.status_code == 422

    @pytest.mark.parametrize("user_filter", [
        {"email": "a\u0000"}, {"accessGroups": {"values": ["\u0000"]}}])
    def test_search_and_export(self, client, project, user_filter):
        headers = project.headers("EXPLOIT")
        for path in ("search", "export"):
            response = client.post(f"{USERS}/{path}", json=user_filter, headers=headers)
            assert response.status_code == 422
            assert response.json() == problem(422, "The filter contains a NUL character.")

    def test_metadata(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "nul@example.org")
        response = client.put(f"{USERS}/{user['id']}/metadatas",
                              json=[{"key": "k", "value": "\u0000"}], headers=admin)
        assert response.status_code == 422

    def test_update_user(self, client, project):
        admin = project.headers("PROJECT_ADMIN")
        user = create(client, admin, "nul@example.org")
        response = client.put(f"{USERS}/{user['id']}", json={**user, "lastName": "\u0000"},
                              headers=admin)
        assert response.status_code == 422

    def test_access_setting(self, client, project):
        response = client.put(f"{BASE}/accesses/settings/default_role",
                              json={"name": "default_role", "value": "A\u0000"},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 422

    @pytest.mark.parametrize("path", ["/users/email/a%00b", "/users/a%00b/resources",
                                      "/accesses/verifyEmail/a%00b"])
    def test_in_a_path_names_nothing(self, client, project, path):
        response = client.get(f"{BASE}{path}", params={"scope": project.name},
                              headers=project.headers("PROJECT_ADMIN"))
        assert response.status_code == 404


class TestDateRangeEdges:
    @pytest.mark.parametrize(("date_range", "total"), [
        ({"after": "0001-01-01T00:00:00+14:00"}, 1),
        ({"before": "9999-12-31T23:59:59-14:00"}, 1),
        ({"before": "0001-01-01T00:00:00+14:00"}, 0),
    ])
    def test_offsets_that_leave_the_calendar_are_clamped(self, client, project, date_range,
                                                         total):
        body = search(client, project.headers("EXPLOIT"), {"creationDate": date_range})
        assert body["page"]["totalElements"] == total
