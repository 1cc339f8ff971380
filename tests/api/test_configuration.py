"""rs-access UI configuration: one class per operation."""

from __future__ import annotations

from tests.conftest import problem

BASE = "/rs-access/api/v1/configuration/user"
CONFIGURATION = {"configuration": '{"primaryColor": "#123456"}'}


class TestGetConfiguration:
    def test_none_stored_is_204(self, client, project):
        response = client.get(BASE, params={"scope": project.name})
        assert response.status_code == 204
        assert response.content == b""

    def test_found(self, client, project, as_role):
        client.post(BASE, json=CONFIGURATION, headers=as_role("ADMIN"))
        response = client.get(BASE, params={"scope": project.name})
        assert response.status_code == 200
        assert response.json() == {"content": CONFIGURATION, "links": []}

    def test_per_application_and_project(self, client, project, other_project, as_role):
        client.post(BASE, json=CONFIGURATION, headers=as_role("ADMIN"))
        other_app = client.get("/rs-access/api/v1/configuration/portal",
                               params={"scope": project.name})
        other = client.get(BASE, params={"scope": other_project.name})
        assert (other_app.status_code, other.status_code) == (204, 204)

    def test_unknown_project_is_404(self, client):
        response = client.get(BASE, params={"scope": "no-such-project"})
        assert response.status_code == 404
        assert response.json() == problem(404, "Project 'no-such-project' does not exist.")

    def test_no_scope_and_no_token_is_400(self, client):
        assert client.get(BASE).status_code == 400

    def test_invalid_token_is_401(self, client, project):
        response = client.get(BASE, headers={"Authorization": "Bearer not-a-jwt"})
        assert response.status_code == 401

    def test_token_of_another_project_is_403(self, client, project, other_project):
        response = client.get(BASE, params={"scope": project.name},
                              headers=other_project.headers("ADMIN"))
        assert response.status_code == 403


class TestCreateConfiguration:
    def test_stores(self, client, as_role):
        response = client.post(BASE, json=CONFIGURATION, headers=as_role("ADMIN"))
        assert response.status_code == 200
        assert response.json() == {"content": CONFIGURATION, "links": []}

    def test_replaces_a_stored_one(self, client, project, as_role):
        admin = as_role("ADMIN")
        client.post(BASE, json=CONFIGURATION, headers=admin)
        client.post(BASE, json={"configuration": "{}"}, headers=admin)
        response = client.get(BASE, params={"scope": project.name})
        assert response.json() == {"content": {"configuration": "{}"}, "links": []}

    def test_missing_configuration_is_400(self, client, as_role):
        response = client.post(BASE, json={}, headers=as_role("ADMIN"))
        assert response.status_code == 400
        assert response.json() == problem(400, '"configuration" is a required property')

    def test_exploit_role_is_403(self, client, as_role):
        response = client.post(BASE, json=CONFIGURATION, headers=as_role("EXPLOIT"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role EXPLOIT does not hold the access /configuration/{applicationId}@POST.")

    def test_without_token_is_401(self, client, project):
        assert client.post(BASE, json=CONFIGURATION).status_code == 401

    def test_bad_application_is_400(self, client, as_role):
        response = client.post("/rs-access/api/v1/configuration/a%20b", json=CONFIGURATION,
                               headers=as_role("ADMIN"))
        assert response.status_code == 400


class TestUpdateConfiguration:
    def test_updates(self, client, project, as_role):
        admin = as_role("ADMIN")
        client.post(BASE, json=CONFIGURATION, headers=admin)
        response = client.put(BASE, json={"configuration": "[]"}, headers=admin)
        assert response.status_code == 200
        assert response.json() == {"content": {"configuration": "[]"}, "links": []}

    def test_none_stored_is_404(self, client, as_role):
        response = client.put(BASE, json=CONFIGURATION, headers=as_role("ADMIN"))
        assert response.status_code == 404
        assert response.json() == problem(404, "Application 'user' has no UI configuration.")

    def test_registered_user_is_403(self, client, as_role):
        response = client.put(BASE, json=CONFIGURATION, headers=as_role("REGISTERED_USER"))
        assert response.status_code == 403

    def test_without_token_is_401(self, client, project):
        assert client.put(BASE, json=CONFIGURATION).status_code == 401

    def test_wrong_content_type_is_415(self, client, as_role):
        response = client.put(BASE, content="x", headers={**as_role("ADMIN"),
                                                          "Content-Type": "text/plain"})
        assert response.status_code == 415
