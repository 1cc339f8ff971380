"""rs-access toponyms: one class per operation, plus the loader, the purge and their commands."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from featurehub import cli
from featurehub.db.access import Toponym
from featurehub.services.access import toponyms
from tests.conftest import problem

BASE = "/rs-access/api/v1/toponyms"
SQUARE = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}
AREAS = [
    ("Country_FRA", "France", "France", SQUARE),
    ("Country_DEU", "Germany", "Allemagne",
     {"type": "Polygon", "coordinates": [[[5, 47], [15, 47], [15, 55], [5, 55], [5, 47]]]}),
    ("Country_CIV", "Ivory Coast", "Côte d'Ivoire",
     {"type": "MultiPolygon", "coordinates": [[[[-8, 4], [-3, 4], [-3, 10], [-8, 10], [-8, 4]]]]}),
]


def feature(business_id, label_en, label_fr, geometry):
    return {"type": "Feature", "geometry": geometry,
            "properties": {"businessId": business_id, "labelEn": label_en, "labelFr": label_fr,
                           "description": f"{label_en} (test)", "copyright": "tests"}}


@pytest.fixture
def areas(project, rt, tmp_path):
    """Three visible toponyms loaded into the test's project."""
    path = tmp_path / "areas.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection",
                                "features": [feature(*area) for area in AREAS]}))
    with rt.sessions() as session:
        assert toponyms.load_toponyms(session, project_id=project.id, path=path) == 3
        session.commit()
    return project


def visible(answer, business_id, label_en, label_fr, geometry, box, with_geometry=True):
    """The whole answered toponym of a loaded area (its load date taken from the answer)."""
    created = answer["content"]["toponymMetadata"]["creationDate"]
    assert datetime.fromisoformat(created) <= datetime.now(UTC)
    body = {"businessId": business_id, "labelEn": label_en, "labelFr": label_fr,
            "description": f"{label_en} (test)", "copyright": "tests", "visible": True,
            "boundingBox": box, "toponymMetadata": {"creationDate": created}}
    if with_geometry:
        body["geometry"] = geometry
    return body


def register(client, headers, geometry=SQUARE, **fields):
    return client.post(BASE, json={"feature": json.dumps(
        {"type": "Feature", "geometry": geometry, "properties": {}}), **fields}, headers=headers)


class TestListToponyms:
    def test_visible_ones_sorted_by_label(self, client, areas, as_role):
        register(client, as_role("REGISTERED_USER"))  # not visible
        response = client.get(BASE, params={"scope": areas.name})
        assert response.status_code == 200
        body = response.json()
        assert [t["content"]["businessId"] for t in body["content"]] == [
            "Country_FRA", "Country_DEU", "Country_CIV"]
        assert body["content"][0] == {"content": visible(
            body["content"][0], "Country_FRA", "France", "France", SQUARE, "BOX(0 0,1 1)"),
            "links": []}
        assert body["page"] == {"number": 0, "size": 20, "totalElements": 3, "totalPages": 1}

    def test_sorts_on_french_label_and_pages(self, client, areas):
        body = client.get(BASE, params={"scope": areas.name, "sort": "labelFr,desc",
                                        "size": 2, "page": 1}).json()
        assert [t["content"]["labelFr"] for t in body["content"]] == ["Allemagne"]
        assert body["page"] == {"number": 1, "size": 2, "totalElements": 3, "totalPages": 2}

    def test_unknown_sort_property_is_400(self, client, areas):
        response = client.get(BASE, params={"scope": areas.name, "sort": "geometry"})
        assert response.status_code == 400
        assert response.json()["detail"].startswith(
            "Query parameter 'sort': 'geometry' does not match")

    def test_size_over_1000_is_400(self, client, areas):
        assert client.get(BASE, params={"scope": areas.name, "size": 1001}).status_code == 400

    def test_unknown_project_is_404(self, client):
        response = client.get(BASE, params={"scope": "no-such-project"})
        assert response.status_code == 404

    def test_invalid_token_is_401(self, client, project):
        assert client.get(BASE, headers={"Authorization": "Bearer x"}).status_code == 401

    def test_token_of_another_project_is_403(self, client, project, other_project):
        response = client.get(BASE, params={"scope": project.name},
                              headers=other_project.headers("ADMIN"))
        assert response.status_code == 403


