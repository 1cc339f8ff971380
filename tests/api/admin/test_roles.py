"""rs-admin roles and the accesses they hold: one class per operation."""

from __future__ import annotations

from tests.conftest import problem

BASE = "/rs-admin/api/v1/roles"
THEMES = "/rs-access/api/v1/themes"


def create_role(client, headers, name="operator", parent="EXPLOIT", **fields):
    response = client.post(BASE, json={"name": name, "parentRole": {"name": parent}, **fields},
                           headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["content"]


def names(response):
    assert response.status_code == 200, response.text
    return [item["content"]["name"] for item in response.json()]


def access_id(client, headers, resource, verb, microservice="rs-access"):
    listed = client.get("/rs-admin/api/v1/resources", params={"size": 1000},
                        headers=headers).json()["content"]
    return next(item["content"]["id"] for item in listed
                if item["content"]["resource"] == resource and item["content"]["verb"] == verb
                and item["content"]["microservice"] == microservice)


class TestListRoles:
    def test_native_roles_lowest_first_with_their_parents(self, client, as_role):
        response = client.get(BASE, headers=as_role("EXPLOIT"))
        assert names(response) == ["PUBLIC", "REGISTERED_USER", "EXPLOIT", "ADMIN",
                                   "PROJECT_ADMIN", "INSTANCE_ADMIN"]
        exploit = response.json()[2]["content"]
        assert exploit["isNative"] is True and exploit["isDefault"] is False
        assert exploit["parentRole"]["name"] == "REGISTERED_USER"
        assert exploit["parentRole"]["parentRole"]["name"] == "PUBLIC"
        assert "parentRole" not in response.json()[0]["content"]

    def test_registered_user_is_403(self, client, as_role):
        response = client.get(BASE, headers=as_role("REGISTERED_USER"))
        assert response.json() == problem(403, "Role REGISTERED_USER does not hold the access "
                                               "/roles@GET.")

    def test_without_token_is_401(self, client, project):
        assert client.get(BASE).status_code == 401


class TestCreateRole:
    def test_custom_role_under_a_parent(self, client, as_role):
        role = create_role(client, as_role("PROJECT_ADMIN"), authorizedAddresses=["10.0.0.1"])
        assert role["name"] == "operator" and role["isNative"] is False
        assert role["parentRole"]["name"] == "EXPLOIT"
        assert role["authorizedAddresses"] == ["10.0.0.1"]

    def test_starts_with_the_parents_accesses(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        create_role(client, admin)
        held = {(a["content"]["resource"], a["content"]["verb"]) for a in
                client.get(f"{BASE}/operator/resources", headers=admin).json()}
        parent = {(a["content"]["resource"], a["content"]["verb"]) for a in
                  client.get(f"{BASE}/EXPLOIT/resources", headers=admin).json()}
        assert held == parent and ("/roles", "GET") in held

    def test_a_user_of_the_new_role_passes_exploit_endpoints(self, client, project, as_role):
        create_role(client, as_role("PROJECT_ADMIN"))
        email = project.user("operator")
        headers = {"Authorization": f"Bearer {project.token(email)}"}
        assert client.get(BASE, headers=headers).status_code == 200

    def test_parent_is_required(self, client, as_role):
        response = client.post(BASE, json={"name": "x"}, headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(422, "Role 'x' needs a parentRole.")

    def test_existing_name_is_409(self, client, as_role):
        response = client.post(BASE, json={"name": "EXPLOIT", "parentRole": {"name": "PUBLIC"}},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(409, "Role 'EXPLOIT' already exists.")

    def test_unknown_parent_is_404(self, client, as_role):
        response = client.post(BASE, json={"name": "x", "parentRole": {"name": "NOPE"}},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(404, "Role 'NOPE' does not exist.")

    def test_parent_above_the_caller_is_403(self, client, as_role):
        response = client.post(BASE, json={"name": "x", "parentRole": {"name": "INSTANCE_ADMIN"}},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(
            403, "Role PROJECT_ADMIN cannot manage role INSTANCE_ADMIN, which is not below it.")

    def test_bad_name_is_400(self, client, as_role):
        response = client.post(BASE, json={"name": "a b", "parentRole": {"name": "PUBLIC"}},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 400

    def test_admin_is_403(self, client, as_role):
        response = client.post(BASE, json={"name": "x", "parentRole": {"name": "PUBLIC"}},
                               headers=as_role("ADMIN"))
        assert response.status_code == 403


class TestRetrieveRole:
    def test_one_role(self, client, as_role):
        response = client.get(f"{BASE}/ADMIN", headers=as_role("EXPLOIT"))
        assert response.json()["content"]["parentRole"]["name"] == "EXPLOIT"

    def test_unknown_is_404(self, client, as_role):
        response = client.get(f"{BASE}/NOPE", headers=as_role("EXPLOIT"))
        assert response.json() == problem(404, "Role 'NOPE' does not exist.")


class TestUpdateRole:
    def test_changes_parent_and_addresses_of_a_custom_role(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        create_role(client, admin)
        response = client.put(f"{BASE}/operator", json={
            "name": "operator", "parentRole": {"name": "ADMIN"}, "authorizedAddresses": ["::1"]},
            headers=admin)
        assert response.status_code == 200, response.text
        assert response.json()["content"]["parentRole"]["name"] == "ADMIN"
        assert response.json()["content"]["authorizedAddresses"] == ["::1"]

    def test_name_mismatch_is_400(self, client, as_role):
        response = client.put(f"{BASE}/EXPLOIT", json={"name": "ADMIN"},
                              headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(
            400, "The role name in the body ('ADMIN') is not the path's ('EXPLOIT').")

    def test_native_role_cannot_be_reparented(self, client, as_role):
        response = client.put(f"{BASE}/EXPLOIT", json={"name": "EXPLOIT",
                                                       "parentRole": {"name": "PUBLIC"}},
                              headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(403, "Role EXPLOIT is native: its parent cannot change.")

    def test_native_role_keeps_its_parent_when_named_again(self, client, as_role):
        response = client.put(f"{BASE}/EXPLOIT", json={
            "name": "EXPLOIT", "parentRole": {"name": "REGISTERED_USER"},
            "authorizedAddresses": ["127.0.0.1"]}, headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 200
        assert response.json()["content"]["authorizedAddresses"] == ["127.0.0.1"]

    def test_cycle_is_409(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        create_role(client, admin, name="a")
        create_role(client, admin, name="b", parent="a")
        response = client.put(f"{BASE}/a", json={"name": "a", "parentRole": {"name": "b"}},
                              headers=admin)
        assert response.json() == problem(409, "Role b is a or above it: it cannot be its parent.")

    def test_unknown_is_404(self, client, as_role):
        response = client.put(f"{BASE}/NOPE", json={"name": "NOPE"},
                              headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 404


class TestRemoveRole:
    def test_users_and_sub_roles_move_to_the_parent(self, client, project, as_role):
        admin = as_role("PROJECT_ADMIN")
        create_role(client, admin, name="a")
        create_role(client, admin, name="b", parent="a")
        email = project.user("a")
        assert client.delete(f"{BASE}/a", headers=admin).status_code == 204
        assert client.get(f"{BASE}/b", headers=admin).json()["content"]["parentRole"]["name"] \
            == "EXPLOIT"
        headers = {"Authorization": f"Bearer {project.token(email)}"}
        assert client.get(BASE, headers=headers).status_code == 200  # now EXPLOIT
        assert client.get(f"{BASE}/a", headers=admin).status_code == 404

    def test_native_role_is_403(self, client, as_role):
        response = client.delete(f"{BASE}/EXPLOIT", headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(403, "Role EXPLOIT is native and cannot be deleted.")

    def test_unknown_is_404(self, client, as_role):
        assert client.delete(f"{BASE}/NOPE", headers=as_role("PROJECT_ADMIN")).status_code == 404


class TestHierarchy:
    def test_ascendants_are_the_role_and_its_parents(self, client, as_role):
        response = client.get(f"{BASE}/EXPLOIT/ascendants", headers=as_role("EXPLOIT"))
        assert names(response) == ["PUBLIC", "REGISTERED_USER", "EXPLOIT"]

    def test_descendants_are_the_role_and_those_above_it(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        create_role(client, admin)
        response = client.get(f"{BASE}/EXPLOIT/descendants", headers=admin)
        assert names(response) == ["EXPLOIT", "ADMIN", "operator", "PROJECT_ADMIN",
                                   "INSTANCE_ADMIN"]

    def test_unknown_is_404(self, client, as_role):
        assert client.get(f"{BASE}/NOPE/ascendants", headers=as_role("EXPLOIT")).status_code == 404
        assert client.get(f"{BASE}/NOPE/descendants",
                          headers=as_role("EXPLOIT")).status_code == 404

    def test_borrowables_of_a_caller(self, client, as_role):
        response = client.get(f"{BASE}/borrowables", headers=as_role("EXPLOIT"))
        assert names(response) == ["PUBLIC", "REGISTERED_USER", "EXPLOIT"]

    def test_borrowables_of_an_anonymous_caller(self, client, project):
        response = client.get(f"{BASE}/borrowables", params={"scope": project.name})
        assert names(response) == ["PUBLIC"]


class TestRoleResources:
    def test_grant_then_withdraw(self, client, as_role, project):
        admin = as_role("PROJECT_ADMIN")
        create_role(client, admin)
        themes = access_id(client, admin, "/themes", "POST")
        response = client.post(f"{BASE}/operator/resources", json={"id": themes}, headers=admin)
        assert response.status_code == 201
        assert response.json()["content"]["resource"] == "/themes"
        email = project.user("operator")
        headers = {"Authorization": f"Bearer {project.token(email)}"}
        body = {"name": "t", "configuration": "{}"}
        assert client.post(THEMES, json=body, headers=headers).status_code == 200
        response = client.delete(f"{BASE}/operator/resources/{themes}", headers=admin)
        assert response.status_code == 204
        assert client.post(THEMES, json=body, headers=headers).status_code == 403

    def test_grant_by_microservice_resource_and_verb(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        response = client.post(f"{BASE}/EXPLOIT/resources", json={
            "microservice": "rs-access", "resource": "/themes", "verb": "POST"}, headers=admin)
        assert response.status_code == 201
        held = client.get(f"{BASE}/EXPLOIT/resources/rs-access", headers=admin).json()
        assert {"/themes"} <= {a["content"]["resource"] for a in held}
        assert {a["content"]["microservice"] for a in held} == {"rs-access"}

    def test_caller_grants_only_what_it_holds(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        themes = access_id(client, admin, "/themes", "POST")
        create_role(client, admin, name="low", parent="PUBLIC")
        # an ADMIN would manage "low" but does not hold POST /themes (PROJECT_ADMIN)
        client.post(f"{BASE}/ADMIN/resources", json={"id": access_id(
            client, admin, "/roles/{role_name}/resources", "POST", "rs-admin")}, headers=admin)
        response = client.post(f"{BASE}/low/resources", json={"id": themes},
                               headers=as_role("ADMIN"))
        assert response.json() == problem(
            403, "Role ADMIN does not hold /themes@POST of rs-access, so it cannot grant it.")

    def test_inherited_access_cannot_be_withdrawn_from_the_child(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        create_role(client, admin)
        roles_get = access_id(client, admin, "/roles", "GET", "rs-admin")
        response = client.delete(f"{BASE}/operator/resources/{roles_get}", headers=admin)
        assert response.json() == problem(
            409, f"Role operator holds resource access {roles_get} through role EXPLOIT; "
                 "withdraw it from EXPLOIT.")

    def test_unknown_access_is_404(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        response = client.post(f"{BASE}/EXPLOIT/resources", json={"id": 99999999}, headers=admin)
        assert response.json() == problem(404, "Resource access 99999999 does not exist.")
        response = client.delete(f"{BASE}/EXPLOIT/resources/99999999", headers=admin)
        assert response.json() == problem(404, "Resource access 99999999 does not exist.")

    def test_unnamed_access_is_422(self, client, as_role):
        response = client.post(f"{BASE}/EXPLOIT/resources", json={"verb": "GET"},
                               headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 422

    def test_not_held_by_the_role_is_404(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        themes = access_id(client, admin, "/themes", "POST")
        response = client.delete(f"{BASE}/EXPLOIT/resources/{themes}", headers=admin)
        assert response.json() == problem(
            404, f"Role EXPLOIT does not hold resource access {themes}.")

    def test_non_numeric_access_id_is_400(self, client, as_role):
        response = client.delete(f"{BASE}/EXPLOIT/resources/abc", headers=as_role("PROJECT_ADMIN"))
        assert response.status_code == 400

    def test_exploit_cannot_read_role_resources(self, client, as_role):
        assert client.get(f"{BASE}/EXPLOIT/resources",
                          headers=as_role("EXPLOIT")).status_code == 403


def test_lone_surrogate_in_a_body_is_400(client, as_role):
    response = client.post(BASE, content=b'{"name": "\\ud800", "parentRole": {"name": "PUBLIC"}}',
                           headers={**as_role("PROJECT_ADMIN"), "Content-Type": "application/json"})
    assert response.json() == problem(400, "The body holds text that is not valid Unicode.")
