"""Requests, stored products, models and storage locations: one class per operation."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from featurehub.services.fem import datamodels
from tests.api.fem.conftest import BASE, SAMPLE_MODEL, creation, feature, patch_body
from tests.conftest import problem


class TestGetRequest:
    def test_found(self, client, exploit, sample_model):
        granted = client.post(f"{BASE}/features", json=creation(feature("r")),
                              headers=exploit).json()["granted"]
        body = client.get(f"{BASE}/requests/{granted['r']}", headers=exploit).json()
        content = body["content"]
        assert content == {
            "requestId": granted["r"], "type": "CREATION", "state": "GRANTED",
            "step": "LOCAL_DELAYED", "priority": "NORMAL", "providerId": "r", "urn": None,
            "requestOwner": "tests", "sessionOwner": "owner-1", "session": "session-1",
            "requestDate": content["requestDate"], "lastUpdate": content["lastUpdate"],
            "errors": []}

    def test_unknown_is_404(self, client, exploit):
        response = client.get(f"{BASE}/requests/nope", headers=exploit)
        assert response.json() == problem(404, "Request 'nope' does not exist.")

    def test_request_of_another_project_is_404(self, client, exploit, other_project,
                                               sample_model):
        granted = client.post(f"{BASE}/features", json=creation(feature("r")),
                              headers=exploit).json()["granted"]
        response = client.get(f"{BASE}/requests/{granted['r']}",
                              headers=other_project.headers("EXPLOIT"))
        assert response.status_code == 404

    def test_registered_user_is_403(self, client, as_role):
        assert client.get(f"{BASE}/requests/x",
                          headers=as_role("REGISTERED_USER")).status_code == 403


class TestSearchRequests:
    def test_filters_and_counts_errors(self, client, exploit, sample_model):
        client.post(f"{BASE}/features", json=creation(feature("a"), feature("b"),
                                                      feature("c", model="nope")),
                    headers=exploit)
        body = client.post(f"{BASE}/requests/search/CREATION", headers=exploit,
                           json={"states": ["GRANTED"]}, params={"sort": "providerId,desc"})
        assert [r["content"]["providerId"] for r in body.json()["content"]] == ["b", "a"]
        assert body.json()["page"] == {"number": 0, "size": 20, "totalElements": 2,
                                       "totalPages": 1}
        assert body.json()["info"] == {"nbErrors": 0}
        denied = client.post(f"{BASE}/requests/search/CREATION", headers=exploit,
                             json={"steps": ["LOCAL_DENIED"], "source": "owner-1",
                                   "session": "session-1", "providerIds": ["c"]}).json()
        assert [r["content"]["errors"] for r in denied["content"]] == [["Unknown model 'nope'."]]

    def test_without_body_lists_all_of_the_type(self, client, exploit, sample_model):
        client.post(f"{BASE}/features", json=creation(feature("a")), headers=exploit)
        assert client.post(f"{BASE}/requests/search/CREATION",
                           headers=exploit).json()["page"]["totalElements"] == 1
        assert client.post(f"{BASE}/requests/search/PATCH",
                           headers=exploit).json()["page"]["totalElements"] == 0

    def test_last_update_range(self, client, exploit, sample_model):
        client.post(f"{BASE}/features", json=creation(feature("a")), headers=exploit)
        future = client.post(f"{BASE}/requests/search/CREATION", headers=exploit,
                             json={"lastUpdate": {"after": "2999-01-01T00:00:00Z"}}).json()
        assert future["page"]["totalElements"] == 0

    def test_unknown_type_is_400(self, client, exploit):
        assert client.post(f"{BASE}/requests/search/OTHER", headers=exploit).status_code == 400

    def test_unknown_sort_is_400(self, client, exploit):
        response = client.post(f"{BASE}/requests/search/CREATION", headers=exploit,
                               params={"sort": "colour"})
        assert response.status_code == 400


class TestRetryRequests:
    def test_only_requests_in_error_are_retried(self, client, exploit, sample_model):
        client.post(f"{BASE}/features", json=creation(feature("a")), headers=exploit)
        response = client.post(f"{BASE}/requests/retry/CREATION", headers=exploit, json={})
        assert response.json() == {"totalRequested": 1, "totalHandled": 0, "message":
                                   "0 request(s) in error retried, 1 matching request(s) not in "
                                   "error left as they are."}

    def test_registered_user_is_403(self, client, as_role):
        assert client.post(f"{BASE}/requests/retry/CREATION",
                           headers=as_role("REGISTERED_USER")).status_code == 403


class TestDeleteRequests:
    def test_deletes_those_not_being_processed(self, client, rt, exploit, sample_model):
        from featurehub.services.fem.worker import claim, process_pending

        process_pending(rt)
        granted = client.post(f"{BASE}/features", json=creation(feature("a"), feature("b")),
                              headers=exploit).json()["granted"]
        with rt.sessions() as session:
            claim(session, worker_id="deleting-test", batch_size=1)
        response = client.request("DELETE", f"{BASE}/requests/delete/CREATION", headers=exploit,
                                  json={"providerIds": ["a", "b"]})
        assert response.json() == {"totalRequested": 2, "totalHandled": 1,
                                   "message": "1 request(s) deleted, 1 being processed left."}
        assert client.get(f"{BASE}/requests/{granted['b']}", headers=exploit).status_code == 404


class TestSearchFeatures:
    def test_filters(self, client, exploit, create):
        far = {"type": "Point", "coordinates": [100, -40]}
        create(feature("near"), feature("far", geometry=far))
        search = f"{BASE}/admin/features"

        def ids(criteria, **params):
            response = client.post(search, json=criteria, headers=exploit, params=params)
            assert response.status_code == 200, response.text
            return [f["content"]["id"] for f in response.json()["content"]]

        assert ids({}, sort="providerId") == ["far", "near"]
        assert ids({"bbox": [0, 42, 3, 45]}) == ["near"]
        assert ids({"bbox": [99, -41, 101, -39]}) == ["far"]
        assert ids({"providerIds": ["far"]}) == ["far"]
        assert ids({"model": "sample_product", "session": "session-1",
                    "sessionOwner": "owner-1", "last": True}, sort="providerId,desc") == [
            "near", "far"]
        assert ids({"model": "other"}) == []
        assert ids({"disseminationStatus": "PENDING"}) == []
        assert ids({"disseminationStatus": "NONE"}, sort="providerId") == ["far", "near"]
        assert ids({"lastUpdate": {"before": "2000-01-01T00:00:00Z"}}) == []

    def test_pages(self, client, exploit, create):
        create(feature("p1"), feature("p2"), feature("p3"))
        body = client.post(f"{BASE}/admin/features", json={}, headers=exploit,
                           params={"size": 2, "page": 1, "sort": "providerId"}).json()
        assert [f["content"]["id"] for f in body["content"]] == ["p3"]
        assert body["page"] == {"number": 1, "size": 2, "totalElements": 3, "totalPages": 2}

    def test_pending_dissemination_with_configured_recipients(self, client, exploit, as_role,
                                                              create):
        response = client.put(f"{BASE}/settings/dissemination_recipients",
                              headers=as_role("ADMIN"),
                              json={"name": "dissemination_recipients", "value": ["catalog"]})
        assert response.status_code == 200
        stored = create(feature("awaited"))["awaited"]
        assert (stored["disseminationStatus"], stored["disseminationInfo"]) == (
            "PENDING", [{"recipient": "catalog", "status": "PENDING"}])

    def test_ids_filter_returns_exactly_those_products(self, client, exploit, create):
        stored = create(feature("a"), feature("b"), feature("c"))
        wanted = [stored["a"]["urn"], stored["c"]["urn"]]
        assert search_ids(client, exploit, {"ids": wanted}, sort="providerId") == ["a", "c"]
        assert search_ids(client, exploit, {"ids": [stored["b"]["urn"]]}) == ["b"]
        assert search_ids(client, exploit, {"ids": ["URN:FEATURE:DATA:x:y:V1"]}) == []

    def test_dissemination_done_once_every_recipient_acknowledged(self, client, exploit,
                                                                  as_role, create, process):
        response = client.put(f"{BASE}/settings/dissemination_recipients",
                              headers=as_role("ADMIN"), json={
                                  "name": "dissemination_recipients",
                                  "value": ["catalog", "archive"]})
        assert response.status_code == 200, response.text
        stored = create(feature("both"), feature("half"), feature("none"))
        acknowledge(client, exploit, process, "catalog", stored["both"], stored["half"])
        acknowledge(client, exploit, process, "archive", stored["both"])
        assert search_ids(client, exploit, {"disseminationStatus": "DONE"}) == ["both"]
        assert search_ids(client, exploit, {"disseminationStatus": "PENDING"},
                          sort="providerId") == ["half", "none"]
        assert search_ids(client, exploit, {"disseminationStatus": "NONE"}) == []

    def test_last_update_after_bound(self, client, exploit, create):
        create(feature("early"))
        between = datetime.now(UTC)
        create(feature("late"))
        assert search_ids(client, exploit, {"lastUpdate": {"after": between.isoformat()}}) == [
            "late"]
        assert search_ids(client, exploit, {"lastUpdate": {"after": "2000-01-01T00:00:00Z"}},
                          sort="providerId") == ["early", "late"]
        assert search_ids(client, exploit, {"lastUpdate": {
            "after": "2000-01-01T00:00:00Z", "before": between.isoformat()}}) == ["early"]


def search_ids(client, headers, criteria, **params):
    """The provider ids of the products POST /admin/features finds."""
    response = client.post(f"{BASE}/admin/features", json=criteria, headers=headers,
                           params=params)
    assert response.status_code == 200, response.text
    return [f["content"]["id"] for f in response.json()["content"]]


def acknowledge(client, headers, process, recipient, *products):
    """A patch of the products naming `recipient` in metadata.acknowledgedRecipient, processed."""
    body = patch_body(*({"type": "Feature", "urn": p["urn"]} for p in products),
                      acknowledgedRecipient=recipient)
    response = client.patch(f"{BASE}/features", json=body, headers=headers)
    assert response.status_code == 201, response.text
    assert response.json()["denied"] == {}, response.json()
    process()


class TestGetFeature:
    def test_unknown_is_404(self, client, exploit):
        response = client.get(f"{BASE}/admin/features/URN:FEATURE:DATA:x:y:V1", headers=exploit)
        assert response.json() == problem(404, "Feature URN:FEATURE:DATA:x:y:V1 does not exist.")

    def test_feature_of_another_project_is_404(self, client, create, other_project):
        stored = create(feature("mine"))["mine"]
        response = client.get(f"{BASE}/admin/features/{stored['urn']}",
                              headers=other_project.headers("EXPLOIT"))
        assert response.status_code == 404


MODELS = f"{BASE}/models"
SMALL = {"schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}


class TestModels:
    def test_put_get_list_delete(self, client, as_role):
        admin = as_role("ADMIN")
        put = client.put(f"{MODELS}/small", json={**SMALL, "description": "d"}, headers=admin)
        assert put.json() == {"content": {"name": "small", "description": "d",
                                          "schema": SMALL["schema"], "revision": 1,
                                          "source": "project"}, "links": []}
        again = client.put(f"{MODELS}/small", json=SMALL, headers=admin)
        assert again.json()["content"]["revision"] == 2
        assert client.get(f"{MODELS}/small", headers=admin).json() == again.json()
        listed = client.get(MODELS, headers=admin).json()
        assert [m["content"]["name"] for m in listed["content"]] == ["small"]
        assert client.delete(f"{MODELS}/small", headers=admin).json() == {"content": None,
                                                                          "links": []}
        assert client.get(f"{MODELS}/small", headers=admin).status_code == 404

    def test_a_changed_model_applies_to_the_next_request(self, client, as_role, exploit):
        admin = as_role("ADMIN")
        client.put(f"{MODELS}/small", json=SMALL, headers=admin)
        item = feature("x", model="small", properties={"a": "text"}, files=None)
        first = client.post(f"{BASE}/features", json=creation(item), headers=exploit).json()
        assert first["denied"] == {"x": "Property 'a' of model 'small': \"text\" is not of type "
                                        "\"integer\"."}
        client.put(f"{MODELS}/small", headers=admin, json={"schema": {
            "type": "object", "properties": {"a": {"type": "string"}}}})
        second = client.post(f"{BASE}/features", json=creation(item), headers=exploit).json()
        assert list(second["granted"]) == ["x"]

    def test_delete_refused_while_features_use_it(self, client, as_role, create):
        create(feature("user"))
        response = client.delete(f"{MODELS}/sample_product", headers=as_role("ADMIN"))
        assert response.json() == problem(
            409, "Model 'sample_product' is used by 1 feature(s); it cannot be deleted.")

    def test_delete_refused_while_requests_name_it(self, client, as_role, exploit,
                                                   sample_model):
        client.post(f"{BASE}/features", json=creation(feature("later")), headers=exploit)
        response = client.delete(f"{MODELS}/sample_product", headers=as_role("ADMIN"))
        assert response.status_code == 409

    @pytest.mark.parametrize(("schema", "detail"), [
        ({"type": "array"}, "Model 'bad': the schema describes an object (\"type\": \"object\") "
                            "and declares its \"properties\"."),
        ({"type": "object", "properties": {"a": {"type": "colour"}}},
         "Model 'bad': invalid JSON Schema: "),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
          "properties": {}},
         "Model 'bad': the schema is JSON Schema draft 2020-12 ($schema "
         "https://json-schema.org/draft/2020-12/schema), not "
         "http://json-schema.org/draft-07/schema#."),
    ])
    def test_invalid_schema_is_422(self, client, as_role, schema, detail):
        response = client.put(f"{MODELS}/bad", json={"schema": schema}, headers=as_role("ADMIN"))
        assert response.status_code == 422
        assert response.json()["detail"].startswith(detail)

    def test_name_mismatch_is_422(self, client, as_role):
        response = client.put(f"{MODELS}/one", json={**SMALL, "name": "two"},
                              headers=as_role("ADMIN"))
        assert response.json() == problem(
            422, "The model name in the body ('two') is not the one in the path ('one').")

    def test_exploit_cannot_put_403(self, client, exploit):
        assert client.put(f"{MODELS}/x", json=SMALL, headers=exploit).status_code == 403

    def test_unknown_delete_is_404(self, client, as_role):
        assert client.delete(f"{MODELS}/nope", headers=as_role("ADMIN")).status_code == 404


class TestModelsDirectory:
    def test_models_of_the_directory_serve_every_project(self, project, tmp_path):
        (tmp_path / "sample_product.json").write_text(json.dumps(SAMPLE_MODEL))
        (tmp_path / "broken.json").write_text("{")
        with project.runtime.sessions() as session:
            listed, total = datamodels.list_models(session, project_id=project.id,
                                                   models_dir=tmp_path, offset=0, limit=10)
            found = datamodels.resolve_models(session, project_id=project.id,
                                              names=["sample_product"], models_dir=tmp_path)
        assert ([m.name for m in listed], total) == (["sample_product"], 1)
        assert listed[0].source == "directory"
        assert found["sample_product"].creation_problem({}) == (
            "Missing required property 'mission' of model 'sample_product'.")

    def test_a_name_two_files_give_is_the_first_files(self, project, tmp_path, caplog):
        (tmp_path / "a.json").write_text(json.dumps({"name": "twice", **SMALL}))
        (tmp_path / "b.json").write_text(json.dumps({
            "name": "twice", "schema": {"type": "object", "properties": {"b": {}}}}))
        found = datamodels.directory_models(tmp_path)
        assert list(found) == ["twice"] and found["twice"].schema == SMALL["schema"]
        assert "model file " + str(tmp_path / "b.json") + " ignored: model 'twice' is " \
               "defined by a.json already" in caplog.text

    def test_get_models_lists_the_directory_model(self, client, as_role, models_dir):
        revision = (models_dir / "shared_small.json").stat().st_mtime_ns
        assert client.get(MODELS, headers=as_role("ADMIN")).json() == {
            "content": [{"content": {"name": "shared_small", "description": "From the directory",
                                     "schema": SMALL["schema"], "revision": revision,
                                     "source": "directory"}, "links": []}],
            "links": [], "page": {"number": 0, "size": 20, "totalElements": 1,
                                  "totalPages": 1}}

    def test_a_feature_of_the_directory_model_is_granted(self, client, exploit, rt, process,
                                                         monkeypatch, tmp_path):
        item = feature("shared", model="shared_small", properties={"a": 1}, files=None)
        before = client.post(f"{BASE}/features", json=creation(item), headers=exploit).json()
        assert before == {"granted": {}, "denied": {"shared": "Unknown model 'shared_small'."},
                          "messages": ["0 feature(s) granted, 1 denied."]}
        use_models_dir(rt, monkeypatch, tmp_path)
        body = client.post(f"{BASE}/features", json=creation(item), headers=exploit).json()
        request_id = body["granted"].get("shared")
        assert body == {"granted": {"shared": request_id}, "denied": {}, "messages": []}
        process()
        request = client.get(f"{BASE}/requests/{request_id}", headers=exploit).json()["content"]
        assert (request["state"], request["errors"]) == ("SUCCESS", [])
        stored = client.get(f"{BASE}/admin/features/{request['urn']}", headers=exploit).json()
        assert (stored["content"]["model"], stored["content"]["properties"]) == (
            "shared_small", {"a": 1})

    def test_delete_is_409(self, client, as_role, models_dir):
        admin = as_role("ADMIN")
        response = client.delete(f"{MODELS}/shared_small", headers=admin)
        assert response.status_code == 409
        assert response.json() == problem(
            409, "Model 'shared_small' comes from the models directory (FEATUREHUB_MODELS_DIR); "
                 "remove its file instead.")
        assert client.get(f"{MODELS}/shared_small", headers=admin).status_code == 200


def use_models_dir(rt, monkeypatch, directory):
    """The running app's FEATUREHUB_MODELS_DIR is `directory`, holding shared_small.json."""
    (directory / "shared_small.json").write_text(json.dumps(
        {"description": "From the directory", **SMALL}))
    monkeypatch.setattr(rt, "settings", rt.settings.with_(models_dir=directory))