class TestGetToponym:
    def test_found_with_its_geometry(self, client, areas):
        response = client.get(f"{BASE}/Country_DEU", params={"scope": areas.name})
        assert response.status_code == 200
        assert response.json() == {"content": visible(
            response.json(), "Country_DEU", "Germany", "Allemagne", AREAS[1][3],
            "BOX(5 47,15 55)"),
            "links": []}

    def test_simplified_geometry(self, client, areas, rt, tmp_path):
        # A square with a 0.01 degree bump: the 0.1 degree tolerance removes the bump.
        bumpy = {"type": "Polygon", "coordinates": [
            [[0, 0], [0.5, 0.01], [1, 0], [1, 1], [0, 1], [0, 0]]]}
        path = tmp_path / "bumpy.geojson"
        path.write_text(json.dumps({"type": "FeatureCollection",
                                    "features": [feature("Bumpy", "Bumpy", "Bosselé", bumpy)]}))
        with rt.sessions() as session:
            toponyms.load_toponyms(session, project_id=areas.id, path=path)
            session.commit()
        full = client.get(f"{BASE}/Bumpy", params={"scope": areas.name}).json()["content"]
        simple = client.get(f"{BASE}/Bumpy", params={"scope": areas.name, "simplified": "true"}
                            ).json()["content"]
        assert len(full["geometry"]["coordinates"][0]) == 6
        assert simple["geometry"] == {"type": "Polygon", "coordinates": [
            [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]]]}

    def test_reading_a_registered_one_extends_its_expiry(self, client, project, rt, as_role):
        created = register(client, as_role("REGISTERED_USER")).json()["content"]
        soon = datetime.now(UTC) + timedelta(days=1)
        with rt.sessions() as session:
            session.execute(update(Toponym).where(
                Toponym.business_id == created["businessId"]).values(expiration_date=soon))
            session.commit()
        read = client.get(f"{BASE}/{created['businessId']}", params={"scope": project.name})
        expiry = datetime.fromisoformat(read.json()["content"]["toponymMetadata"]["expirationDate"])
        assert expiry > datetime.now(UTC) + timedelta(days=29)

    def test_expired_is_404(self, client, project, rt, as_role):
        created = register(client, as_role("REGISTERED_USER")).json()["content"]
        _expire(rt, created["businessId"])
        response = client.get(f"{BASE}/{created['businessId']}", params={"scope": project.name})
        assert response.status_code == 404

    def test_unknown_is_404(self, client, project):
        response = client.get(f"{BASE}/Nowhere", params={"scope": project.name})
        assert response.status_code == 404
        assert response.json() == problem(404, "Toponym 'Nowhere' does not exist.")

    def test_no_scope_and_no_token_is_400(self, client):
        assert client.get(f"{BASE}/Country_FRA").status_code == 400

    def test_invalid_token_is_401(self, client, project):
        response = client.get(f"{BASE}/Country_FRA", headers={"Authorization": "Bearer x"})
        assert response.status_code == 401

    def test_token_of_another_project_is_403(self, client, project, other_project):
        response = client.get(f"{BASE}/Country_FRA", params={"scope": project.name},
                              headers=other_project.headers("ADMIN"))
        assert response.status_code == 403


