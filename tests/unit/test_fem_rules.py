"""rs-fem pure rules: URNs, geometry, files, compiled models."""

from __future__ import annotations

import time
import uuid

import pytest

from featurehub.services.fem import rules
from featurehub.services.fem.datamodels import CompiledModel, ModelDefinition
from featurehub.services.fem.rules import bounding_box, files_problem, geometry_problem, url_problem
from featurehub.services.fem.urns import (
    InvalidUrn,
    parse_urn,
    product_uuid,
    request_uuids,
    urn_of,
)

UUID = "e664c482-3b33-5aef-9840-a8a75061a196"


class TestUrns:
    def test_uuid_is_name_based_per_project(self):
        assert product_uuid("p", "id") == product_uuid("p", "id")
        assert product_uuid("p", "id") != product_uuid("q", "id")
        assert product_uuid("p", "id") != product_uuid("p", "id2")

    @pytest.mark.parametrize("provider_id", ["id", "bench-000042", "é漢 x", "a" * 100, "\t"])
    def test_uuid_is_rfc_uuid5_of_project_and_id(self, provider_id):
        # Stored product keys depend on it: the text is written by hand, for speed.
        namespace = uuid.uuid5(uuid.NAMESPACE_URL, "featurehub:rs-fem:products")
        assert product_uuid("demo", provider_id) == str(
            uuid.uuid5(namespace, f"demo\x00{provider_id}"))

    def test_round_trip(self):
        urn = urn_of("DATA", "demo", UUID, 12)
        assert urn == f"URN:FEATURE:DATA:demo:{UUID}:V12"
        parsed = parse_urn(urn)
        assert (parsed.entity_type, parsed.project, parsed.uuid, parsed.version) == (
            "DATA", "demo", UUID, 12)
        assert str(parsed) == urn

    @pytest.mark.parametrize("text", [
        f"URN:FEATURE:THING:demo:{UUID}:V1", f"URN:FEATURE:DATA:demo:{UUID}:V0",
        f"URN:FEATURE:DATA:demo:{UUID}:V01", f"URN:FEATURE:DATA:demo:{UUID}:V1000",
        "URN:FEATURE:DATA:demo:not-a-uuid:V1", f"urn:feature:DATA:demo:{UUID}:V1"])
    def test_invalid(self, text):
        with pytest.raises(InvalidUrn):
            parse_urn(text)


    def test_request_ids_are_time_ordered_uuid7(self):
        [first] = request_uuids(1)
        time.sleep(0.002)
        later = request_uuids(600)
        for text in (first, *later):
            parsed = uuid.UUID(text)
            assert (parsed.version, parsed.variant, str(parsed)) == (7, uuid.RFC_4122, text)
        assert len(set(later)) == 600
        assert {text[19] for text in request_uuids(200)} == set("89ab")  # the variant digit
        assert all(first < text for text in later)  # a later millisecond sorts after


class TestGeometry:
    @pytest.mark.parametrize("geometry", [
        None, {"type": "Point", "coordinates": [1, 2]},
        {"type": "LineString", "coordinates": [[0, 0], [1, 1]]},
        {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]},
        {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]]]},
        {"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [0, 0]}]},
    ])
    def test_valid(self, geometry):
        assert geometry_problem(geometry) is None

    @pytest.mark.parametrize(("geometry", "problem"), [
        ({"type": "LineString", "coordinates": [[0, 0]]},
         "geometry: the coordinates of a LineString are a list of at least 2 positions."),
        ({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]},
         "geometry: the coordinates of a Polygon are a list of linear rings, each a closed list "
         "of at least 4 positions."),
        ({"type": "Point", "coordinates": [True, 1]},
         "geometry: the coordinates of a Point are a position [x, y(, z)]."),
        ({"type": "MultiPoint", "coordinates": [[0, 0], "x"]},
         "geometry: the coordinates of a MultiPoint are a list of positions."),
        ({"type": "Polygon", "coordinates": [[0, 0], [1, 0], [1, 1], [0, 0]]},
         "geometry: the coordinates of a Polygon are a list of linear rings, each a closed list "
         "of at least 4 positions."),
        ({"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]], [[0, 0]]]},
         "geometry: the coordinates of a MultiLineString are a list of lines, each a list of at "
         "least 2 positions."),
        ({"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [0, 0]]]]},
         "geometry: the coordinates of a MultiPolygon are a list of polygons, each a list of "
         "closed rings of at least 4 positions."),
        ({"type": "Point"}, "geometry: a Point has coordinates."),
        ({"type": "GeometryCollection", "geometries": [
            {"type": "Point", "coordinates": [0, 0]}, {"type": "LineString", "coordinates": []}]},
         "geometry: the coordinates of a LineString are a list of at least 2 positions."),
        ({"type": "GeometryCollection"}, "geometry: a GeometryCollection has geometries."),
    ])
    def test_invalid(self, geometry, problem):
        assert geometry_problem(geometry) == problem

    @pytest.mark.parametrize("geometry", [
        {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]] * 2},
        {"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1], [2, 2], [3, 3]]] * 2},
        {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]]] * 2},
        {"type": "LineString", "coordinates": [[0, 0]] * 8},
        {"type": "GeometryCollection", "geometries": [
            {"type": "Point", "coordinates": [0, 0]}, {"type": "MultiPoint",
                                                       "coordinates": [[0, 0]] * 7}]},
    ])
    def test_positions_are_limited(self, geometry, monkeypatch):
        assert geometry_problem(geometry) is None
        monkeypatch.setattr(rules, "MAX_POSITIONS", 7)
        assert geometry_problem(geometry) == "geometry: more than 7 positions."

    def test_bounding_box(self):
        assert bounding_box({"type": "Polygon", "coordinates": [
            [[1, 43], [2, 43], [2, 44], [1, 44], [1, 43]]]}) == (1, 43, 2, 44)
        assert bounding_box({"type": "GeometryCollection", "geometries": [
            {"type": "Point", "coordinates": [5, 6]},
            {"type": "Point", "coordinates": [-1, 8]}]}) == (-1, 6, 5, 8)
        assert bounding_box(None) is None


