"""rs-access UI modules: one class per operation."""

from __future__ import annotations

from tests.conftest import problem

BASE = "/rs-access/api/v1/applications/user/modules"
MODULE = {"active": True, "applicationId": "user", "container": "page_content",
          "description": "Search", "type": "SearchResults", "conf": '{"columns": 3}',
          "page": {"title": "Search", "home": True, "iconType": "DEFAULT"}}


def create(client, headers, base=BASE, **fields):
    response = client.post(base, json={**MODULE, **fields}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["content"]


class TestCreateModule:
    def test_stores_and_answers_the_wrapped_module(self, client, as_role):
        response = client.post(BASE, json=MODULE, headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 200
        body = response.json()
        assert body == {"content": {**MODULE, "id": body["content"]["id"]}, "links": []}

    def test_joins_the_application_of_the_path(self, client, as_role):
        module = create(client, as_role("PROJECT_ADMIN"), applicationId="portal")
        assert module["applicationId"] == "user"

    def test_conf_that_is_not_json_is_422(self, client, as_role):
        response = client.post(BASE, json={**MODULE, "conf": "{columns"},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 422
        assert response.json() == problem(
            422, "The module conf is not valid JSON: Expecting property name enclosed in double "
                 "quotes: line 1 column 2 (char 1).")

    def test_type_longer_than_32_is_400(self, client, as_role):
        response = client.post(BASE, json={**MODULE, "type": "t" * 33},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 400
        assert response.json() == problem(
            400, f'"{"t" * 33}" is longer than 32 characters - \'type\'')

    def test_application_longer_than_16_is_400(self, client, as_role):
        response = client.post("/rs-access/api/v1/applications/" + "a" * 17 + "/modules",
                               json=MODULE, headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 400

    def test_without_token_is_401(self, client, project):
        response = client.post(BASE, json=MODULE)
        assert response.status_code == 401
        assert response.json() == problem(401, "No authorization token provided")

    def test_admin_role_is_403(self, client, as_role):
        response = client.post(BASE, json=MODULE, headers=as_role("ADMIN"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role ADMIN does not hold the access /applications/{applicationId}/modules@POST.")


class TestListModules:
    def test_public_filters_by_active_and_type(self, client, project, as_role):
        admin = as_role("PROJECT_ADMIN")
        first = create(client, admin)
        create(client, admin, active=False)
        create(client, admin, type="Menu")
        create(client, admin, base="/rs-access/api/v1/applications/portal/modules")
        response = client.get(BASE, params={"scope": project.name, "active": "true",
                                            "type": "SearchResults"})
        assert response.status_code == 200
        assert response.json() == {
            "content": [{"content": first, "links": []}], "links": [],
            "page": {"number": 0, "size": 20, "totalElements": 1, "totalPages": 1}}

    def test_pages_and_sorts(self, client, project, as_role):
        admin = as_role("PROJECT_ADMIN")
        for description in ("b", "a", "c"):
            create(client, admin, description=description)
        body = client.get(BASE, params={"scope": project.name, "size": 2,
                                        "sort": "description,desc"}).json()
        assert [m["content"]["description"] for m in body["content"]] == ["c", "b"]
        assert body["page"] == {"number": 0, "size": 2, "totalElements": 3, "totalPages": 2}

    def test_unknown_sort_property_is_400(self, client, project):
        response = client.get(BASE, params={"scope": project.name, "sort": "conf"})
        assert response.status_code == 400
        assert response.json()["detail"].startswith(
            "Query parameter 'sort': 'conf' does not match")

    def test_size_over_1000_is_400(self, client, project):
        assert client.get(BASE, params={"scope": project.name, "size": 1001}).status_code == 400

    def test_unknown_project_is_404(self, client):
        response = client.get(BASE, params={"scope": "no-such-project"})
        assert response.status_code == 404
        assert response.json() == problem(404, "Project 'no-such-project' does not exist.")

    def test_invalid_token_is_401(self, client, project):
        response = client.get(BASE, headers={"Authorization": "Bearer not-a-jwt"})
        assert response.status_code == 401

    def test_token_of_another_project_is_403(self, client, project, other_project):
        response = client.get(BASE, params={"scope": project.name},
                              headers=other_project.headers("PROJECT_ADMIN"))
        assert response.status_code == 403


class TestGetModule:
    def test_found(self, client, project, as_role):
        module = create(client, as_role("PROJECT_ADMIN"))
        response = client.get(f"{BASE}/{module['id']}", params={"scope": project.name})
        assert response.status_code == 200
        assert response.json() == {"content": module, "links": []}

    def test_of_another_application_is_404(self, client, project, as_role):
        module = create(client, as_role("PROJECT_ADMIN"))
        response = client.get(f"/rs-access/api/v1/applications/portal/modules/{module['id']}",
                              params={"scope": project.name})
        assert response.status_code == 404
        assert response.json() == problem(
            404, f"Module {module['id']} of application 'portal' does not exist.")

    def test_no_scope_and_no_token_is_400(self, client):
        response = client.get(f"{BASE}/1")
        assert response.status_code == 400


class TestUpdateModule:
    def test_updates(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        module = create(client, admin)
        changed = {**module, "description": "Other", "active": False, "conf": "[]"}
        del changed["page"]
        response = client.put(f"{BASE}/{module['id']}", json=changed, headers=admin)
        assert response.status_code == 200
        assert response.json() == {"content": changed, "links": []}

    def test_id_mismatch_is_422(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        module = create(client, admin)
        response = client.put(f"{BASE}/{module['id']}", json={**module, "id": module["id"] + 1},
                              headers=admin)
        assert response.status_code == 422
        assert response.json() == problem(
            422, f"The module of the body (user, {module['id'] + 1}) is not the one of the path "
                 f"(user, {module['id']}).")

    def test_application_mismatch_is_422(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        module = create(client, admin)
        response = client.put(f"{BASE}/{module['id']}",
                              json={**module, "applicationId": "portal"}, headers=admin)
        assert response.status_code == 422

    def test_conf_that_is_not_json_is_422(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        module = create(client, admin)
        response = client.put(f"{BASE}/{module['id']}", json={**module, "conf": "nope"},
                              headers=admin)
        assert response.status_code == 422

    def test_unknown_is_404(self, client, as_role):
        response = client.put(f"{BASE}/424242", json=MODULE, headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 404
        assert response.json() == problem(
            404, "Module 424242 of application 'user' does not exist.")

    def test_exploit_role_is_403(self, client, as_role):
        assert client.put(f"{BASE}/1", json=MODULE, headers=as_role("EXPLOIT")).status_code == 403

    def test_without_token_is_401(self, client, project):
        assert client.put(f"{BASE}/1", json=MODULE).status_code == 401


class TestDeleteModule:
    def test_deletes(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        module = create(client, admin)
        response = client.delete(f"{BASE}/{module['id']}", headers=admin)
        assert response.status_code == 200
        assert response.json() == {"content": None, "links": []}
        assert client.get(f"{BASE}/{module['id']}", headers=admin).status_code == 404

    def test_unknown_is_404(self, client, as_role):
        assert client.delete(f"{BASE}/424242", headers=as_role("PROJECT_ADMIN")).status_code == 404

    def test_registered_user_is_403(self, client, as_role):
        assert client.delete(f"{BASE}/1", headers=as_role("REGISTERED_USER")).status_code == 403

    def test_without_token_is_401(self, client, project):
        assert client.delete(f"{BASE}/1").status_code == 401