class TestSearchToponyms:
    def test_english_labels_case_insensitive_without_geometry(self, client, areas):
        response = client.get(f"{BASE}/search", params={"scope": areas.name,
                                                        "partialLabel": "GER"})
        assert response.status_code == 200
        assert response.json() == [{"content": visible(
            response.json()[0], "Country_DEU", "Germany", "Allemagne", None, "BOX(5 47,15 55)",
            with_geometry=False), "links": []}]

    def test_search_route_is_not_taken_for_a_business_id(self, client, areas):
        response = client.get(f"{BASE}/search", params={"scope": areas.name})
        assert response.status_code == 200
        assert [t["content"]["businessId"] for t in response.json()] == [
            "Country_FRA", "Country_DEU", "Country_CIV"]

    def test_french_locale_matches_and_sorts_on_french_labels(self, client, areas):
        found = client.get(f"{BASE}/search", params={
            "scope": areas.name, "partialLabel": "CÔTE", "locale": "fr"}).json()
        assert [t["content"]["labelFr"] for t in found] == ["Côte d'Ivoire"]
        every = client.get(f"{BASE}/search", params={
            "scope": areas.name, "partialLabel": "", "locale": "fr"}).json()
        assert [t["content"]["labelFr"] for t in every] == ["Allemagne", "Côte d'Ivoire", "France"]

    def test_other_locale_searches_english_labels(self, client, areas):
        found = client.get(f"{BASE}/search", params={
            "scope": areas.name, "partialLabel": "allemagne", "locale": "de"}).json()
        assert found == []

    def test_like_wildcards_are_literal(self, client, areas):
        found = client.get(f"{BASE}/search", params={"scope": areas.name,
                                                     "partialLabel": "%"}).json()
        assert found == []

    def test_at_most_100(self, client, project, rt, tmp_path):
        path = tmp_path / "many.geojson"
        path.write_text(json.dumps({"type": "FeatureCollection", "features": [
            feature(f"Area_{n:03}", f"Area {n:03}", f"Zone {n:03}", SQUARE)
            for n in range(120)]}))
        with rt.sessions() as session:
            toponyms.load_toponyms(session, project_id=project.id, path=path)
            session.commit()
        found = client.get(f"{BASE}/search", params={"scope": project.name,
                                                     "partialLabel": "area"}).json()
        assert len(found) == 100
        assert found[0]["content"]["labelEn"] == "Area 000"

    def test_not_visible_ones_are_not_found(self, client, project, as_role):
        created = register(client, as_role("REGISTERED_USER")).json()["content"]
        found = client.get(f"{BASE}/search", params={
            "scope": project.name, "partialLabel": created["businessId"]}).json()
        assert found == []

    def test_unknown_project_is_404(self, client):
        response = client.get(f"{BASE}/search", params={"scope": "no-such-project"})
        assert response.status_code == 404

    def test_invalid_token_is_401(self, client, project):
        response = client.get(f"{BASE}/search", headers={"Authorization": "Bearer x"})
        assert response.status_code == 401

    def test_token_of_another_project_is_403(self, client, project, other_project):
        response = client.get(f"{BASE}/search", params={"scope": project.name},
                              headers=other_project.headers("ADMIN"))
        assert response.status_code == 403

    def test_label_longer_than_255_is_400(self, client, project):
        response = client.get(f"{BASE}/search", params={"scope": project.name,
                                                        "partialLabel": "x" * 256})
        assert response.status_code == 400


