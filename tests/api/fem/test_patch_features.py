"""PATCH /features: merge of properties, geometry, files, acknowledgements."""

from __future__ import annotations

import pytest

from featurehub.services.fem.urns import product_uuid
from featurehub.services.fem.worker import FeatureWorker, WorkerOptions, claim
from tests.api.fem.conftest import BASE, creation, feature, patch_body
from tests.conftest import problem

URL = f"{BASE}/features"
SQUARE = {"type": "Polygon", "coordinates": [[[10, 10], [11, 10], [11, 11], [10, 11], [10, 10]]]}
OTHER_FILE = {"locations": [{"storage": "archive", "url": "file:///data/archive/other.zip"}],
              "attributes": {"dataType": "RAWDATA", "mimeType": "application/zip",
                             "filename": "other.zip", "filesize": 10, "algorithm": "SHA-256",
                             "checksum": "a" * 64}}


@pytest.fixture
def stored(create):
    return create(feature("patched"))["patched"]


def patch(client, headers, *features, mode=None, **metadata):
    extra = {"request.file_update_mode": mode} if mode else {}
    response = client.patch(URL, json=patch_body(*features, **metadata),
                            headers={**headers, **extra})
    assert response.status_code == 201, response.text
    return response.json()


def patched(client, headers, process, urn, **members):
    body = patch(client, headers, {"type": "Feature", "urn": urn, **members})
    assert body["denied"] == {}, body
    process()
    request = client.get(f"{BASE}/requests/{body['granted'][urn]}", headers=headers).json()
    assert request["content"]["state"] == "SUCCESS", request
    return client.get(f"{BASE}/admin/features/{urn}", headers=headers).json()["content"]


class TestPatchFeatures:
    def test_merges_properties_and_keeps_the_version(self, client, exploit, process, stored):
        after = patched(client, exploit, process, stored["urn"],
                        properties={"orbit": 9, "quality": "DEGRADED"})
        assert after["properties"] == {**stored["properties"], "orbit": 9, "quality": "DEGRADED"}
        assert (after["version"], after["urn"]) == (1, stored["urn"])
        assert after["history"]["updatedBy"] == "patcher"
        assert after["history"]["createdBy"] == "tests"
        assert after["history"]["updateDate"] > stored["history"]["updateDate"]

    def test_null_unsets_a_property(self, client, exploit, process, stored):
        after = patched(client, exploit, process, stored["urn"], properties={"tags": None})
        assert "tags" not in after["properties"]

    def test_replaces_the_geometry(self, client, exploit, process, stored):
        after = patched(client, exploit, process, stored["urn"], geometry=SQUARE)
        assert after["geometry"] == SQUARE

    def test_appends_files_by_default(self, client, exploit, process, stored):
        after = patched(client, exploit, process, stored["urn"], files=[OTHER_FILE])
        assert [f["attributes"]["filename"] for f in after["files"]] == [
            "S1_L1B_20261122T101500.zip", "other.zip"]

    def test_replace_mode_replaces_files(self, client, exploit, process, stored):
        body = patch(client, exploit, {"type": "Feature", "urn": stored["urn"],
                                       "files": [OTHER_FILE]}, mode="REPLACE")
        process()
        after = client.get(f"{BASE}/admin/features/{stored['urn']}", headers=exploit).json()
        assert body["denied"] == {}
        assert [f["attributes"]["filename"] for f in after["content"]["files"]] == ["other.zip"]

    def test_unknown_file_update_mode_is_400(self, client, exploit, stored):
        response = client.patch(URL, json=patch_body({"type": "Feature", "urn": stored["urn"]}),
                                headers={**exploit, "request.file_update_mode": "MERGE"})
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json() == problem(400, "Header parameter 'request.file_update_mode': "
                                               "'MERGE' is not one of ['APPEND', 'REPLACE']")

    def test_acknowledged_recipient_is_recorded(self, client, exploit, process, stored):
        after = patched(client, exploit, process, stored["urn"])
        assert after["disseminationStatus"] == "NONE"
        body = patch(client, exploit, {"type": "Feature", "urn": stored["urn"]},
                     acknowledgedRecipient="catalog")
        process()
        after = client.get(f"{BASE}/admin/features/{stored['urn']}", headers=exploit).json()
        assert body["denied"] == {}
        info = after["content"]["disseminationInfo"]
        assert [(i["recipient"], i["status"]) for i in info] == [("catalog", "DONE")]
        assert after["content"]["disseminationStatus"] == "DONE"

    def test_geo_json_body_is_taken(self, client, exploit, stored):
        response = client.patch(URL, json=patch_body({"type": "Feature", "urn": stored["urn"]}),
                                headers={**exploit, "Content-Type": "application/geo+json"})
        assert response.status_code == 201
        assert list(response.json()["granted"]) == [stored["urn"]]

    def test_waits_while_a_request_on_its_product_runs(self, client, exploit, rt, process,
                                                       stored):
        first = patch(client, exploit, {"type": "Feature", "urn": stored["urn"],
                                        "properties": {"orbit": 1}})
        with rt.sessions() as session:
            running = claim(session, worker_id="busy-worker", batch_size=1000)
        assert [row.request_id for row in running] == [first["granted"][stored["urn"]]]
        second = patch(client, exploit, {"type": "Feature", "urn": stored["urn"],
                                         "properties": {"orbit": 2}})
        with rt.sessions() as session:
            assert claim(session, worker_id="other-worker", batch_size=1000) == []
        FeatureWorker(rt, WorkerOptions(worker_id="busy-worker")).process(running)
        process()
        request = client.get(f"{BASE}/requests/{second['granted'][stored['urn']]}",
                             headers=exploit).json()["content"]
        assert request["state"] == "SUCCESS"
        after = client.get(f"{BASE}/admin/features/{stored['urn']}",
                           headers=exploit).json()["content"]
        assert after["properties"]["orbit"] == 2

    def test_a_product_being_created_is_patched_after_its_creation(
            self, client, exploit, sample_model, project, process):
        urn = f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'new')}:V1"
        created = client.post(URL, json=creation(feature("new", urn=urn)), headers=exploit)
        assert created.json()["denied"] == {}
        body = patch(client, exploit, {"type": "Feature", "urn": urn, "properties": {"orbit": 5}})
        assert body["denied"] == {}
        process()
        request = client.get(f"{BASE}/requests/{body['granted'][urn]}",
                             headers=exploit).json()["content"]
        assert (request["state"], request["providerId"]) == ("SUCCESS", "new")
        after = client.get(f"{BASE}/admin/features/{urn}", headers=exploit).json()["content"]
        assert (after["version"], after["properties"]["orbit"]) == (1, 5)

    def test_empty_features_is_201_with_a_message(self, client, exploit):
        response = client.patch(URL, json=patch_body(), headers=exploit)
        assert response.json() == {"granted": {}, "denied": {}, "messages": [
            "The request holds no feature: nothing to patch."]}

    def test_priority_is_required(self, client, exploit, stored):
        body = patch_body({"type": "Feature", "urn": stored["urn"]})
        del body["metadata"]["priority"]
        assert client.patch(URL, json=body, headers=exploit).status_code == 400

    def test_without_token_is_401(self, client, project):
        assert client.patch(URL, json=patch_body()).status_code == 401

    def test_registered_user_is_403(self, client, as_role):
        response = client.patch(URL, json=patch_body(), headers=as_role("REGISTERED_USER"))
        assert response.json() == problem(
            403, "Role REGISTERED_USER does not hold the access /features@PATCH.")