def _file(storage, url="file:///x", **attributes):
    return {"locations": [{"storage": storage, "url": url}],
            "attributes": {"filename": "f", "algorithm": "MD5", "checksum": "0" * 32,
                           "filesize": 1, **attributes}}


class TestFiles:
    def test_referenced_and_stored_are_fine_alone(self):
        assert files_problem([_file("archive")], storages=[]) is None
        assert files_problem([_file(None)], storages=[{"pluginBusinessId": "disk"}]) is None

    def test_at_most_100_of_a_kind(self):
        files = [_file("a", checksum=f"{i:032x}") for i in range(101)]
        assert files_problem(files, storages=[]) == (
            "At most 100 files to store and 100 files to reference per feature.")

    def test_algorithm_names(self):
        sha = {"algorithm": "sha256", "checksum": "a" * 64}
        assert files_problem([_file("a", **sha)], storages=[]) is None

    def test_stored_files_need_fetchable_urls(self):
        assert files_problem([_file(None, url="s3://bucket/key")],
                             storages=[{"pluginBusinessId": "d"}]) == (
            "File 'f': 's3://bucket/key' cannot be fetched to be stored (file, http and https "
            "URLs only).")

    @pytest.mark.parametrize(("url", "problem"), [
        ("http:///path", "has no host"), ("file:relative", "is not an absolute file path"),
        ("no-scheme", "has no scheme"), ("https://ok.example/x", None)])
    def test_url_problem(self, url, problem):
        assert url_problem(url) == problem


class TestCompiledModel:
    MODEL = CompiledModel(ModelDefinition("m", None, {
        "type": "object", "required": ["a"],
        "properties": {"a": {"type": "integer", "x-alterable": False},
                       "b": {"type": "string"}}}, 1, "project"))

    def test_creation(self):
        assert self.MODEL.creation_problem({"a": 1}) is None
        assert self.MODEL.creation_problem({}) == "Missing required property 'a' of model 'm'."
        assert self.MODEL.creation_problem({"a": 1, "c": 2}) == (
            "Property 'c' isn't expected by the model 'm'.")

    def test_names_the_unexpected_property_before_other_errors(self):
        assert self.MODEL.creation_problem({"a": "one", "c": 2}) == (
            "Property 'c' isn't expected by the model 'm'.")

    @pytest.mark.parametrize(("extra", "accepted"), [
        ({"additionalProperties": True}, True),
        ({"additionalProperties": {"type": "integer"}}, True),
        ({"additionalProperties": False}, False),
        # Names matching patternProperties are still not declared properties: refused.
        ({"patternProperties": {"^c": {"type": "integer"}}}, False)])
    def test_undeclared_properties_follow_additional_properties(self, extra, accepted):
        model = CompiledModel(ModelDefinition("m", None, {
            "type": "object", "properties": {"a": {"type": "integer"}}, **extra}, 1, "project"))
        assert model.creation_problem({"a": 1}) is None
        assert (model.creation_problem({"a": 1, "c": 2}) is None) is accepted

    def test_patch(self):
        assert self.MODEL.patch_problem({"b": "x"}) is None
        assert self.MODEL.patch_problem({"b": None}) is None
        assert self.MODEL.patch_problem({"a": 2}) == (
            "Property 'a' of model 'm' cannot be patched (x-alterable: false).")
        assert self.MODEL.patch_problem({"b": 3}) == (
            "Property 'b' of model 'm': 3 is not of type \"string\".")
