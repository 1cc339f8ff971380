"""rs-access search history: one class per operation."""

from __future__ import annotations

from tests.conftest import problem

BASE = "/rs-access/api/v1/history"


class Owner:
    """A registered user with the headers of its token."""

    def __init__(self, project, role="REGISTERED_USER"):
        self.email = project.user(role)
        self.headers = {"Authorization": f"Bearer {project.token(self.email, role)}"}


def save(client, owner, name="mine", module_id=7, configuration='{"q": "x"}', as_headers=None):
    response = client.post(BASE, params={"accountEmail": owner.email, "moduleId": module_id},
                           json={"name": name, "configuration": configuration},
                           headers=as_headers or owner.headers)
    assert response.status_code == 200, response.text
    return response.json()["content"]


class TestCreateSearchHistory:
    def test_stores_and_answers_the_wrapped_element(self, client, project):
        owner = Owner(project)
        response = client.post(BASE, params={"accountEmail": owner.email, "moduleId": 7},
                               json={"name": "mine", "configuration": "{}"},
                               headers=owner.headers)
        assert response.status_code == 200
        body = response.json()
        assert body == {"content": {"id": body["content"]["id"], "name": "mine",
                                    "configuration": "{}"}, "links": []}

    def test_for_another_account_is_403_below_admin(self, client, project):
        owner, other = Owner(project), Owner(project, "EXPLOIT")
        response = client.post(BASE, params={"accountEmail": owner.email, "moduleId": 7},
                               json={"name": "x", "configuration": "{}"}, headers=other.headers)
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role EXPLOIT reaches only the caller's own search history.")

    def test_admin_writes_for_anyone(self, client, project, as_role):
        owner = Owner(project)
        item = save(client, owner, as_headers=as_role("ADMIN"))
        listed = client.get(BASE, params={"accountEmail": owner.email, "moduleId": 7},
                            headers=owner.headers).json()["content"]
        assert listed == [{"content": item, "links": []}]

    def test_missing_name_is_400(self, client, project):
        owner = Owner(project)
        response = client.post(BASE, params={"accountEmail": owner.email, "moduleId": 7},
                               json={"configuration": "{}"}, headers=owner.headers)
        assert response.status_code == 400
        assert response.json() == problem(400, '"name" is a required property')

    def test_missing_account_is_400(self, client, project):
        owner = Owner(project)
        response = client.post(BASE, params={"moduleId": 7},
                               json={"name": "x", "configuration": "{}"}, headers=owner.headers)
        assert response.status_code == 400

    def test_without_token_is_401(self, client, project):
        response = client.post(BASE, params={"accountEmail": "a@b.c", "moduleId": 7,
                                             "scope": project.name},
                               json={"name": "x", "configuration": "{}"})
        assert response.status_code == 401
        assert response.json() == problem(401, "No authorization token provided")