class TestPatchDenials:
    def deny(self, client, exploit, item):
        body = patch(client, exploit, item)
        assert body["granted"] == {}
        return body["denied"]

    def test_missing_urn(self, client, exploit):
        assert self.deny(client, exploit, {"type": "Feature", "id": "x"}) == {
            "x": "Missing 'urn': a patch identifies the product by its urn."}

    def test_unknown_urn(self, client, exploit, project):
        urn = f"URN:FEATURE:DATA:{project.name}:e664c482-3b33-5aef-9840-a8a75061a196:V1"
        assert self.deny(client, exploit, {"type": "Feature", "urn": urn}) == {
            urn: f"URN {urn} does not exist."}

    def test_non_alterable_property(self, client, exploit, stored):
        urn = stored["urn"]
        assert self.deny(client, exploit, {"type": "Feature", "urn": urn,
                                           "properties": {"mission": "OTHER"}}) == {
            urn: "Property 'mission' of model 'sample_product' cannot be patched "
                 "(x-alterable: false)."}

    def test_non_alterable_property_with_its_stored_value_is_no_change(
            self, client, exploit, process, stored):
        after = patched(client, exploit, process, stored["urn"],
                        properties={"mission": "SAMPLE-1", "orbit": 3})
        assert after["properties"]["orbit"] == 3

    def test_required_property_cannot_be_unset(self, client, exploit, stored):
        urn = stored["urn"]
        assert self.deny(client, exploit, {"type": "Feature", "urn": urn,
                                           "properties": {"product_type": None}}) == {
            urn: "Property 'product_type' is required by the model 'sample_product': a patch "
                 "cannot unset it."}

    def test_unexpected_property(self, client, exploit, stored):
        urn = stored["urn"]
        assert self.deny(client, exploit, {"type": "Feature", "urn": urn,
                                           "properties": {"colour": "red"}}) == {
            urn: "Property 'colour' isn't expected by the model 'sample_product'."}

    def test_invalid_value(self, client, exploit, stored):
        urn = stored["urn"]
        assert self.deny(client, exploit, {"type": "Feature", "urn": urn,
                                           "properties": {"quality": "GREAT"}}) == {
            urn: "Property 'quality' of model 'sample_product': \"GREAT\" is not one of "
                 "\"NOMINAL\", \"DEGRADED\" or \"BAD\"."}

    def test_model_cannot_change(self, client, exploit, stored):
        urn = stored["urn"]
        assert self.deny(client, exploit, {"type": "Feature", "urn": urn, "model": "other"}) == {
            urn: "The model of a product cannot be patched: 'other' is not 'sample_product'."}

    def test_duplicate_urn_denies_the_second(self, client, exploit, stored):
        urn = stored["urn"]
        body = patch(client, exploit, {"type": "Feature", "urn": urn},
                     {"type": "Feature", "urn": urn, "properties": {"orbit": 2}})
        assert list(body["granted"]) == [urn]
        assert body["denied"] == {urn: f"Duplicate urn '{urn}' in the request."}