@pytest.fixture
def models_dir(rt, monkeypatch, tmp_path):
    use_models_dir(rt, monkeypatch, tmp_path)
    return tmp_path


STORAGES = f"{BASE}/storages"


class TestStorages:
    def test_put_get_list_delete(self, client, as_role, tmp_path):
        admin = as_role("PROJECT_ADMIN")
        body = {"plugin": "local", "configuration": {"root": str(tmp_path)}}
        put = client.put(f"{STORAGES}/disk", json=body, headers=admin)
        expected = {"name": "disk", **body, "source": "project"}
        assert put.json() == {"content": expected, "links": []}
        assert client.get(f"{STORAGES}/disk", headers=admin).json()["content"] == expected
        assert client.get(STORAGES, headers=admin).json()["content"] == [
            {"content": expected, "links": []}]
        assert client.delete(f"{STORAGES}/disk", headers=admin).status_code == 200
        assert client.get(f"{STORAGES}/disk", headers=admin).status_code == 404

    def test_relative_root_is_422(self, client, as_role):
        response = client.put(f"{STORAGES}/disk", headers=as_role("PROJECT_ADMIN"),
                              json={"plugin": "local", "configuration": {"root": "relative"}})
        assert response.json() == problem(
            422, "Storage 'disk': configuration.root is an absolute directory.")

    def test_root_outside_the_allowed_directories_is_422(self, client, as_role, rt):
        response = client.put(f"{STORAGES}/disk", headers=as_role("PROJECT_ADMIN"),
                              json={"plugin": "local", "configuration": {"root": "/etc/x"}})
        allowed = ", ".join(str(item) for item in rt.settings.storage_roots)
        assert response.json() == problem(
            422, f"Storage 'disk': root /etc/x is not under an allowed directory ({allowed}; "
                 "the operator sets them with FEATUREHUB_STORAGE_ROOTS).")

    def test_admin_cannot_change_storages_403(self, client, as_role, tmp_path):
        response = client.put(f"{STORAGES}/disk", headers=as_role("ADMIN"), json={
            "plugin": "local", "configuration": {"root": str(tmp_path)}})
        assert response.status_code == 403

    def test_settings_file_locations(self, project, tmp_path):
        from featurehub.services.fem import storages

        settings_file = tmp_path / "storages.json"
        settings_file.write_text(json.dumps({"storages": [
            {"project": project.name, "name": "file-disk", "plugin": "local",
             "configuration": {"root": str(tmp_path)}},
            {"project": "*", "name": "shared", "plugin": "local",
             "configuration": {"root": str(tmp_path)}},
            {"project": "someone-else", "name": "theirs", "plugin": "local",
             "configuration": {"root": str(tmp_path)}}]}))
        with project.runtime.sessions() as session:
            found = storages.list_locations(session, project_id=project.id,
                                            project=project.name, settings_file=settings_file)
            assert [(f.name, f.source) for f in found] == [("file-disk", "settings-file"),
                                                           ("shared", "settings-file")]
            with pytest.raises(Exception, match="comes from the storage settings file"):
                storages.delete_location(session, project_id=project.id, project=project.name,
                                         name="shared", settings_file=settings_file)

    def test_a_bad_entry_of_the_settings_file_is_left_out_alone(self, project, tmp_path):
        from featurehub.services.fem import storages

        settings_file = tmp_path / "storages.json"
        settings_file.write_text(json.dumps({"storages": [
            {"project": "*", "name": "typo", "plugin": "locale",
             "configuration": {"root": str(tmp_path)}},
            "not an entry",
            {"project": "*", "name": "kept", "plugin": "local",
             "configuration": {"root": str(tmp_path)}}]}))
        with project.runtime.sessions() as session:
            found = storages.list_locations(session, project_id=project.id,
                                            project=project.name, settings_file=settings_file)
        assert [location.name for location in found] == ["kept"]

    def test_get_storages_lists_the_settings_file_location(self, client, as_role,
                                                           storage_settings):
        assert client.get(STORAGES, headers=as_role("PROJECT_ADMIN")).json() == {
            "content": [{"content": {"name": "file-disk", "plugin": "local",
                                     "configuration": {"root": str(storage_settings)},
                                     "source": "settings-file"}, "links": []}],
            "links": [], "page": {"number": 0, "size": 20, "totalElements": 1,
                                  "totalPages": 1}}

    def test_delete_of_a_settings_file_location_is_409(self, client, as_role,
                                                       storage_settings):
        admin = as_role("PROJECT_ADMIN")
        response = client.delete(f"{STORAGES}/file-disk", headers=admin)
        assert response.status_code == 409
        assert response.json() == problem(
            409, "Storage location 'file-disk' comes from the storage settings file "
                 "(FEATUREHUB_STORAGE_SETTINGS_FILE); change the file instead.")
        assert client.get(f"{STORAGES}/file-disk", headers=admin).status_code == 200


