"""The worker: scheduling, leases, files stored in storage locations, events and sessions."""

from __future__ import annotations

import hashlib
import http.server
import threading
from datetime import timedelta
from functools import partial

import pytest
from sqlalchemy import event, update

from featurehub.db.base import utcnow
from featurehub.db.fem import FeatureRequest
from featurehub.services.fem.worker import WorkerOptions, claim, process_pending
from tests.api.fem.conftest import BASE, creation, feature, patch_body


def post(client, headers, *features, **metadata):
    response = client.post(f"{BASE}/features", json=creation(*features, **metadata),
                           headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["granted"]


def request_of(client, headers, request_id):
    return client.get(f"{BASE}/requests/{request_id}", headers=headers).json()["content"]


class TestScheduling:
    def test_batch_takes_one_request_per_product_by_priority(self, client, rt, project, exploit,
                                                            sample_model):
        process_pending(rt)
        low = post(client, exploit, feature("low"), priority="LOW")
        twice = post(client, exploit, feature("same"), feature("same"))
        high = post(client, exploit, feature("high"), priority="HIGH")
        with rt.sessions() as session:
            claimed = claim(session, worker_id="test-worker", batch_size=1000)
        assert [row.provider_id for row in claimed] == ["high", "same", "low"]
        with rt.sessions() as session:
            # The second request on "same" waits while the first is claimed.
            assert claim(session, worker_id="other-worker", batch_size=1000) == []
            session.execute(update(FeatureRequest).where(
                FeatureRequest.request_id.in_([high["high"], low["low"]])
            ).values(step="LOCAL_DELAYED", claimed_by=None))
            session.commit()
        assert twice  # both granted
        process_pending(rt, options=WorkerOptions(lease_seconds=0))
        assert request_of(client, exploit, twice["same"])["state"] == "SUCCESS"

    def test_sqlite_claim_looks_up_earlier_requests_in_the_unfinished_product_index(self, rt):
        if not rt.settings.is_sqlite:
            pytest.skip("SQLite's planner needs the index's condition repeated; PostgreSQL "
                        "proves it")
        statements = []

        def remember(connection, cursor, statement, parameters, context, executemany):
            statements.append((statement, parameters))

        event.listen(rt.engine, "before_cursor_execute", remember)
        try:
            with rt.sessions() as session:
                claim(session, worker_id="plan-worker", batch_size=1000)
        finally:
            event.remove(rt.engine, "before_cursor_execute", remember)
        statement, parameters = next(item for item in statements if "EXISTS" in item[0])
        with rt.engine.connect() as connection:
            plan = " | ".join(row[-1] for row in connection.exec_driver_sql(
                f"EXPLAIN QUERY PLAN {statement}", parameters))
        assert "USING INDEX ix_fem_requests_product" in plan, plan

    def test_a_crashed_workers_batch_is_taken_again_after_its_lease(self, client, rt, exploit,
                                                                    sample_model):
        process_pending(rt)
        granted = post(client, exploit, feature("crash"))
        with rt.sessions() as session:
            claimed = claim(session, worker_id="crashed-worker", batch_size=1000)
        assert [row.provider_id for row in claimed] == ["crash"]
        # The worker dies here. Within its lease nobody else takes the request...
        assert process_pending(rt) == 0
        assert request_of(client, exploit, granted["crash"])["step"] == "LOCAL_SCHEDULED"
        # ...after it, another worker does.
        with rt.sessions() as session:
            session.execute(update(FeatureRequest).where(
                FeatureRequest.request_id == granted["crash"]
            ).values(claimed_at=utcnow() - timedelta(hours=1)))
            session.commit()
        assert process_pending(rt) == 1
        assert request_of(client, exploit, granted["crash"])["state"] == "SUCCESS"

    def test_a_request_that_breaks_its_batch_fails_alone(self, client, rt, exploit,
                                                        sample_model, monkeypatch):
        from featurehub.services.fem import processing

        process_pending(rt)
        granted = post(client, exploit, feature("fine-1"), feature("poison"), feature("fine-2"))
        real_plan = processing.plan

        def plan(session, requests, **options):
            if any(request.provider_id == "poison" for request in requests):
                raise RuntimeError("a broken request")
            return real_plan(session, requests, **options)

        monkeypatch.setattr(processing, "plan", plan)
        assert process_pending(rt) == 3
        found = {name: request_of(client, exploit, request_id)
                 for name, request_id in granted.items()}
        assert found["fine-1"]["state"] == found["fine-2"]["state"] == "SUCCESS"
        assert found["poison"]["state"] == "ERROR"
        assert found["poison"]["step"] == "LOCAL_ERROR"
        assert "a broken request" in found["poison"]["errors"][0]

    def test_a_worker_whose_lease_expired_does_not_finish(self, client, rt, exploit,
                                                          sample_model):
        from featurehub.services.fem.worker import FeatureWorker

        process_pending(rt)
        granted = post(client, exploit, feature("slow"))
        slow = FeatureWorker(rt, WorkerOptions(worker_id="slow-worker"))
        with rt.sessions() as session:
            claimed = claim(session, worker_id="slow-worker", batch_size=1000)
            session.execute(update(FeatureRequest).where(
                FeatureRequest.request_id == granted["slow"]
            ).values(claimed_by="another-worker"))
            session.commit()
        slow.process(claimed)
        assert request_of(client, exploit, granted["slow"])["state"] == "GRANTED"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_to_store(url: str, data: bytes, name: str = "data.bin", checksum: str | None = None):
    return {"locations": [{"url": url}],
            "attributes": {"dataType": "RAWDATA", "mimeType": "application/octet-stream",
                           "filename": name, "algorithm": "SHA-256",
                           "checksum": checksum or _sha256(data)}}


def referenced_file(url: str, data: bytes, name: str, *, storage: str):
    """A file only referenced (at `url`, in `storage`), with its size."""
    file = file_to_store(url, data, name=name)
    file["locations"][0]["storage"] = storage
    file["attributes"]["filesize"] = len(data)
    return file


@pytest.fixture
def disk(client, as_role, tmp_path):
    root = tmp_path / "disk"
    response = client.put(f"{BASE}/storages/disk", headers=as_role("PROJECT_ADMIN"),
                          json={"plugin": "local", "configuration": {"root": str(root)}})
    assert response.status_code == 200, response.text
    return root


@pytest.fixture
def http_files(tmp_path):
    """A tiny HTTP server on 127.0.0.1 serving a directory."""
    served = tmp_path / "served"
    served.mkdir()
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class TestFiles:
    def test_file_url_is_stored_verified_and_downloadable(self, client, exploit, disk,
                                                          sample_model, process, tmp_path):
        source = tmp_path / "source.bin"
        source.write_bytes(b"product bytes")
        item = feature("stored", files=[file_to_store(source.as_uri(), b"product bytes")])
        granted = post(client, exploit, item,
                       storages=[{"pluginBusinessId": "disk", "storePath": "2026/11"}])
        process()
        request = request_of(client, exploit, granted["stored"])
        assert (request["state"], request["step"]) == ("SUCCESS", "LOCAL_TO_BE_NOTIFIED")
        stored = client.get(f"{BASE}/admin/features/{request['urn']}",
                            headers=exploit).json()["content"]
        target = disk / "2026" / "11" / "data.bin"
        assert stored["files"][0]["locations"] == [{"storage": "disk", "url": target.as_uri()}]
        assert stored["files"][0]["online"] is True
        assert target.read_bytes() == b"product bytes"
        download = client.get(f"{BASE}/admin/features/{request['urn']}/files/"
                              f"{_sha256(b'product bytes')}", headers=exploit)
        assert download.status_code == 200
        assert download.content == b"product bytes"
        assert download.headers["content-type"] == "application/octet-stream"

    def test_http_url_is_fetched(self, client, exploit, disk, sample_model, process,
                                 http_files):
        served, base = http_files
        (served / "remote.bin").write_bytes(b"remote")
        item = feature("remote", files=[file_to_store(f"{base}/remote.bin", b"remote",
                                                      name="remote.bin")])
        granted = post(client, exploit, item, storages=[{"pluginBusinessId": "disk"}])
        process()
        assert request_of(client, exploit, granted["remote"])["state"] == "SUCCESS"
        assert (disk / "remote.bin").read_bytes() == b"remote"

    def test_md5_is_verified_too(self, client, exploit, disk, sample_model, process, tmp_path):
        source = tmp_path / "md5.bin"
        source.write_bytes(b"abc")
        file = file_to_store(source.as_uri(), b"abc", name="md5.bin")
        file["attributes"].update(algorithm="MD5", checksum=hashlib.md5(b"abc").hexdigest())
        granted = post(client, exploit, feature("md5", files=[file]),
                       storages=[{"pluginBusinessId": "disk"}])
        process()
        assert request_of(client, exploit, granted["md5"])["state"] == "SUCCESS"

    def test_checksum_mismatch_is_a_retryable_storage_error(self, client, exploit, disk,
                                                            sample_model, process, tmp_path):
        source = tmp_path / "bad.bin"
        source.write_bytes(b"actual")
        item = feature("mismatch", files=[file_to_store(source.as_uri(), b"actual",
                                                        checksum=_sha256(b"expected"))])
        granted = post(client, exploit, item, storages=[{"pluginBusinessId": "disk"}])
        process()
        request = request_of(client, exploit, granted["mismatch"])
        assert (request["state"], request["step"]) == ("ERROR", "REMOTE_STORAGE_ERROR")
        assert request["errors"] == [
            f"File 'data.bin' not stored in 'disk': checksum mismatch for '{source.as_uri()}': "
            f"SHA-256 {_sha256(b'actual')}, expected {_sha256(b'expected')}."]
        assert not (disk / "data.bin").exists()
        source.write_bytes(b"expected")
        retried = client.post(f"{BASE}/requests/retry/CREATION",
                              json={"requestIds": [granted["mismatch"]]}, headers=exploit)
        assert retried.json() == {"totalRequested": 1, "totalHandled": 1, "message":
                                  "1 request(s) in error retried, 0 matching request(s) not in "
                                  "error left as they are."}
        process()
        assert request_of(client, exploit, granted["mismatch"])["state"] == "SUCCESS"

    def test_missing_source_is_a_storage_error(self, client, exploit, disk, sample_model,
                                               process, tmp_path):
        url = (tmp_path / "absent.bin").as_uri()
        granted = post(client, exploit, feature("absent", files=[file_to_store(url, b"x")]),
                       storages=[{"pluginBusinessId": "disk"}])
        process()
        request = request_of(client, exploit, granted["absent"])
        assert request["step"] == "REMOTE_STORAGE_ERROR"
        assert request["errors"][0].startswith(f"File 'data.bin' not stored in 'disk': cannot "
                                               f"fetch '{url}'")

    def test_unknown_target_storage_is_a_storage_error(self, client, exploit, sample_model,
                                                       process, tmp_path):
        granted = post(client, exploit, feature("nowhere", files=[file_to_store(
            (tmp_path / "x").as_uri(), b"x")]), storages=[{"pluginBusinessId": "nowhere"}])
        process()
        assert request_of(client, exploit, granted["nowhere"])["errors"] == [
            "Storage 'nowhere' is not a configured storage location."]

    def test_referenced_file_with_a_known_storage_is_online(self, client, exploit, disk,
                                                            create, tmp_path):
        (disk / "ref").mkdir(parents=True)
        path = disk / "ref" / "kept.bin"
        path.write_bytes(b"kept")
        file = referenced_file(path.as_uri(), b"kept", "kept.bin", storage="disk")
        stored = create(feature("ref", files=[file]))["ref"]
        assert stored["files"][0]["online"] is True
        download = client.get(f"{BASE}/admin/features/{stored['urn']}/files/{_sha256(b'kept')}",
                              headers=exploit)
        assert download.content == b"kept"

    def test_referenced_file_outside_its_storage_is_offline_and_409(self, client, exploit,
                                                                     disk, create):
        """Online means downloadable: a local storage holds only files under its root."""
        file = referenced_file("https://example.org/x.zip", b"x", "x.zip", storage="disk")
        stored = create(feature("elsewhere", files=[file]))["elsewhere"]
        assert stored["files"][0]["online"] is False
        response = client.get(f"{BASE}/admin/features/{stored['urn']}/files/{_sha256(b'x')}",
                              headers=exploit)
        assert response.status_code == 409
        assert response.json()["detail"] == (
            f"File 'x.zip' of {stored['urn']} cannot be read: 'https://example.org/x.zip' is "
            f"not a file of storage 'disk'.")

    def test_patch_stores_its_files_too(self, client, exploit, disk, create, process,
                                        tmp_path):
        stored = create(feature("later"))["later"]
        source = tmp_path / "added.bin"
        source.write_bytes(b"added")
        body = client.patch(f"{BASE}/features", headers=exploit, json=patch_body(
            {"type": "Feature", "urn": stored["urn"],
             "files": [file_to_store(source.as_uri(), b"added", name="added.bin")]},
            storages=[{"pluginBusinessId": "disk"}])).json()
        process()
        assert request_of(client, exploit, body["granted"][stored["urn"]])["state"] == "SUCCESS"
        after = client.get(f"{BASE}/admin/features/{stored['urn']}",
                           headers=exploit).json()["content"]
        assert [(f["attributes"]["filename"], f["online"]) for f in after["files"]] == [
            ("S1_L1B_20261122T101500.zip", False), ("added.bin", True)]
        assert (disk / "added.bin").read_bytes() == b"added"

    def test_referenced_file_with_an_unknown_storage_is_offline_and_409(self, client, exploit,
                                                                         create):
        stored = create(feature("offline"))["offline"]
        assert stored["files"][0]["online"] is False
        checksum = stored["files"][0]["attributes"]["checksum"]
        response = client.get(f"{BASE}/admin/features/{stored['urn']}/files/{checksum}",
                              headers=exploit)
        assert response.status_code == 409
        assert response.json()["detail"] == (
            f"File 'S1_L1B_20261122T101500.zip' of {stored['urn']} is offline: none of its "
            f"locations is a configured storage location.")

    def test_unknown_checksum_is_404(self, client, exploit, create):
        stored = create(feature("nofile"))["nofile"]
        response = client.get(f"{BASE}/admin/features/{stored['urn']}/files/abc",
                              headers=exploit)
        assert response.status_code == 404


class TestEvents:
    def test_success_emits_an_event_and_a_notification(self, client, exploit, create,
                                                       other_project):
        start = client.get(f"{BASE}/events", headers=exploit).json()["next"]
        stored = create(feature("evented"))["evented"]
        entries = client.get(f"{BASE}/events", params={"after": start},
                             headers=exploit).json()
        kinds = [e["kind"] for e in entries["content"]]
        assert kinds == ["EVENT", "NOTIFICATION"]
        event, notification = (e["body"] for e in entries["content"])
        assert event == {"type": "CREATION", "requestId": event["requestId"],
                         "requestOwner": "tests", "id": "evented", "urn": stored["urn"],
                         "state": "SUCCESS", "errors": []}
        assert notification == {"action": "CREATED", "payload": stored, "metadata": {
            "session": "session-1", "sessionOwner": "owner-1", "changedAttributes": []}}
        assert entries["next"] == entries["content"][-1]["id"]
        others = client.get(f"{BASE}/events", headers=other_project.headers("EXPLOIT")).json()
        assert others == {"content": [], "next": 0}

    def test_patch_notification_lists_the_changed_attributes(self, client, exploit, create,
                                                             process):
        stored = create(feature("changing"))["changing"]
        start = client.get(f"{BASE}/events", headers=exploit).json()["next"]
        client.patch(f"{BASE}/features", headers=exploit, json=patch_body(
            {"type": "Feature", "urn": stored["urn"], "properties": {"orbit": 1, "tags": None}}))
        process()
        notification = client.get(f"{BASE}/events", params={"after": start, "kind":
                                                             "NOTIFICATION"},
                                  headers=exploit).json()["content"][0]["body"]
        assert notification["action"] == "UPDATED"
        assert notification["metadata"]["changedAttributes"] == ["orbit", "tags"]

    def test_a_failed_request_emits_an_error_event(self, client, exploit, sample_model,
                                                   process, tmp_path):
        start = client.get(f"{BASE}/events", headers=exploit).json()["next"]
        granted = post(client, exploit, feature("failing", files=[file_to_store(
            (tmp_path / "x").as_uri(), b"x")]), storages=[{"pluginBusinessId": "nowhere"}])
        process()
        entries = client.get(f"{BASE}/events", params={"after": start},
                             headers=exploit).json()["content"]
        assert [entry["kind"] for entry in entries] == ["EVENT"]  # no notification
        assert entries[0]["body"] == {
            "type": "CREATION", "requestId": granted["failing"], "requestOwner": "tests",
            "id": "failing", "urn": None, "state": "ERROR",
            "errors": ["Storage 'nowhere' is not a configured storage location."]}

    def test_denial_emits_an_event(self, client, exploit, sample_model):
        start = client.get(f"{BASE}/events", headers=exploit).json()["next"]
        client.post(f"{BASE}/features", json=creation(feature("no", model="nope")),
                    headers=exploit)
        event = client.get(f"{BASE}/events", params={"after": start},
                           headers=exploit).json()["content"][0]["body"]
        assert (event["state"], event["errors"], event["id"]) == (
            "DENIED", ["Unknown model 'nope'."], "no")

    def test_without_token_is_401(self, client, project):
        assert client.get(f"{BASE}/events").status_code == 401


class TestSessions:
    def test_counters_per_session(self, client, exploit, create, process):
        stored = create(feature("s1"), feature("s2"))
        client.post(f"{BASE}/features", json=creation(feature("bad", model="nope")),
                    headers=exploit)
        client.post(f"{BASE}/features", json=creation(feature("waiting")), headers=exploit)
        client.patch(f"{BASE}/features", headers=exploit, json=patch_body(
            {"type": "Feature", "urn": stored["s1"]["urn"], "properties": {"orbit": 5}}))
        response = client.get(f"{BASE}/sessions", headers=exploit)
        assert response.json() == [{"content": {
            "sessionOwner": "owner-1", "session": "session-1", "referencingRequests": 4,
            "deniedReferencingRequests": 1, "runningReferencingRequests": 1,
            "inErrorReferencingRequests": 0, "referencedProducts": 2, "updateRequests": 1,
            "deniedUpdateRequests": 0, "runningUpdateRequests": 1, "inErrorUpdateRequests": 0,
            "updatedProducts": 0}, "links": []}]
        process()
        counters = client.get(f"{BASE}/sessions", params={"sessionOwner": "owner-1"},
                              headers=exploit).json()[0]["content"]
        assert (counters["referencedProducts"], counters["updatedProducts"],
                counters["runningReferencingRequests"]) == (3, 1, 0)
        assert client.get(f"{BASE}/sessions", params={"session": "other"},
                          headers=exploit).json() == []


class TestConcurrentWorkers:
    def test_workers_sharing_the_queue_process_each_request_once_in_order(
            self, client, rt, exploit, sample_model):
        from featurehub.services.fem.worker import FeatureWorker

        process_pending(rt)
        # Five versions of each of 20 products, and 100 single products.
        features = [feature(f"shared-{n % 20}", properties={**feature()["properties"],
                                                             "orbit": n})
                    for n in range(100)] + [feature(f"single-{n}") for n in range(100)]
        response = client.post(f"{BASE}/features", json=creation(*features), headers=exploit)
        assert response.json()["denied"] == {}
        workers = [FeatureWorker(rt, WorkerOptions(batch_size=7, worker_id=f"w{n}"))
                   for n in range(3)]
        errors = []

        def drain(worker):
            try:
                while worker.run_once():
                    pass
            except Exception as error:  # noqa: BLE001 - reported below
                errors.append(error)

        threads = [threading.Thread(target=drain, args=(worker,)) for worker in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        process_pending(rt)  # whatever a worker found blocked by another's running request
        assert errors == []
        found = client.post(f"{BASE}/admin/features", headers=exploit,
                            params={"size": 1000, "sort": "providerId"},
                            json={"providerIds": [f"shared-{n}" for n in range(20)]}).json()
        versions: dict[str, list[tuple[int, bool, int]]] = {}
        for item in found["content"]:
            content = item["content"]
            versions.setdefault(content["id"], []).append(
                (content["version"], content["last"], content["properties"]["orbit"]))
        assert len(versions) == 20
        for n in range(20):
            # Acceptance order is version order: orbit n, n + 20, n + 40, ...
            assert sorted(versions[f"shared-{n}"]) == [
                (v + 1, v == 4, n + 20 * v) for v in range(5)]
        singles = client.post(f"{BASE}/requests/search/CREATION", headers=exploit,
                              json={"states": ["SUCCESS"]}, params={"size": 1}).json()
        assert singles["page"]["totalElements"] == 200