class TestCreateToponym:
    def test_registers_a_not_visible_toponym(self, client, project, as_role):
        before = datetime.now(UTC)
        response = register(client, as_role("REGISTERED_USER"), user="someone", project="p")
        assert response.status_code == 201
        content = response.json()["content"]
        business_id = content["businessId"]
        assert re.fullmatch(r"Toponym_\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?", business_id)
        metadata = content["toponymMetadata"]
        created = datetime.fromisoformat(metadata["creationDate"])
        expires = datetime.fromisoformat(metadata["expirationDate"])
        assert expires - created == timedelta(days=30) and created >= before
        assert response.json() == {"content": {
            "businessId": business_id, "labelEn": business_id, "labelFr": business_id,
            "visible": False, "boundingBox": "BOX(0 0,1 1)", "geometry": SQUARE,
            "toponymMetadata": {"author": "someone", "project": "p",
                                "creationDate": metadata["creationDate"],
                                "expirationDate": metadata["expirationDate"]}},
            "links": []}

    def test_author_and_project_default_to_the_caller(self, client, project):
        email = project.user("REGISTERED_USER")
        headers = {"Authorization": f"Bearer {project.token(email)}"}
        metadata = register(client, headers).json()["content"]["toponymMetadata"]
        assert (metadata["author"], metadata["project"]) == (email, project.name)

    def test_bare_multipolygon_geometry_is_accepted(self, client, as_role):
        response = client.post(BASE, json={"feature": json.dumps(AREAS[2][3])},
                               headers=as_role("REGISTERED_USER"))
        assert response.status_code == 201
        assert response.json()["content"]["geometry"]["type"] == "MultiPolygon"

    def test_same_geometry_refreshes_the_existing_one(self, client, project, rt, as_role):
        user = as_role("REGISTERED_USER")
        first = register(client, user).json()["content"]
        soon = datetime.now(UTC) + timedelta(days=1)
        with rt.sessions() as session:
            session.execute(update(Toponym).where(
                Toponym.business_id == first["businessId"]).values(expiration_date=soon))
            session.commit()
        shifted = {"type": "Polygon", "coordinates": [[[1, 0], [1, 1], [0, 1], [0, 0], [1, 0]]]}
        again = register(client, user, geometry=shifted)
        assert again.status_code == 200
        content = again.json()["content"]
        assert content["businessId"] == first["businessId"]
        expiry = datetime.fromisoformat(content["toponymMetadata"]["expirationDate"])
        assert expiry > datetime.now(UTC) + timedelta(days=29)

    def test_other_geometry_type_is_415(self, client, as_role):
        response = register(client, as_role("REGISTERED_USER"),
                            geometry={"type": "Point", "coordinates": [1, 2]})
        assert response.status_code == 415
        assert response.json() == problem(
            415, "Geometry type 'Point' cannot be registered; only Polygon and MultiPolygon can.")

    def test_unparsable_feature_is_400(self, client, as_role):
        response = client.post(BASE, json={"feature": "{not json"},
                               headers=as_role("REGISTERED_USER"))
        assert response.status_code == 400
        assert response.json() == problem(
            400, "The feature is not valid JSON: Expecting property name enclosed in double "
                 "quotes: line 1 column 2 (char 1).")

    def test_broken_polygon_is_400(self, client, as_role):
        response = register(client, as_role("REGISTERED_USER"),
                            geometry={"type": "Polygon", "coordinates": [[[0, 0], [1, 1]]]})
        assert response.status_code == 400
        assert response.json() == problem(400, "The Polygon is not a valid GeoJSON geometry.")

    def test_out_of_range_coordinates_are_400(self, client, as_role):
        far = {"type": "Polygon", "coordinates": [[[0, 0], [200, 0], [200, 1], [0, 0]]]}
        response = register(client, as_role("REGISTERED_USER"), geometry=far)
        assert response.status_code == 400

    def test_daily_limit_is_429(self, client, project, as_role):
        admin = as_role("ADMIN")
        client.put("/rs-access/api/v1/settings/toponym_daily_registration_limit", headers=admin,
                   json={"name": "toponym_daily_registration_limit", "value": 1})
        user = as_role("REGISTERED_USER")
        assert register(client, user).status_code == 201
        other = {"type": "Polygon", "coordinates": [[[2, 2], [3, 2], [3, 3], [2, 2]]]}
        response = register(client, user, geometry=other)
        assert response.status_code == 429
        assert response.json() == problem(
            429, "At most 1 toponyms may be registered per user and day.")
        assert 1 <= int(response.headers["retry-after"]) <= 24 * 3600  # until the next UTC day
        assert register(client, as_role("REGISTERED_USER"), geometry=other).status_code == 201

    def test_without_token_is_401(self, client, project):
        response = client.post(BASE, json={"feature": json.dumps(SQUARE)},
                               headers={"scope": project.name})
        assert response.status_code == 401

    def test_token_of_another_project_is_403(self, client, project, other_project):
        response = client.post(BASE, json={"feature": json.dumps(SQUARE)}, headers={
            **other_project.headers("REGISTERED_USER"), "scope": project.name})
        assert response.status_code == 403

    def test_missing_feature_is_400(self, client, as_role):
        response = client.post(BASE, json={}, headers=as_role("REGISTERED_USER"))
        assert response.status_code == 400
        assert response.json() == problem(400, '"feature" is a required property')


