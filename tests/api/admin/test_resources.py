"""rs-admin resource accesses and endpoint registration: one class per operation."""

from __future__ import annotations

from tests.api.admin.test_roles import access_id
from tests.conftest import problem

BASE = "/rs-admin/api/v1/resources"
THEMES = "/rs-access/api/v1/themes"


class TestListResourceAccesses:
    def test_paged_with_every_contract_endpoint(self, client, project):
        response = client.get(BASE, params={"scope": project.name, "size": 1000})
        assert response.status_code == 200, response.text
        body = response.json()
        keys = {(a["content"]["microservice"], a["content"]["resource"], a["content"]["verb"])
                for a in body["content"]}
        assert ("rs-admin", "/roles", "POST") in keys and ("rs-access", "/themes", "GET") in keys
        assert body["page"]["totalElements"] == len(keys)
        item = next(a["content"] for a in body["content"] if a["content"]["resource"] == "/roles"
                    and a["content"]["verb"] == "POST")
        assert item["defaultRole"] == "PROJECT_ADMIN" and item["controllerSimpleName"] == "roles"

    def test_sorted_and_paged(self, client, project):
        response = client.get(BASE, params={"scope": project.name, "size": 2, "page": 1,
                                            "sort": "resource,desc"})
        body = response.json()
        assert body["page"]["number"] == 1 and len(body["content"]) == 2
        resources = [a["content"]["resource"] for a in body["content"]]
        assert resources == sorted(resources, reverse=True)

    def test_unsortable_property_is_400(self, client, project):
        response = client.get(BASE, params={"scope": project.name, "sort": "nope"})
        assert response.status_code == 400

    def test_page_size_below_one_is_400_naming_the_parameter(self, client, project):
        response = client.get(BASE, params={"scope": project.name, "size": 0})
        assert response.status_code == 400
        assert response.json() == problem(
            400, "Query parameter 'size': 0 is less than the minimum of 1")

    def test_without_scope_or_token_is_400(self, client, project):
        response = client.get(BASE)
        assert response.json() == problem(
            400, "Name the project with the 'scope' query parameter or header, or send a token.")


