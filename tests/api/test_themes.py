"""rs-access themes: one class per operation."""

from __future__ import annotations

from tests.conftest import problem

BASE = "/rs-access/api/v1/themes"


def create(client, headers, **fields):
    body = {"name": "dark", "configuration": '{"palette": "dark"}', **fields}
    response = client.post(BASE, json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["content"]


class TestCreateTheme:
    def test_stores_and_answers_the_wrapped_theme(self, client, as_role):
        response = client.post(BASE, json={"name": "dark", "configuration": "{}"},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 200
        body = response.json()
        assert body == {"content": {"id": body["content"]["id"], "name": "dark",
                                    "configuration": "{}", "active": False, "visible": True},
                        "links": []}

    def test_saving_an_active_theme_deactivates_the_others(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        first = create(client, admin, name="first", active=True)
        second = create(client, admin, name="second", active=True)
        listed = client.get(BASE, headers=admin).json()["content"]
        assert {t["content"]["id"]: t["content"]["active"] for t in listed} == {
            first["id"]: False, second["id"]: True}

    def test_name_longer_than_16_is_refused(self, client, as_role):
        response = client.post(BASE, json={"name": "x" * 17, "configuration": "{}"},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/problem+json"

    def test_without_token_is_401(self, client, project):
        response = client.post(BASE, json={"name": "x", "configuration": "{}"})
        assert response.status_code == 401
        assert response.json() == problem(401, "No authorization token provided")

    def test_invalid_token_is_401(self, client, project):
        response = client.post(BASE, json={"name": "x", "configuration": "{}"},
                               headers={"Authorization": "Bearer not-a-jwt"})
        assert response.status_code == 401
        assert response.json()["detail"].startswith("The token is invalid")

    def test_exploit_role_is_403(self, client, as_role):
        response = client.post(BASE, json={"name": "x", "configuration": "{}"},
                               headers=as_role("EXPLOIT"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role EXPLOIT does not hold the access /themes@POST.")

    def test_wrong_content_type_is_415(self, client, as_role):
        response = client.post(BASE, content="name=x", headers={
            **as_role("PROJECT_ADMIN"), "Content-Type": "text/plain"})
        assert response.status_code == 415


class TestListThemes:
    def test_public_with_scope_pages_and_sorts(self, client, project, as_role):
        admin = as_role("PROJECT_ADMIN")
        for name in ("b", "a", "c"):
            create(client, admin, name=name)
        response = client.get(BASE, params={"scope": project.name, "size": 2, "page": 0,
                                            "sort": "name,desc"})
        assert response.status_code == 200
        body = response.json()
        assert [t["content"]["name"] for t in body["content"]] == ["c", "b"]
        assert body["page"] == {"number": 0, "size": 2, "totalElements": 3, "totalPages": 2}

    def test_scope_header_names_the_project(self, client, project):
        response = client.get(BASE, headers={"scope": project.name})
        assert response.status_code == 200
        assert response.json()["page"]["totalElements"] == 0

    def test_projects_do_not_see_each_other(self, client, project, other_project, as_role):
        create(client, as_role("PROJECT_ADMIN"), name="mine")
        response = client.get(BASE, params={"scope": other_project.name})
        assert response.json()["content"] == []

    def test_unknown_project_is_404(self, client):
        response = client.get(BASE, params={"scope": "no-such-project"})
        assert response.status_code == 404
        assert response.json() == problem(404, "Project 'no-such-project' does not exist.")

    def test_no_scope_and_no_token_is_400(self, client):
        response = client.get(BASE)
        assert response.status_code == 400
        assert response.json() == problem(
            400, "Name the project with the 'scope' query parameter or header, or send a token.")

    def test_page_size_over_1000_is_400(self, client, project):
        response = client.get(BASE, params={"scope": project.name, "size": 1001})
        assert response.status_code == 400

    def test_unknown_sort_property_is_400(self, client, project):
        response = client.get(BASE, params={"scope": project.name, "sort": "colour,asc"})
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["detail"].startswith(
            "Query parameter 'sort': 'colour' does not match")

    def test_token_of_another_project_is_403(self, client, project, other_project):
        headers = other_project.headers("PROJECT_ADMIN")
        response = client.get(BASE, params={"scope": project.name}, headers=headers)
        assert response.status_code == 403
        assert response.json() == problem(
            403, f"This token belongs to project '{other_project.name}', not '{project.name}'.")

    def test_instance_admin_may_act_in_any_project(self, client, project, other_project):
        headers = other_project.headers("INSTANCE_ADMIN")
        response = client.get(BASE, params={"scope": project.name}, headers=headers)
        assert response.status_code == 200


class TestGetTheme:
    def test_found(self, client, project, as_role):
        theme = create(client, as_role("PROJECT_ADMIN"))
        response = client.get(f"{BASE}/{theme['id']}", params={"scope": project.name})
        assert response.json() == {"content": theme, "links": []}

    def test_unknown_is_404(self, client, project):
        response = client.get(f"{BASE}/999999", params={"scope": project.name})
        assert response.status_code == 404
        assert response.json() == problem(404, "Theme 999999 does not exist.")

    def test_theme_of_another_project_is_404(self, client, project, other_project, as_role):
        theme = create(client, as_role("PROJECT_ADMIN"))
        response = client.get(f"{BASE}/{theme['id']}", params={"scope": other_project.name})
        assert response.status_code == 404

    def test_non_numeric_id_matches_no_route(self, client, project):
        response = client.get(f"{BASE}/abc", params={"scope": project.name})
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/problem+json"


class TestUpdateTheme:
    def test_updates(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        theme = create(client, admin)
        response = client.put(f"{BASE}/{theme['id']}", headers=admin, json={
            "id": theme["id"], "name": "light", "configuration": "{}", "active": True,
            "visible": False})
        assert response.status_code == 200
        assert response.json()["content"] == {"id": theme["id"], "name": "light",
                                              "configuration": "{}", "active": True,
                                              "visible": False}

    def test_id_mismatch_is_422(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        theme = create(client, admin)
        response = client.put(f"{BASE}/{theme['id']}", headers=admin, json={
            "id": theme["id"] + 1, "name": "light", "configuration": "{}"})
        assert response.status_code == 422
        assert response.json() == problem(
            422, f"The theme id in the body ({theme['id'] + 1}) is not the one in the path "
                 f"({theme['id']}).")

    def test_unknown_is_404(self, client, as_role):
        response = client.put(f"{BASE}/424242", headers=as_role("PROJECT_ADMIN"),
                              json={"name": "light", "configuration": "{}"})
        assert response.status_code == 404

    def test_admin_role_is_403(self, client, as_role):
        response = client.put(f"{BASE}/1", headers=as_role("ADMIN"),
                              json={"name": "light", "configuration": "{}"})
        assert response.status_code == 403


class TestDeleteTheme:
    def test_deletes(self, client, project, as_role):
        admin = as_role("PROJECT_ADMIN")
        theme = create(client, admin)
        response = client.delete(f"{BASE}/{theme['id']}", headers=admin)
        assert response.status_code == 200
        assert response.json() == {"content": None, "links": []}
        assert client.get(f"{BASE}/{theme['id']}", headers=admin).status_code == 404

    def test_unknown_is_404(self, client, as_role):
        response = client.delete(f"{BASE}/424242", headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 404

    def test_without_token_is_401(self, client, project):
        assert client.delete(f"{BASE}/1").status_code == 401
