"""rs-fem fixtures: the example model registered in the test's project, sample features and
bodies, a synchronous worker run."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from featurehub.services.fem.worker import process_pending
from featurehub.settings import REPO_ROOT

BASE = "/rs-fem/api/v1"
EXAMPLES = REPO_ROOT / "examples"
SAMPLE_MODEL = json.loads((EXAMPLES / "models" / "sample_product.json").read_text())
SAMPLE_COLLECTION = json.loads((EXAMPLES / "sample-collection.json").read_text())
SAMPLE_FEATURE = SAMPLE_COLLECTION["features"][0]


def feature(provider_id: str = "product-1", **changes: Any) -> dict[str, Any]:
    """The README's sample feature with another id, and changes (None removes a member)."""
    item = copy.deepcopy(SAMPLE_FEATURE)
    item["id"] = provider_id
    for name, value in changes.items():
        if value is None:
            item.pop(name, None)
        else:
            item[name] = value
    return item


def properties(**changes: Any) -> dict[str, Any]:
    values = copy.deepcopy(SAMPLE_FEATURE["properties"])
    for name, value in changes.items():
        if value is None:
            values.pop(name, None)
        else:
            values[name] = value
    return values


def creation(*features: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    return {"type": "FeatureCollection", "requestOwner": "tests",
            "metadata": {"session": "session-1", "sessionOwner": "owner-1", "storages": [],
                         **metadata},
            "features": list(features)}


def patch_body(*features: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    return {"type": "FeatureCollection", "requestOwner": "patcher",
            "metadata": {"priority": "NORMAL", "storages": [], **metadata},
            "features": list(features)}


@pytest.fixture
def exploit(as_role: Callable[[str], dict[str, str]]) -> dict[str, str]:
    return as_role("EXPLOIT")


@pytest.fixture
def sample_model(client: Any, as_role: Callable[[str], dict[str, str]]) -> dict[str, Any]:
    """The example model, registered in the test's project."""
    response = client.put(f"{BASE}/models/sample_product", json=SAMPLE_MODEL,
                          headers=as_role("ADMIN"))
    assert response.status_code == 200, response.text
    return response.json()["content"]


@pytest.fixture
def process(rt: Any) -> Callable[[], int]:
    """Run the worker until nothing is pending; the number of requests processed."""
    return lambda: process_pending(rt)


@pytest.fixture
def create(client: Any, exploit: dict[str, str], sample_model: dict[str, Any],
           process: Callable[[], int]) -> Callable[..., dict[str, Any]]:
    """Create features and process them; the stored features by id."""

    def run(*features: dict[str, Any], **metadata: Any) -> dict[str, Any]:
        response = client.post(f"{BASE}/features", json=creation(*features, **metadata),
                               headers=exploit)
        assert response.status_code == 201, response.text
        assert response.json()["denied"] == {}, response.json()
        process()
        found = {}
        for request_id in response.json()["granted"].values():
            request = client.get(f"{BASE}/requests/{request_id}", headers=exploit).json()
            assert request["content"]["state"] == "SUCCESS", request
            urn = request["content"]["urn"]
            found[request["content"]["providerId"]] = client.get(
                f"{BASE}/admin/features/{urn}", headers=exploit).json()["content"]
        return found

    return run