@pytest.fixture
def storage_settings(rt, monkeypatch, project, tmp_path):
    """The running app's FEATUREHUB_STORAGE_SETTINGS_FILE names a location `file-disk` of the
    test's project, rooted at tmp_path (returned)."""
    settings_file = tmp_path / "storages.json"
    settings_file.write_text(json.dumps({"storages": [
        {"project": project.name, "name": "file-disk", "plugin": "local",
         "configuration": {"root": str(tmp_path)}},
        {"project": "someone-else", "name": "theirs", "plugin": "local",
         "configuration": {"root": str(tmp_path)}}]}))
    monkeypatch.setattr(rt, "settings", rt.settings.with_(storage_settings_file=settings_file))
    return tmp_path


SETTINGS = f"{BASE}/settings"
RECIPIENTS = {"name": "dissemination_recipients",
              "description": "Recipients whose acknowledgement of each new product is awaited: "
                             "a created product is PENDING for each until a patch names it in "
                             "metadata.acknowledgedRecipient.",
              "defaultValue": []}
TIMEOUT = {"name": "file_fetch_timeout_seconds",
           "description": "Seconds allowed to connect to and read from the URL of a file to "
                          "store.",
           "defaultValue": 30}


class TestGetSettings:
    def test_lists_every_setting_with_its_default(self, client, as_role):
        response = client.get(SETTINGS, headers=as_role("ADMIN"))
        assert response.json() == [{"content": {**RECIPIENTS, "value": []}, "links": []},
                                   {"content": {**TIMEOUT, "value": 30}, "links": []}]