class TestGetResourceAccess:
    def test_one(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        themes = access_id(client, admin, "/themes", "POST")
        response = client.get(f"{BASE}/{themes}", headers=admin)
        assert response.json()["content"]["resource"] == "/themes"

    def test_unknown_is_404(self, client, project):
        response = client.get(f"{BASE}/99999999", params={"scope": project.name})
        assert response.json() == problem(404, "Resource access 99999999 does not exist.")

    def test_of_another_project_is_404(self, client, as_role, other_project):
        themes = access_id(client, other_project.headers("PROJECT_ADMIN"), "/themes", "POST")
        assert client.get(f"{BASE}/{themes}", headers=as_role("EXPLOIT")).status_code == 404


class TestUpdateResourceAccess:
    def body(self, client, headers, resource="/themes", verb="POST", microservice="rs-access"):
        ident = access_id(client, headers, resource, verb, microservice)
        return ident, client.get(f"{BASE}/{ident}", headers=headers).json()["content"]

    def test_new_default_role_moves_the_grant(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        ident, body = self.body(client, admin)
        exploit = as_role("EXPLOIT")
        create = {"name": "t", "configuration": "{}"}
        assert client.post(THEMES, json=create, headers=exploit).status_code == 403
        response = client.put(f"{BASE}/{ident}", json={**body, "defaultRole": "EXPLOIT",
                                                        "description": "now EXPLOIT"},
                              headers=admin)
        assert response.status_code == 200, response.text
        assert response.json()["content"]["defaultRole"] == "EXPLOIT"
        assert response.json()["content"]["description"] == "now EXPLOIT"
        assert client.post(THEMES, json=create, headers=exploit).status_code == 200
        client.put(f"{BASE}/{ident}", json={**body, "defaultRole": "ADMIN"}, headers=admin)
        assert client.post(THEMES, json=create, headers=exploit).status_code == 403
        assert client.post(THEMES, json=create, headers=as_role("ADMIN")).status_code == 200

    def test_id_mismatch_is_422(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        ident, body = self.body(client, admin)
        response = client.put(f"{BASE}/{ident}", json={**body, "id": ident + 1}, headers=admin)
        assert response.json() == problem(
            422, f"The resource access id in the body ({ident + 1}) is not the path's ({ident}).")

    def test_resource_cannot_change(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        ident, body = self.body(client, admin)
        response = client.put(f"{BASE}/{ident}", json={**body, "resource": "/other"},
                              headers=admin)
        assert response.json() == problem(
            422, f"The resource of resource access {ident} is '/themes' and cannot change.")

    def test_unknown_is_404(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        _, body = self.body(client, admin)
        response = client.put(f"{BASE}/99999999", json={k: v for k, v in body.items() if k != "id"},
                              headers=admin)
        assert response.status_code == 404

    def test_admin_is_403(self, client, as_role):
        admin = as_role("PROJECT_ADMIN")
        ident, body = self.body(client, admin)
        assert client.put(f"{BASE}/{ident}", json=body,
                          headers=as_role("ADMIN")).status_code == 403


class TestMicroserviceEndpoints:
    ITEMS = [
        {"fullPath": "/reports", "method": "GET", "controllerSimpleName": "ReportController",
         "resourceAccess": {"defaultRole": "REGISTERED_USER", "description": "Reports"},
         "autorizedRoles": [{"roleName": "EXPLOIT", "authority": "ROLE_EXPLOIT",
                             "authorizedIpAdresses": []}]},
        {"fullPath": "/reports", "method": "DELETE", "controllerSimpleName": "ReportController"},
    ]

    def test_register_then_list(self, client, as_role):
        admin = as_role("INSTANCE_ADMIN")
        response = client.post(f"{BASE}/microservices/rs-reports", json=self.ITEMS, headers=admin)
        assert response.status_code == 200, response.text
        listed = client.get(f"{BASE}/microservices/rs-reports", headers=admin).json()
        assert listed == response.json()
        by_key = {(item["fullPath"], item["method"]): item for item in listed}
        get = by_key[("/reports", "GET")]
        assert get["resourceAccess"]["defaultRole"] == "REGISTERED_USER"
        assert {r["roleName"] for r in get["autorizedRoles"]} == {"REGISTERED_USER", "EXPLOIT"}
        assert by_key[("/reports", "DELETE")]["resourceAccess"]["defaultRole"] == "PROJECT_ADMIN"
        assert by_key[("/reports", "DELETE")]["controllerSimpleName"] == "ReportController"

    def test_registering_again_keeps_changed_grants(self, client, as_role):
        admin = as_role("INSTANCE_ADMIN")
        client.post(f"{BASE}/microservices/rs-reports", json=self.ITEMS, headers=admin)
        ident = access_id(client, admin, "/reports", "DELETE", "rs-reports")
        body = client.get(f"{BASE}/{ident}", headers=admin).json()["content"]
        client.put(f"{BASE}/{ident}", json={**body, "defaultRole": "ADMIN"}, headers=admin)
        client.post(f"{BASE}/microservices/rs-reports", json=self.ITEMS, headers=admin)
        assert client.get(f"{BASE}/{ident}", headers=admin).json()["content"]["defaultRole"] \
            == "ADMIN"

    def test_unknown_role_is_422(self, client, as_role):
        items = [{"fullPath": "/x", "method": "GET", "autorizedRoles": [{"roleName": "NOPE"}]}]
        response = client.post(f"{BASE}/microservices/rs-x", json=items,
                               headers=as_role("INSTANCE_ADMIN"))
        assert response.json() == problem(422, "Endpoint /x@GET names unknown roles: NOPE.")

    def test_project_admin_cannot_register(self, client, as_role):
        response = client.post(f"{BASE}/microservices/rs-x", json=self.ITEMS,
                               headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(
            403, "Role PROJECT_ADMIN does not hold the access "
                 "/resources/microservices/{microservicename}@POST.")

    def test_bad_method_is_400(self, client, as_role):
        response = client.post(f"{BASE}/microservices/rs-x",
                               json=[{"fullPath": "/x", "method": "FETCH"}],
                               headers=as_role("INSTANCE_ADMIN"))
        assert response.status_code == 400

    def test_contract_endpoints_are_listed(self, client, as_role):
        listed = client.get(f"{BASE}/microservices/rs-admin",
                            headers=as_role("PROJECT_ADMIN")).json()
        assert ("/roles", "POST") in {(item["fullPath"], item["method"]) for item in listed}


class TestControllers:
    def test_controller_names(self, client, as_role):
        response = client.get(f"{BASE}/microservices/rs-access/controllers",
                              headers=as_role("PROJECT_ADMIN"))
        assert {"themes", "modules", "toponyms"} <= set(response.json())

    def test_resources_of_a_controller(self, client, as_role):
        response = client.get(f"{BASE}/microservices/rs-access/controllers/themes",
                              headers=as_role("PROJECT_ADMIN"))
        assert {a["content"]["resource"] for a in response.json()} == {
            "/themes", "/themes/{themeId}"}

    def test_unknown_controller_is_404(self, client, as_role):
        response = client.get(f"{BASE}/microservices/rs-access/controllers/nope",
                              headers=as_role("PROJECT_ADMIN"))
        assert response.json() == problem(404, "Microservice 'rs-access' has no controller 'nope'.")

    def test_admin_is_403(self, client, as_role):
        assert client.get(f"{BASE}/microservices/rs-access/controllers",
                          headers=as_role("ADMIN")).status_code == 403
