"""POST /features: acceptance (granted / denied per feature), durability, versioning."""

from __future__ import annotations

import copy

import pytest
from sqlalchemy import select, update

from featurehub.db.fem import Feature, FeatureRequest
from featurehub.services.fem.urns import product_uuid
from tests.api.fem.conftest import BASE, SAMPLE_COLLECTION, creation, feature, properties
from tests.conftest import problem

URL = f"{BASE}/features"


def post(client, headers, *features, **metadata):
    response = client.post(URL, json=creation(*features, **metadata), headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def denial(client, headers, item, **metadata):
    body = post(client, headers, item, **metadata)
    assert body["granted"] == {}
    assert len(body["denied"]) == 1
    return next(iter(body["denied"].values()))


class TestCreateFeatures:
    def test_grants_each_feature_with_a_request_id(self, client, exploit, sample_model):
        body = post(client, exploit, feature("a"), feature("b"))
        assert body == {"granted": {"a": body["granted"]["a"], "b": body["granted"]["b"]},
                        "denied": {}, "messages": []}
        assert body["granted"]["a"] != body["granted"]["b"]

    def test_granted_requests_are_stored_before_the_answer(self, client, rt, exploit,
                                                           sample_model):
        body = post(client, exploit, feature("durable"))
        with rt.sessions() as session:
            row = session.scalars(select(FeatureRequest).where(
                FeatureRequest.request_id == body["granted"]["durable"])).one()
        assert (row.state, row.step, row.type, row.provider_id) == (
            "GRANTED", "LOCAL_DELAYED", "CREATION", "durable")
        assert row.feature == feature("durable")

    def test_readme_sample_collection_as_geo_json(self, client, exploit, sample_model):
        response = client.post(URL, json=SAMPLE_COLLECTION,
                               headers={**exploit, "Content-Type": "application/geo+json"})
        assert response.status_code == 201
        assert list(response.json()["granted"]) == ["S1_L1B_20261122T101500"]

    def test_empty_features_is_201_with_a_message(self, client, exploit):
        response = client.post(URL, json=creation(), headers=exploit)
        assert response.status_code == 201
        assert response.json() == {"granted": {}, "denied": {}, "messages": [
            "The request holds no feature: nothing to create."]}

    def test_a_body_over_the_limit_is_413_and_nothing_is_stored(self, client, rt, exploit,
                                                               sample_model):
        big = feature("too-big")
        big["properties"]["tags"] = ["x" * 64] * (rt.settings.max_body_bytes // 64)
        response = client.post(URL, json=creation(big), headers=exploit)
        assert response.status_code == 413
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json() == problem(
            413, "The body is larger than 32 MiB, the most this service takes "
                 "(FEATUREHUB_MAX_BODY_MB): send it in smaller requests.", "Content Too Large")
        with rt.sessions() as session:
            assert session.scalars(select(FeatureRequest).where(
                FeatureRequest.provider_id == "too-big")).first() is None

    def test_not_a_feature_collection_is_400(self, client, exploit):
        response = client.post(URL, json={"type": "Feature", "properties": {}}, headers=exploit)
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/problem+json"

    def test_missing_session_is_400(self, client, exploit):
        body = creation(feature("a"))
        del body["metadata"]["session"]
        response = client.post(URL, json=body, headers=exploit)
        assert response.status_code == 400
        assert response.json()["detail"].startswith('"session" is a required property')

    def test_invalid_json_is_400(self, client, exploit):
        response = client.post(URL, content=b"{not json",
                               headers={**exploit, "Content-Type": "application/json"})
        assert response.status_code == 400

    def test_text_body_is_415(self, client, exploit):
        response = client.post(URL, content=b"x", headers={**exploit, "Content-Type": "text/plain"})
        assert response.status_code == 415

    def test_without_token_is_401(self, client, project):
        response = client.post(URL, json=creation(feature("a")))
        assert response.status_code == 401
        assert response.json() == problem(401, "No authorization token provided")

    def test_registered_user_is_403(self, client, as_role):
        response = client.post(URL, json=creation(feature("a")),
                               headers=as_role("REGISTERED_USER"))
        assert response.status_code == 403
        assert response.json() == problem(
            403, "Role REGISTERED_USER does not hold the access /features@POST.")

    def test_mixed_grants_and_denials(self, client, exploit, sample_model):
        body = post(client, exploit, feature("good"), feature("bad", model="nope"))
        assert body == {"granted": {"good": body["granted"]["good"]},
                        "denied": {"bad": "Unknown model 'nope'."},
                        "messages": ["1 feature(s) granted, 1 denied."]}


def _files(**attributes):
    """The sample's file with changed attributes (None removes one)."""
    file = copy.deepcopy(feature()["files"][0])
    file["attributes"].update(attributes)
    file["attributes"] = {k: v for k, v in file["attributes"].items() if v is not None}
    return [file]


@pytest.mark.parametrize(("changes", "cause"), [
    ({"model": None}, "Missing 'model': a feature names the data model of its properties."),
    ({"model": "unknown_model"}, "Unknown model 'unknown_model'."),
    ({"entityType": None}, "Missing 'entityType' (DATA, DATASET or COLLECTION)."),
    ({"entityType": "THING"}, "Invalid entityType 'THING' (DATA, DATASET or COLLECTION)."),
    ({"id": "x" * 101}, "Feature id is longer than 100 characters (101)."),
    ({"properties": properties(mission=None)},
     "Missing required property 'mission' of model 'sample_product'."),
    ({"properties": properties(file_characterization={"checked_at": "2026-01-01T00:00:00Z"})},
     "Missing required property 'file_characterization.valid' of model 'sample_product'."),
    ({"properties": properties(colour="red")},
     "Property 'colour' isn't expected by the model 'sample_product'."),
    ({"properties": properties(file_characterization={"valid": True, "extra": 1})},
     "Property 'file_characterization.extra' isn't expected by the model 'sample_product'."),
    ({"properties": properties(orbit="one")},
     "Property 'orbit' of model 'sample_product': \"one\" is not of type \"integer\"."),
    ({"properties": properties(cloud_cover=101)},
     "Property 'cloud_cover' of model 'sample_product': 101 is greater than the maximum of 100."),
    ({"urn": "URN:FEATURE:DATA:nope"},
     "Invalid urn 'URN:FEATURE:DATA:nope': expected "
     "URN:FEATURE:<DATA|DATASET|COLLECTION>:<project>:<uuid>:V<1..999>."),
    ({"geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}},
     "geometry: the coordinates of a Polygon are a list of linear rings, each a closed list of "
     "at least 4 positions."),
    ({"geometry": {"type": "Point", "coordinates": [[0, 0]]}},
     "geometry: the coordinates of a Point are a position [x, y(, z)]."),
    ({"files": _files(filesize=None)},
     "File 'S1_L1B_20261122T101500.zip' is only referenced (its location names a storage): "
     "attributes.filesize is required."),
    ({"files": _files() + _files()},
     "Duplicate checksum '9e107d9d372bb6826bd81d3542a419d6' among the files of the feature."),
    ({"files": _files(checksum="abc")},
     "File 'S1_L1B_20261122T101500.zip': checksum 'abc' is not an MD5 checksum (32 hexadecimal "
     "digits)."),
    ({"files": _files(algorithm="CRC32")},
     "File 'S1_L1B_20261122T101500.zip': unsupported checksum algorithm 'CRC32' (MD5, SHA-1, "
     "SHA-256 or SHA-512)."),
    ({"files": [{"locations": [{"storage": "archive", "url": "not a url"}],
                 "attributes": _files()[0]["attributes"]}]},
     "File 'S1_L1B_20261122T101500.zip': url 'not a url' is invalid: it contains blanks or "
     "control characters."),
    ({"files": [{"locations": [{"storage": None, "url": "file:///tmp/x"}],
                 "attributes": _files()[0]["attributes"]}]},
     "File 'S1_L1B_20261122T101500.zip' has a location without storage, a file to store, but "
     "metadata.storages is empty."),
])
def test_denial_names_the_member_and_the_rule(client, exploit, sample_model, changes, cause):
    assert denial(client, exploit, feature("p", **changes)) == cause


def test_missing_id_is_denied_under_its_position(client, exploit, sample_model):
    body = post(client, exploit, feature("ok"), feature("x", id=None))
    assert body["denied"] == {"features[1]": "Missing 'id': a feature to create has its provider "
                                             "id."}


def test_mixed_stored_and_referenced_files_are_denied(client, exploit, sample_model):
    attributes = _files()[0]["attributes"]
    files = [{"locations": [{"storage": "archive", "url": "file:///a"}], "attributes": attributes},
             {"locations": [{"url": "file:///b"}],
              "attributes": {**attributes, "checksum": "0" * 32}}]
    cause = denial(client, exploit, feature("mixed", files=files),
                   storages=[{"pluginBusinessId": "disk"}])
    assert cause == ("A feature cannot mix files to store (locations without storage) and files "
                     "only referenced (locations with a storage).")


def test_denied_requests_are_recorded_with_their_cause(client, rt, exploit, sample_model):
    post(client, exploit, feature("denied-one", model="nope"))
    with rt.sessions() as session:
        row = session.scalars(select(FeatureRequest).where(
            FeatureRequest.provider_id == "denied-one")).one()
    assert (row.state, row.step, row.errors) == (
        "DENIED", "LOCAL_DENIED", ["Unknown model 'nope'."])


class TestVersions:
    def test_same_id_twice_in_one_request_gives_two_versions_in_order(
            self, client, exploit, sample_model, process):
        body = post(client, exploit, feature("twice", properties=properties(orbit=1)),
                    feature("twice", properties=properties(orbit=2)))
        assert body["messages"] == [
            "Feature 'twice' appears 2 times: its requests are processed one after the other, "
            "in order; 'granted' names the last one."]
        process()
        found = client.post(f"{BASE}/admin/features", json={"providerIds": ["twice"]},
                            headers=exploit, params={"sort": "version"}).json()["content"]
        assert [(f["content"]["version"], f["content"]["last"],
                 f["content"]["properties"]["orbit"]) for f in found] == [(1, False, 1),
                                                                            (2, True, 2)]

    def test_new_version_keeps_the_uuid_and_marks_the_old_not_last(self, create, project,
                                                                    client, exploit):
        first = create(feature("again"))["again"]
        second = create(feature("again"))["again"]
        uuid = product_uuid(project.name, "again")
        assert first["urn"] == f"URN:FEATURE:DATA:{project.name}:{uuid}:V1"
        assert second["urn"] == f"URN:FEATURE:DATA:{project.name}:{uuid}:V2"
        old = client.get(f"{BASE}/admin/features/{first['urn']}", headers=exploit).json()
        assert old["content"]["last"] is False
        assert second["last"] is True

    def test_override_deletes_the_previous_version_and_tells_the_admins(
            self, create, client, exploit):
        first = create(feature("over"))["over"]
        second = create(feature("over"), override=True)["over"]
        assert second["version"] == 2
        gone = client.get(f"{BASE}/admin/features/{first['urn']}", headers=exploit)
        assert gone.status_code == 404
        notices = client.get(f"{BASE}/events", params={"kind": "OVERRIDE_NOTICE"},
                             headers=exploit).json()["content"]
        assert [n["body"] for n in notices] == [{
            "urn": first["urn"], "replacedBy": second["urn"], "id": "over",
            "message": f"Version {first['urn']} of product 'over' was overridden by "
                       f"{second['urn']} and deleted."}]
        notifications = client.get(f"{BASE}/events", params={"kind": "NOTIFICATION"},
                                   headers=exploit).json()["content"]
        assert [(n["body"]["action"], n["body"]["payload"]["urn"])
                for n in notifications] == [("CREATED", first["urn"]),
                                            ("CREATED", second["urn"]),
                                            ("DELETED", first["urn"])]
        assert notifications[-1]["body"]["payload"] == {**first, "last": False}

    def test_a_product_of_999_versions_takes_no_other(self, create, client, rt, exploit,
                                                      process):
        first = create(feature("full"))["full"]
        with rt.sessions() as session:
            session.execute(update(Feature).where(Feature.urn == first["urn"]).values(
                version=999, urn=first["urn"].replace(":V1", ":V999")))
            session.commit()
        granted = post(client, exploit, feature("full"))["granted"]["full"]
        process()
        request = client.get(f"{BASE}/requests/{granted}", headers=exploit).json()["content"]
        assert (request["state"], request["step"], request["errors"]) == (
            "ERROR", "LOCAL_ERROR",
            ["Product 'full' has 999 versions already: no version can be added."])

    def test_urn_given_is_used(self, client, exploit, sample_model, project, process):
        urn = f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'given')}:V5"
        body = post(client, exploit, feature("given", urn=urn))
        process()
        request = client.get(f"{BASE}/requests/{body['granted']['given']}", headers=exploit)
        assert request.json()["content"]["urn"] == urn

    def test_urn_that_exists_is_denied(self, create, client, exploit):
        urn = create(feature("exists"))["exists"]["urn"]
        assert denial(client, exploit, feature("exists", urn=urn)) == f"URN {urn} already exists."

    def test_urn_that_exists_with_update_if_exists_becomes_a_patch(
            self, create, client, exploit, process):
        urn = create(feature("upd"))["upd"]["urn"]
        body = post(client, exploit, feature("upd", urn=urn, properties=properties(orbit=77)),
                    updateIfExists=True)
        process()
        request = client.get(f"{BASE}/requests/{body['granted']['upd']}", headers=exploit)
        assert (request.json()["content"]["type"], request.json()["content"]["state"]) == (
            "PATCH", "SUCCESS")
        stored = client.get(f"{BASE}/admin/features/{urn}", headers=exploit).json()["content"]
        assert (stored["version"], stored["properties"]["orbit"]) == (1, 77)

    def test_version_below_the_latest_is_denied_as_invalid(self, create, client, exploit,
                                                           project):
        create(feature("vv"))
        create(feature("vv"))
        create(feature("vv"), override=True)  # V3 replaces V2: V2 no longer exists
        urn = f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'vv')}:V2"
        assert denial(client, exploit, feature("vv", urn=urn)) == (
            f"Version is invalid: V2 of {urn} is not above the latest version V3 of this "
            f"product (stored, or requested and not processed yet).")

    def test_duplicate_urn_in_the_request_denies_the_second(self, client, exploit,
                                                            sample_model, project):
        urn = f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'dup')}:V1"
        body = post(client, exploit, feature("dup", urn=urn),
                    feature("dup", urn=urn, properties=properties(orbit=2)))
        assert list(body["granted"]) == ["dup"]
        assert body["denied"] == {"dup": f"Duplicate urn '{urn}' in the request."}

    def test_urn_of_another_product_is_denied(self, client, exploit, sample_model, project):
        """The uuid of a urn is name-based on the feature id: a urn of product 'b' given to
        feature 'a' would make a second product 'a' (its versions apart from the first's)."""
        urn = f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'b')}:V1"
        assert denial(client, exploit, feature("a", urn=urn)) == (
            f"Urn '{urn}' is not one of the product 'a': the urns of its versions are "
            f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'a')}:V<n> (the uuid "
            f"is name-based on the id).")

    def test_urn_requested_and_not_processed_yet_is_denied(self, client, exploit,
                                                            sample_model, project, process):
        """A client that sends its request again (its first answer was lost) is told at once,
        not by a request in error later."""
        urn = f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'again')}:V1"
        first = post(client, exploit, feature("again", urn=urn))["granted"]["again"]
        assert denial(client, exploit, feature("again", urn=urn)) == (
            f"URN {urn} is requested already (creation {first}, not processed yet).")
        process()
        assert denial(client, exploit, feature("again", urn=urn)) == f"URN {urn} already exists."

    def test_version_below_a_requested_one_is_denied_as_invalid(self, client, exploit,
                                                                 sample_model, project):
        product = f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'up')}"
        assert post(client, exploit, feature("up", urn=f"{product}:V3"))["denied"] == {}
        assert denial(client, exploit, feature("up", urn=f"{product}:V2")) == (
            f"Version is invalid: V2 of {product}:V2 is not above the latest version V3 of "
            f"this product (stored, or requested and not processed yet).")

    def test_update_if_exists_of_a_requested_urn_is_a_patch_run_after_the_creation(
            self, client, exploit, sample_model, project, process):
        urn = f"URN:FEATURE:DATA:{project.name}:{product_uuid(project.name, 'soon')}:V1"
        created = post(client, exploit, feature("soon", urn=urn))["granted"]["soon"]
        updated = post(client, exploit, feature("soon", urn=urn, properties=properties(orbit=9)),
                       updateIfExists=True)["granted"]["soon"]
        process()
        states = [client.get(f"{BASE}/requests/{request}", headers=exploit).json()["content"]
                  for request in (created, updated)]
        assert [(state["type"], state["state"]) for state in states] == [
            ("CREATION", "SUCCESS"), ("PATCH", "SUCCESS")]
        stored = client.get(f"{BASE}/admin/features/{urn}", headers=exploit).json()["content"]
        assert (stored["version"], stored["properties"]["orbit"]) == (1, 9)

    def test_urn_of_another_project_is_denied(self, client, exploit, sample_model):
        urn = "URN:FEATURE:DATA:elsewhere:e664c482-3b33-5aef-9840-a8a75061a196:V1"
        project = denial(client, exploit, feature("x", urn=urn))
        assert project.startswith(f"Urn '{urn}' belongs to project 'elsewhere', not to 'test")

    def test_urn_version_out_of_range_is_denied(self, client, exploit, sample_model, project):
        urn = f"URN:FEATURE:DATA:{project.name}:e664c482-3b33-5aef-9840-a8a75061a196:V1000"
        assert denial(client, exploit, feature("x", urn=urn)) == (
            f"Invalid urn '{urn}': version V1000 is not V1 to V999.")