class TestUpdateSetting:
    @pytest.mark.parametrize(("value", "reason"), [
        (-5, "-5 is less than the minimum of 1"),
        (0, "0 is less than the minimum of 1"),
        ("soon", "\"soon\" is not of type \"integer\""),
    ])
    def test_invalid_fetch_timeout_is_422(self, client, as_role, value, reason):
        admin = as_role("ADMIN")
        response = client.put(f"{SETTINGS}/file_fetch_timeout_seconds", headers=admin,
                              json={"name": "file_fetch_timeout_seconds", "value": value})
        assert response.json() == problem(
            422, f"Invalid value for setting 'file_fetch_timeout_seconds': {reason}.")
        assert client.get(SETTINGS, params={"names": "file_fetch_timeout_seconds"},
                          headers=admin).json()[0]["content"]["value"] == 30

    def test_valid_fetch_timeout_is_answered_back(self, client, as_role):
        admin = as_role("ADMIN")
        response = client.put(f"{SETTINGS}/file_fetch_timeout_seconds", headers=admin,
                              json={"name": "file_fetch_timeout_seconds", "value": 90})
        assert response.json() == {"content": {**TIMEOUT, "value": 90}, "links": []}
        assert client.get(SETTINGS, params={"names": "file_fetch_timeout_seconds"},
                          headers=admin).json() == [response.json()]


def test_dates_at_the_edge_of_the_calendar_are_clamped(client, exploit):
    response = client.post(f"{BASE}/admin/features", headers=exploit, json={
        "lastUpdate": {"after": "0001-01-01T00:00:00+00:04",
                       "before": "9999-12-31T23:59:59-00:04"}})
    assert response.status_code == 200
    assert response.json()["page"]["totalElements"] == 0
