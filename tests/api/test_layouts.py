"""rs-access UI layouts: one class per operation."""

from __future__ import annotations

import json

from featurehub.services.access.configuration import DEFAULT_LAYOUTS
from tests.conftest import problem

BASE = "/rs-access/api/v1/layouts"
LAYOUT = json.dumps({"id": "main", "type": "MainContainer", "containers": []})


class TestGetLayout:
    def test_default_layout_of_the_user_application(self, client, project):
        response = client.get(f"{BASE}/user", params={"scope": project.name})
        assert response.status_code == 200
        body = response.json()
        assert body == {"content": {"applicationId": "user", "layout": body["content"]["layout"]},
                        "links": []}
        assert json.loads(body["content"]["layout"]) == DEFAULT_LAYOUTS["user"]

    def test_other_applications_default_to_the_portal_layout(self, client, project):
        response = client.get(f"{BASE}/admin", params={"scope": project.name})
        assert json.loads(response.json()["content"]["layout"]) == DEFAULT_LAYOUTS["portal"]

    def test_stored_layout(self, client, project, as_role):
        stored = client.put(f"{BASE}/user", headers=as_role("PROJECT_ADMIN"),
                            json={"applicationId": "user", "layout": LAYOUT}).json()["content"]
        response = client.get(f"{BASE}/user", params={"scope": project.name})
        assert response.json() == {"content": {"id": stored["id"], "applicationId": "user",
                                               "layout": LAYOUT}, "links": []}

    def test_unknown_project_is_404(self, client):
        response = client.get(f"{BASE}/user", params={"scope": "no-such-project"})
        assert response.status_code == 404

    def test_no_scope_and_no_token_is_400(self, client):
        assert client.get(f"{BASE}/user").status_code == 400

    def test_invalid_token_is_401(self, client, project):
        response = client.get(f"{BASE}/user", headers={"Authorization": "Bearer x"})
        assert response.status_code == 401

    def test_token_of_another_project_is_403(self, client, project, other_project):
        response = client.get(f"{BASE}/user", params={"scope": project.name},
                              headers=other_project.headers("ADMIN"))
        assert response.status_code == 403


class TestUpdateLayout:
    def test_stores_then_replaces(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        first = client.put(f"{BASE}/portal", headers=admin,
                           json={"applicationId": "portal", "layout": LAYOUT})
        assert first.status_code == 200
        layout_id = first.json()["content"]["id"]
        assert first.json() == {"content": {"id": layout_id, "applicationId": "portal",
                                            "layout": LAYOUT}, "links": []}
        second = client.put(f"{BASE}/portal", headers=admin,
                            json={"id": layout_id, "applicationId": "portal", "layout": "{}"})
        assert second.json() == {"content": {"id": layout_id, "applicationId": "portal",
                                             "layout": "{}"}, "links": []}

    def test_application_mismatch_is_422(self, client, as_role):
        response = client.put(f"{BASE}/user", headers=as_role("PROJECT_ADMIN"),
                              json={"applicationId": "portal", "layout": LAYOUT})
        assert response.status_code == 422
        assert response.json() == problem(
            422, "The layout of the body is for application 'portal', not 'user'.")

    def test_id_mismatch_is_422(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        stored = client.put(f"{BASE}/user", headers=admin,
                            json={"applicationId": "user", "layout": LAYOUT}).json()["content"]
        response = client.put(f"{BASE}/user", headers=admin, json={
            "id": stored["id"] + 1, "applicationId": "user", "layout": LAYOUT})
        assert response.status_code == 422
        assert response.json() == problem(
            422, f"The layout id in the body ({stored['id'] + 1}) is not the stored one "
                 f"({stored['id']}).")

    def test_layout_that_is_not_a_json_object_is_422(self, client, as_role):
        response = client.put(f"{BASE}/user", headers=as_role("PROJECT_ADMIN"),
                              json={"applicationId": "user", "layout": "[1]"})
        assert response.status_code == 422
        assert response.json() == problem(422, "The layout is not a JSON object: not an object.")

    def test_missing_layout_is_400(self, client, as_role):
        response = client.put(f"{BASE}/user", headers=as_role("PROJECT_ADMIN"),
                              json={"applicationId": "user"})
        assert response.status_code == 400
        assert response.json() == problem(400, '"layout" is a required property')

    def test_admin_role_is_403(self, client, as_role):
        response = client.put(f"{BASE}/user", headers=as_role("ADMIN"),
                              json={"applicationId": "user", "layout": LAYOUT})
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role ADMIN does not hold the access /layouts/{applicationId}@PUT.")

    def test_without_token_is_401(self, client, project):
        response = client.put(f"{BASE}/user", json={"applicationId": "user", "layout": LAYOUT})
        assert response.status_code == 401

    def test_unknown_application_path_is_404(self, client, as_role):
        response = client.put(f"{BASE}/user/extra", headers=as_role("PROJECT_ADMIN"),
                              json={"applicationId": "user", "layout": LAYOUT})
        assert response.status_code == 404
