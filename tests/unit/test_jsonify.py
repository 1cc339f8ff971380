"""JSON answers: orjson writes connexion's document; what it does not take goes the usual way."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass

import flask
import pytest
from connexion.jsonifier import Jsonifier

from featurehub.jsonify import FastJsonifier


@dataclass
class Point:
    x: int


@pytest.fixture(scope="module")
def app_context():
    with flask.Flask(__name__).app_context():
        yield


@pytest.mark.parametrize("data", [
    {"b": 1, "a": [1.5, None, True, {"z": "x", "y": 12345678901234}]},
    [], {"text": "\u2028 <&> é 漢"},
    {"when": datetime.datetime(2026, 11, 23, 12, 30, tzinfo=datetime.UTC)},  # as an HTTP date
    {"big": 2 ** 70}, {"point": Point(1)},
])
def test_same_document_as_connexion(app_context, data):
    fast, usual = FastJsonifier().dumps(data), Jsonifier(flask.json, indent=2).dumps(data)
    assert json.loads(fast) == json.loads(usual)
    assert fast.endswith("\n")


def test_sorted_keys_and_indent(app_context):
    assert FastJsonifier().dumps({"b": 1, "a": {"d": 2, "c": 3}}) == (
        '{\n  "a": {\n    "c": 3,\n    "d": 2\n  },\n  "b": 1\n}\n')


def test_types_orjson_passes_through_use_connexions_encoder(app_context):
    when = datetime.datetime(2026, 11, 23, 12, 30, tzinfo=datetime.UTC)
    assert json.loads(FastJsonifier().dumps({"when": when})) == {
        "when": "Mon, 23 Nov 2026 12:30:00 GMT"}