def _expire(rt, business_id):
    with rt.sessions() as session:
        session.execute(update(Toponym).where(Toponym.business_id == business_id).values(
            expiration_date=datetime.now(UTC) - timedelta(seconds=1)))
        session.commit()


class TestPurge:
    def test_deletes_expired_registered_toponyms_only(self, client, areas, rt, as_role):
        user = as_role("REGISTERED_USER")
        expired = register(client, user).json()["content"]["businessId"]
        other = {"type": "Polygon", "coordinates": [[[2, 2], [3, 2], [3, 3], [2, 2]]]}
        alive = register(client, user, geometry=other).json()["content"]["businessId"]
        _expire(rt, expired)
        with rt.sessions() as session:
            assert toponyms.purge_expired(session) >= 1
            left = set(session.scalars(select(Toponym.business_id).where(
                Toponym.project_id == areas.id)))
        assert left == {alive, "Country_FRA", "Country_DEU", "Country_CIV"}


class TestCountries:
    def test_shipped_countries_load_into_a_project(self, client, project, rt):
        with rt.sessions() as session:
            count = toponyms.load_toponyms(session, project_id=project.id)
            session.commit()
            again = toponyms.load_toponyms(session, project_id=project.id)
        assert count > 240 and again == 0
        found = client.get(f"{BASE}/search", params={
            "scope": project.name, "partialLabel": "allemagne", "locale": "fr"}).json()
        assert [(t["content"]["businessId"], t["content"]["labelEn"]) for t in found] == [
            ("Country_DEU", "Germany")]
        france = client.get(f"{BASE}/Country_FRA", params={"scope": project.name,
                                                           "simplified": "true"}).json()
        assert france["content"]["geometry"]["type"] == "MultiPolygon"
        assert france["content"]["copyright"] == (
            "Natural Earth (public domain), naturalearthdata.com")


class TestToponymCommands:
    def test_project_creation_hook_load_and_purge(self, tmp_path, monkeypatch, capsys):
        monkeypatch.setenv("FEATUREHUB_DATABASE_URL", f"sqlite:///{tmp_path}/cli.db")
        monkeypatch.setenv("FEATUREHUB_BOOTSTRAP_ADMIN_PASSWORD", "cli-password")
        monkeypatch.setenv("FEATUREHUB_LOAD_TOPONYMS", "false")
        assert cli.main(["toponyms", "load", "--project", "demo"]) == 0
        monkeypatch.setenv("FEATUREHUB_LOAD_TOPONYMS", "true")
        assert cli.main(["project", "create", "fresh"]) == 0
        assert cli.main(["toponyms", "load", "--project", "fresh"]) == 0
        assert cli.main(["toponyms", "purge"]) == 0
        lines = capsys.readouterr().out.splitlines()
        loaded = [line for line in lines if "toponyms loaded" in line]
        assert re.fullmatch(r"featurehub: 2\d\d toponyms loaded into project 'demo'", loaded[0])
        # The new project got them from the PROJECT_CREATED hook: nothing left to load.
        assert loaded[1] == "featurehub: 0 toponyms loaded into project 'fresh'"
        assert "featurehub: 0 expired toponyms purged" in lines