class TestListSearchHistory:
    def test_per_account_and_module_sorted_by_name(self, client, project):
        owner, other = Owner(project), Owner(project)
        b = save(client, owner, name="b")
        a = save(client, owner, name="a")
        save(client, owner, name="other module", module_id=8)
        save(client, other, name="other account")
        response = client.get(BASE, params={"accountEmail": owner.email, "moduleId": 7},
                              headers=owner.headers)
        assert response.status_code == 200
        assert response.json() == {
            "content": [{"content": a, "links": []}, {"content": b, "links": []}], "links": [],
            "page": {"number": 0, "size": 20, "totalElements": 2, "totalPages": 1}}

    def test_sorts_on_request(self, client, project):
        owner = Owner(project)
        for name in ("a", "c", "b"):
            save(client, owner, name=name)
        body = client.get(BASE, params={"accountEmail": owner.email, "moduleId": 7,
                                        "sort": "name,desc", "size": 2},
                          headers=owner.headers).json()
        assert [item["content"]["name"] for item in body["content"]] == ["c", "b"]
        assert body["page"] == {"number": 0, "size": 2, "totalElements": 3, "totalPages": 2}

    def test_unknown_sort_property_is_400(self, client, project):
        owner = Owner(project)
        response = client.get(BASE, params={"accountEmail": owner.email, "moduleId": 7,
                                            "sort": "configuration"}, headers=owner.headers)
        assert response.status_code == 400

    def test_another_account_is_403_below_admin(self, client, project):
        owner, other = Owner(project), Owner(project)
        response = client.get(BASE, params={"accountEmail": owner.email, "moduleId": 7},
                              headers=other.headers)
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role REGISTERED_USER reaches only the caller's own search history.")

    def test_admin_reads_anyone(self, client, project, as_role):
        owner = Owner(project)
        save(client, owner)
        response = client.get(BASE, params={"accountEmail": owner.email, "moduleId": 7},
                              headers=as_role("ADMIN"))
        assert response.json()["page"]["totalElements"] == 1

    def test_without_token_is_401(self, client, project):
        response = client.get(BASE, params={"accountEmail": "a@b.c", "moduleId": 7,
                                            "scope": project.name})
        assert response.status_code == 401

    def test_unknown_project_of_a_token_is_404(self, client, project, rt):
        token, _ = rt.keys.issue(subject="x@y.z", tenant="no-such-project", role="ADMIN")
        response = client.get(BASE, params={"accountEmail": "a@b.c", "moduleId": 7},
                              headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 404
        assert response.json() == problem(404, "Project 'no-such-project' does not exist.")


class TestUpdateSearchHistory:
    def test_replaces_the_configuration(self, client, project):
        owner = Owner(project)
        item = save(client, owner)
        response = client.put(f"{BASE}/{item['id']}", json='{"q": "new"}', headers=owner.headers)
        assert response.status_code == 200
        assert response.json() == {"content": {**item, "configuration": '{"q": "new"}'},
                                   "links": []}

    def test_body_that_is_not_a_string_is_400(self, client, project):
        owner = Owner(project)
        item = save(client, owner)
        response = client.put(f"{BASE}/{item['id']}", json={"q": 1}, headers=owner.headers)
        assert response.status_code == 400

    def test_of_another_account_is_403(self, client, project):
        owner, other = Owner(project), Owner(project)
        item = save(client, owner)
        response = client.put(f"{BASE}/{item['id']}", json="{}", headers=other.headers)
        assert response.status_code == 403

    def test_unknown_is_404(self, client, project):
        response = client.put(f"{BASE}/424242", json="{}", headers=Owner(project).headers)
        assert response.status_code == 404
        assert response.json() == problem(404, "Search history element 424242 does not exist.")

    def test_without_token_is_401(self, client, project):
        assert client.put(f"{BASE}/1", json="{}").status_code == 401


class TestDeleteSearchHistory:
    def test_deletes(self, client, project):
        owner = Owner(project)
        item = save(client, owner)
        response = client.delete(f"{BASE}/{item['id']}", headers=owner.headers)
        assert response.status_code == 200
        assert response.json() == {"content": None, "links": []}
        listed = client.get(BASE, params={"accountEmail": owner.email, "moduleId": 7},
                            headers=owner.headers).json()
        assert listed["content"] == []

    def test_of_another_account_is_403(self, client, project):
        owner, other = Owner(project), Owner(project, "EXPLOIT")
        item = save(client, owner)
        assert client.delete(f"{BASE}/{item['id']}", headers=other.headers).status_code == 403

    def test_admin_deletes_anyone_s(self, client, project, as_role):
        item = save(client, Owner(project))
        assert client.delete(f"{BASE}/{item['id']}", headers=as_role("ADMIN")).status_code == 200

    def test_of_another_project_is_404(self, client, project, other_project):
        item = save(client, Owner(project))
        response = client.delete(f"{BASE}/{item['id']}", headers=Owner(other_project).headers)
        assert response.status_code == 404

    def test_without_token_is_401(self, client, project):
        assert client.delete(f"{BASE}/1").status_code == 401
