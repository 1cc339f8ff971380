"""The rs-fem "Done when" story, end to end through the HTTP API, as a new user follows the
README's rs-fem walkthrough: a token, the example model registered, the sample collection
posted, its request polled until a running worker has processed it, the product read by urn,
a property patched, the collection posted again (V2, V1 no longer last), the outbox read; and
the causes of denied features, precise enough to act on.

Bodies are sent as `curl -d @file` sends them (the file's bytes, newlines dropped) with the
README's Content-Type. The one deliberate difference: the story runs in a project of its own
(the README's `demo` is shared by the whole run), so urns name that project, not `demo`."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from typing import Any

import pytest

from featurehub.services.fem.urns import product_uuid
from featurehub.services.fem.worker import EMBEDDED, FeatureWorker, WorkerOptions
from featurehub.settings import REPO_ROOT
from tests.api.fem.conftest import feature, properties
from tests.api.test_authentication import password_grant

FEM = "/rs-fem/api/v1"
EXAMPLES = REPO_ROOT / "examples"
MODEL_FILE = EXAMPLES / "models" / "sample_product.json"
COLLECTION_FILE = EXAMPLES / "sample-collection.json"
PRODUCT_ID = "S1_L1B_20261122T101500"
POLL_SECONDS = 60  # a bound on waiting for the worker, not a timing assertion


def curl_data(path) -> bytes:
    """What `curl -d @path` sends: the file with its carriage returns and newlines removed."""
    return path.read_bytes().replace(b"\r", b"").replace(b"\n", b"")


def ok(response: Any, status: int = 200) -> Any:
    """The JSON body of a response that must have this status."""
    assert response.status_code == status, response.text
    return response.json()


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def worker(rt):
    """A feature worker running in the background, woken by every accepted POST and PATCH as
    the embedded worker of `featurehub serve` is (the API tests run without one)."""
    assert EMBEDDED not in rt.workers
    running = FeatureWorker(rt, WorkerOptions(poll_seconds=0.05, gather_seconds=0.01)).start()
    rt.workers[EMBEDDED] = running
    yield running
    rt.workers.pop(EMBEDDED, None)
    running.stop()


def poll_until_done(client, headers, request_id: str) -> dict[str, Any]:
    """GET /requests/{requestId} until the request leaves GRANTED (the README's polling)."""
    deadline = time.monotonic() + POLL_SECONDS
    while True:
        request = ok(client.get(f"{FEM}/requests/{request_id}", headers=headers))["content"]
        if request["state"] != "GRANTED" or time.monotonic() > deadline:
            return request
        time.sleep(0.05)


def test_done_when_walkthrough(client, project, settings, worker):
    # A token, as the README gets one: the instance administrator's password grant.
    token = ok(password_grant(client, settings.bootstrap_admin_email, "bootstrap-password",
                              project.name))
    assert token["role"] == "INSTANCE_ADMIN"
    auth = {"Authorization": f"Bearer {token['access_token']}"}
    as_json = {**auth, "Content-Type": "application/json"}

    # 1. Register the example model.
    model = ok(client.put(f"{FEM}/models/sample_product", content=curl_data(MODEL_FILE),
                          headers=as_json))["content"]
    example = json.loads(MODEL_FILE.read_text())
    assert (model["name"], model["schema"], model["source"]) == (
        "sample_product", example["schema"], "project")

    # 2. Post the sample collection as GeoJSON: one feature granted, nothing denied.
    posted = ok(client.post(f"{FEM}/features", content=curl_data(COLLECTION_FILE),
                            headers={**auth, "Content-Type": "application/geo+json"}), 201)
    assert list(posted["granted"]) == [PRODUCT_ID]
    first_request = posted["granted"][PRODUCT_ID]
    assert posted == {"granted": {PRODUCT_ID: first_request}, "denied": {}, "messages": []}

    # 3. Poll the request until the worker has processed it; it carries the V1 urn.
    request = poll_until_done(client, auth, first_request)
    product = product_uuid(project.name, PRODUCT_ID)
    v1_urn = f"URN:FEATURE:DATA:{project.name}:{product}:V1"
    assert (request["requestId"], request["type"], request["state"], request["step"],
            request["providerId"], request["urn"], request["requestOwner"],
            request["sessionOwner"], request["session"], request["errors"]) == (
        first_request, "CREATION", "SUCCESS", "LOCAL_TO_BE_NOTIFIED", PRODUCT_ID, v1_urn,
        "readme-walkthrough", "demo-producer", "walkthrough-2026-11-22", [])
    assert re.fullmatch(r"URN:FEATURE:DATA:[A-Za-z0-9_-]+:[0-9a-f-]{36}:V1", request["urn"])

    # 4. The product by urn: version 1, last, its file referenced in a storage location that
    #    is not configured ("archive"), so offline and not downloadable; its history.
    sample = json.loads(COLLECTION_FILE.read_text())["features"][0]
    v1 = ok(client.get(f"{FEM}/admin/features/{v1_urn}", headers=auth))["content"]
    assert (v1["type"], v1["id"], v1["urn"], v1["entityType"], v1["model"], v1["version"],
            v1["last"], v1["session"], v1["sessionOwner"]) == (
        "Feature", PRODUCT_ID, v1_urn, "DATA", "sample_product", 1, True,
        "walkthrough-2026-11-22", "demo-producer")
    assert v1["geometry"] == sample["geometry"]
    assert v1["properties"] == sample["properties"]
    assert v1["files"] == [{**sample["files"][0], "online": False}]
    assert (v1["disseminationStatus"], v1["disseminationInfo"]) == ("NONE", [])
    history = v1["history"]
    assert (history["createdBy"], history["updatedBy"]) == (
        "readme-walkthrough", "readme-walkthrough")
    assert history["creationDate"] == history["updateDate"]
    checksum = sample["files"][0]["attributes"]["checksum"]
    download = client.get(f"{FEM}/admin/features/{v1_urn}/files/{checksum}", headers=auth)
    assert download.status_code == 409
    assert download.json()["detail"] == (
        f"File '{PRODUCT_ID}.zip' of {v1_urn} is offline: none of its locations is a "
        f"configured storage location.")

    # 5. Patch a property with the README's body: granted by urn, processed; the property
    #    changed, the version did not, the last update moved on.
    patch = ('{"type":"FeatureCollection","requestOwner":"me",'
             '"metadata":{"priority":"HIGH","storages":[]},"features":[{"type":"Feature",'
             f'"urn":"{v1_urn}","properties":{{"quality":"DEGRADED"}}}}]}}')
    patched = ok(client.patch(f"{FEM}/features", content=patch.encode(), headers=as_json), 201)
    patch_request = patched["granted"].get(v1_urn)
    assert patched == {"granted": {v1_urn: patch_request}, "denied": {}, "messages": []}
    request = poll_until_done(client, auth, patch_request)
    assert (request["type"], request["state"], request["priority"], request["urn"],
            request["providerId"], request["requestOwner"], request["errors"]) == (
        "PATCH", "SUCCESS", "HIGH", v1_urn, PRODUCT_ID, "me", [])
    after_patch = ok(client.get(f"{FEM}/admin/features/{v1_urn}", headers=auth))["content"]
    assert after_patch["properties"] == {**sample["properties"], "quality": "DEGRADED"}
    assert (after_patch["urn"], after_patch["version"], after_patch["last"]) == (v1_urn, 1, True)
    assert after_patch["files"] == v1["files"]  # no files in the patch: APPEND keeps them
    assert after_patch["history"]["createdBy"] == "readme-walkthrough"
    assert after_patch["history"]["updatedBy"] == "me"
    assert after_patch["history"]["creationDate"] == history["creationDate"]
    assert moment(after_patch["history"]["updateDate"]) > moment(history["updateDate"])

    # 6. Post the same collection again (as application/json this time): V2, and V1 is no
    #    longer the last version (it keeps its patched property).
    again = ok(client.post(f"{FEM}/features", content=curl_data(COLLECTION_FILE),
                           headers=as_json), 201)
    second_request = again["granted"].get(PRODUCT_ID)
    assert again == {"granted": {PRODUCT_ID: second_request}, "denied": {}, "messages": []}
    assert second_request != first_request
    request = poll_until_done(client, auth, second_request)
    v2_urn = f"URN:FEATURE:DATA:{project.name}:{product}:V2"
    assert (request["state"], request["urn"], request["errors"]) == ("SUCCESS", v2_urn, [])
    v2 = ok(client.get(f"{FEM}/admin/features/{v2_urn}", headers=auth))["content"]
    assert (v2["id"], v2["urn"], v2["version"], v2["last"]) == (PRODUCT_ID, v2_urn, 2, True)
    assert v2["properties"] == sample["properties"]
    v1_now = ok(client.get(f"{FEM}/admin/features/{v1_urn}", headers=auth))["content"]
    assert (v1_now["version"], v1_now["last"]) == (1, False)
    assert v1_now["properties"]["quality"] == "DEGRADED"
    versions = ok(client.post(f"{FEM}/admin/features", json={"providerIds": [PRODUCT_ID]},
                              params={"sort": "version"}, headers=auth))
    assert [(item["content"]["urn"], item["content"]["last"])
            for item in versions["content"]] == [(v1_urn, False), (v2_urn, True)]

    # 7. The outbox: for each request an event, then the product notification.
    outbox = ok(client.get(f"{FEM}/events?after=0", headers=auth))
    assert [(entry["kind"], entry["body"].get("requestId") or entry["body"]["action"])
            for entry in outbox["content"]] == [
        ("EVENT", first_request), ("NOTIFICATION", "CREATED"),
        ("EVENT", patch_request), ("NOTIFICATION", "UPDATED"),
        ("EVENT", second_request), ("NOTIFICATION", "CREATED")]
    assert outbox["content"][3]["body"]["metadata"]["changedAttributes"] == ["quality"]
    assert outbox["next"] == outbox["content"][-1]["id"]

    # 8. Denied features say precisely why; the granted one of the same request still goes.
    too_long = "x" * 101
    denials = json.loads(COLLECTION_FILE.read_text())
    denials["features"] = [
        feature("unknown-model", model="sample_product_v9"),
        feature("no-mission", properties=properties(mission=None)),
        feature("with-colour", properties=properties(colour="red")),
        feature(too_long),
        feature("fine"),
    ]
    answer = ok(client.post(f"{FEM}/features", json=denials, headers=auth), 201)
    assert answer == {
        "granted": {"fine": answer["granted"].get("fine")},
        "denied": {
            "unknown-model": "Unknown model 'sample_product_v9'.",
            "no-mission": "Missing required property 'mission' of model 'sample_product'.",
            "with-colour": "Property 'colour' isn't expected by the model 'sample_product'.",
            too_long: "Feature id is longer than 100 characters (101).",
        },
        "messages": ["1 feature(s) granted, 4 denied."]}
    assert poll_until_done(client, auth, answer["granted"]["fine"])["state"] == "SUCCESS"

    # The same urn twice in one request (V3 of the product, sent twice): the first is
    # granted, the second denied. Both features carry the product's id, so the id is a key
    # of both maps.
    v3_urn = f"URN:FEATURE:DATA:{project.name}:{product}:V3"
    twice = json.loads(COLLECTION_FILE.read_text())
    twice["features"] = [{**sample, "urn": v3_urn}, {**sample, "urn": v3_urn}]
    answer = ok(client.post(f"{FEM}/features", json=twice, headers=auth), 201)
    third_request = answer["granted"].get(PRODUCT_ID)
    assert answer == {
        "granted": {PRODUCT_ID: third_request},
        "denied": {PRODUCT_ID: f"Duplicate urn '{v3_urn}' in the request."},
        "messages": ["1 feature(s) granted, 1 denied."]}
    request = poll_until_done(client, auth, third_request)
    assert (request["state"], request["urn"]) == ("SUCCESS", v3_urn)
    v3 = ok(client.get(f"{FEM}/admin/features/{v3_urn}", headers=auth))["content"]
    assert (v3["version"], v3["last"]) == (3, True)
    assert ok(client.get(f"{FEM}/admin/features/{v2_urn}", headers=auth))[
        "content"]["last"] is False
