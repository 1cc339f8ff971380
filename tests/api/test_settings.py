"""Generic settings operations, through rs-access."""

from __future__ import annotations

from tests.conftest import problem

BASE = "/rs-access/api/v1/settings"
EXPIRATION = {"name": "toponym_expiration_days",
              "description": "Days after which a registered (not visible) toponym expires "
                             "unless read.",
              "defaultValue": 30}


class TestGetSettings:
    def test_lists_defaults(self, client, as_role):
        response = client.get(BASE, headers=as_role("ADMIN"))
        assert response.status_code == 200
        names = [item["content"]["name"] for item in response.json()]
        assert names == ["toponym_daily_registration_limit", "toponym_expiration_days"]

    def test_names_filter(self, client, as_role):
        response = client.get(BASE, params={"names": "toponym_expiration_days"},
                              headers=as_role("ADMIN"))
        assert response.json() == [{"content": {**EXPIRATION, "value": 30}, "links": []}]

    def test_unknown_name_is_404(self, client, as_role):
        response = client.get(BASE, params={"names": "nope"}, headers=as_role("ADMIN"))
        assert response.status_code == 404

    def test_exploit_is_403(self, client, as_role):
        assert client.get(BASE, headers=as_role("EXPLOIT")).status_code == 403


class TestUpdateSetting:
    def test_sets_then_resets(self, client, project, other_project, as_role):
        admin = as_role("ADMIN")
        response = client.put(f"{BASE}/toponym_expiration_days", headers=admin,
                              json={"name": "toponym_expiration_days", "value": 7})
        assert response.json() == {"content": {**EXPIRATION, "value": 7}, "links": []}
        others = client.get(BASE, params={"names": "toponym_expiration_days"},
                            headers=other_project.headers("ADMIN")).json()
        assert others[0]["content"]["value"] == 30
        reset = client.delete(f"{BASE}/toponym_expiration_days", headers=admin)
        assert reset.json() == {"content": {**EXPIRATION, "value": 30}, "links": []}

    def test_wrong_type_is_422(self, client, as_role):
        response = client.put(f"{BASE}/toponym_expiration_days", headers=as_role("ADMIN"),
                              json={"name": "toponym_expiration_days", "value": "soon"})
        assert response.status_code == 422
        assert response.json() == problem(
            422, "Invalid value for setting 'toponym_expiration_days': \"soon\" is not of type "
                 "\"integer\".")

    def test_name_mismatch_is_422(self, client, as_role):
        response = client.put(f"{BASE}/toponym_expiration_days", headers=as_role("ADMIN"),
                              json={"name": "other", "value": 3})
        assert response.status_code == 422

    def test_unknown_setting_is_404(self, client, as_role):
        response = client.put(f"{BASE}/nope", headers=as_role("ADMIN"),
                              json={"name": "nope", "value": 3})
        assert response.status_code == 404
